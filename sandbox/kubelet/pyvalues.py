"""The values and exceptions of a script run by the simulated Python interpreter, and its caps.

What `pyscript` (the walker) and `pyprocess` (the process: clock, output, modules, builtins)
share: the script's exceptions as it sees them (`PyError`, with the built-in hierarchy), the
control flow that unwinds the walker (`Stop` ends interpretation with one log line, `Repeat`
marks a loop that repeats forever), the values a script can hold beyond Python's own plain
ones (its functions, modules, open files, streams, and the callables the interpreter provides),
which methods of str/list/dict a script may call, and the guards that keep every value small.
Pure and small: no AST walking here, nothing of the container.
"""

from __future__ import annotations

import ast
import string
import time  # only its pure formatting, of the container's clock
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

MAX_STEPS = 50_000  # statements and expressions evaluated
MAX_LINES = 1_000  # lines printed
MAX_CHARS = 100_000  # characters printed
MAX_ITEMS = 100_000  # length of a string, list or iterable a builtin may build
MAX_SOURCE = 200_000  # characters of script text
MAX_DEPTH = 50  # nested calls of the script's functions
EPOCH = 1_767_225_600.0  # what time.time() answers at the container's start (2026-01-01)
MODULES = frozenset({"time", "os", "sys", "json", "math", "random"})

Line = tuple[float, str]
ReadFile = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Outcome:
    """What the script visibly did: its lines and how it ended (`seconds` None: still running,
    and, with `loop`, printing those lines every `loop_period` s from `loop_start` on)."""

    lines: tuple[Line, ...]
    seconds: float | None
    exit_code: int = 0
    loop: tuple[str, ...] = ()
    loop_period: float = 0.0
    loop_start: float = 0.0


def unsupported(language: str, what: str) -> str:
    return f"sandbox: {language} script uses '{what}', which the simulated interpreter does not run"


# -- the script's exceptions and control flow ---------------------------------------------------

PARENTS = {
    "BaseException": "",
    "Exception": "BaseException",
    "SystemExit": "BaseException",
    "KeyboardInterrupt": "BaseException",
    "ArithmeticError": "Exception",
    "ZeroDivisionError": "ArithmeticError",
    "OverflowError": "ArithmeticError",
    "LookupError": "Exception",
    "KeyError": "LookupError",
    "IndexError": "LookupError",
    "OSError": "Exception",
    "FileNotFoundError": "OSError",
    "PermissionError": "OSError",
    "ConnectionError": "OSError",
    "ConnectionRefusedError": "ConnectionError",
    "TimeoutError": "OSError",
    "RuntimeError": "Exception",
    "NotImplementedError": "RuntimeError",
    "RecursionError": "RuntimeError",
    "ValueError": "Exception",
    "JSONDecodeError": "ValueError",
    "UnicodeDecodeError": "ValueError",
    "TypeError": "Exception",
    "NameError": "Exception",
    "UnboundLocalError": "NameError",
    "AttributeError": "Exception",
    "AssertionError": "Exception",
    "ImportError": "Exception",
    "ModuleNotFoundError": "ImportError",
    "StopIteration": "Exception",
    "MemoryError": "Exception",
    "EOFError": "Exception",
}
NATIVE_ERRORS = (ArithmeticError, LookupError, TypeError, ValueError, AttributeError, OSError)


class PyError(Exception):
    """An exception raised inside the script, as the script sees it."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(message)
        self.kind, self.message = kind, message
        self.frames: list[tuple[str, int]] | None = None  # (function, line) when raised

    def __str__(self) -> str:
        return self.message

    def is_a(self, kind: str) -> bool:
        current = self.kind
        while current:
            if current == kind:
                return True
            current = PARENTS.get(current, "Exception" if current != "Exception" else "")
        return False


@dataclass(frozen=True)
class ErrorClass:
    name: str

    def __call__(self, *args: Any) -> PyError:
        return PyError(self.name, str(args[0]) if len(args) == 1 else str(args) if args else "")


class ExitRequest(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class Stop(Exception):
    """Interpretation ends here (an unsupported feature, a cap); the process runs on, idle."""

    def __init__(self, line: str) -> None:
        self.line = line


class Repeat(Exception):
    def __init__(self, start: float, period: float, first: int) -> None:
        self.start, self.period, self.first = start, period, first


class BreakLoop(Exception):
    pass


class ContinueLoop(Exception):
    pass


class Returned(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


# -- the script's values ------------------------------------------------------------------------


@dataclass
class Frame:
    name: str
    names: dict[str, Any]
    parent: Frame | None = None  # the defining function (closures) or comprehension's owner
    line: int = 0
    declared_global: set[str] = field(default_factory=set)


@dataclass(eq=False)
class Function:
    name: str
    node: ast.FunctionDef
    defaults: list[Any]
    closure: Frame | None


@dataclass(frozen=True)
class Module:
    name: str


@dataclass(eq=False)
class File:
    text: str
    position: int = 0

    def read(self, size: int = -1) -> str:
        end = len(self.text) if size < 0 else self.position + size
        chunk, self.position = self.text[self.position : end], min(end, len(self.text))
        return chunk

    def readline(self) -> str:
        end = self.text.find("\n", self.position)
        return self.read(-1 if end < 0 else end + 1 - self.position)

    def readlines(self) -> list[str]:
        return self.read().splitlines(keepends=True)

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class Stream:
    name: str  # "stdout" | "stderr"


METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        [
            "upper",
            "lower",
            "strip",
            "lstrip",
            "rstrip",
            "split",
            "rsplit",
            "splitlines",
            "join",
            "replace",
            "startswith",
            "endswith",
            "find",
            "rfind",
            "index",
            "count",
            "format",
            "title",
            "capitalize",
            "isdigit",
            "isalpha",
            "isalnum",
            "isspace",
            "isupper",
            "islower",
            "zfill",
            "ljust",
            "rjust",
            "center",
            "partition",
            "rpartition",
            "removeprefix",
            "removesuffix",
        ]
    ),
    list: frozenset(
        [
            "append",
            "extend",
            "pop",
            "insert",
            "remove",
            "index",
            "count",
            "sort",
            "reverse",
            "copy",
            "clear",
        ]
    ),
    dict: frozenset(
        ["get", "keys", "values", "items", "pop", "setdefault", "update", "copy", "clear"]
    ),
    tuple: frozenset({"index", "count"}),
    set: frozenset(
        [
            "add",
            "discard",
            "remove",
            "pop",
            "union",
            "intersection",
            "difference",
            "update",
            "clear",
        ]
    ),
    float: frozenset({"is_integer"}),
    File: frozenset({"read", "readline", "readlines", "close"}),
}
WIDTH_METHODS = frozenset({"zfill", "ljust", "rjust", "center"})
MATH = frozenset(
    [
        "sqrt",
        "floor",
        "ceil",
        "pi",
        "e",
        "inf",
        "nan",
        "pow",
        "log",
        "log2",
        "log10",
        "exp",
        "sin",
        "cos",
        "tan",
        "fabs",
        "isclose",
        "isnan",
        "isinf",
        "hypot",
        "trunc",
        "gcd",
        "atan2",
        "radians",
        "degrees",
    ]
)
RANDOM = frozenset(["random", "randint", "choice", "uniform", "shuffle", "sample", "randrange"])


@dataclass(frozen=True)
class Bound:
    """A callable the interpreter itself provides (a builtin, a module function, a method)."""

    call: Callable[..., Any]
    kind: type | None = None  # the type it converts to, for isinstance()


def is_instance(value: Any, kinds: Any) -> bool:
    for kind in kinds if isinstance(kinds, tuple) else (kinds,):
        if isinstance(kind, Bound) and kind.kind is not None and isinstance(value, kind.kind):
            return True
        if isinstance(kind, ErrorClass) and isinstance(value, PyError) and value.is_a(kind.name):
            return True
    return False


def as_text(value: Any = "") -> str:
    if isinstance(value, Function):
        return f"<function {value.name}>"
    if isinstance(value, Module):
        return f"<module '{value.name}'>"
    if isinstance(value, ErrorClass):
        return f"<class '{value.name}'>"
    if isinstance(value, Bound | Stream | File):
        return f"<{type(value).__name__.strip('_').lower()}>"
    return checked(str(value))


def format_template(template: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    for _, field_name, _, _ in string.Formatter().parse(template):
        if field_name and ("." in field_name or "[" in field_name):
            raise Stop(unsupported("python", "attribute access in str.format"))
    return checked(
        template.format(
            *[as_text(a) if not isinstance(a, int | float) else a for a in args], **kwargs
        )
    )


def strftime(fmt: str, moment: float) -> str:
    return time.strftime(fmt, time.gmtime(moment))


def width(width: Any) -> Any:
    if isinstance(width, int) and width > MAX_ITEMS:
        raise PyError("MemoryError", "value too large for the simulated interpreter")
    return width


def bounded(value: Any) -> Any:
    """`value` if it is small enough to hand to a builtin; an iterator becomes a list."""
    if isinstance(value, str | list | tuple | dict | set | range):
        if len(value) > MAX_ITEMS:
            raise PyError("MemoryError", "value too large for the simulated interpreter")
        return value
    if isinstance(value, File):
        return value.readlines()
    return value


def guard_operands(operator: str, left: Any, right: Any) -> None:
    """Refuse `left <operator> right` (an `ast` operator's name) when the result would be huge."""
    huge = False
    if operator == "Pow" and isinstance(left, int) and isinstance(right, int) and right > 0:
        huge = abs(left).bit_length() * right > 64_000
    elif operator == "LShift" and isinstance(right, int):
        huge = right > 64_000
    elif operator == "Mult":
        for sized, count in ((left, right), (right, left)):
            if isinstance(sized, str | list | tuple) and isinstance(count, int):
                huge = huge or len(sized) * count > MAX_ITEMS
    if huge:
        raise PyError("MemoryError", "value too large for the simulated interpreter")


def checked(value: T) -> T:
    check_size(value)
    return value


def check_size(value: Any) -> None:
    if isinstance(value, str | list | tuple | dict | set) and len(value) > MAX_ITEMS:
        raise PyError("MemoryError", "value too large for the simulated interpreter")


def freeze(value: Any, budget: list[int]) -> Any:
    """A comparable snapshot of `value`; spends `budget` (gone below zero: too big)."""
    budget[0] -= 1
    if budget[0] <= 0:
        return None
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(freeze(v, budget) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((freeze(k, budget), freeze(v, budget)) for k, v in value.items()))
    if isinstance(value, set):
        return ("set", tuple(sorted(repr(v) for v in value)))
    if isinstance(value, File):
        return ("file", id(value), value.position)
    if isinstance(value, PyError):
        return ("error", value.kind, value.message)
    if isinstance(value, Function | Bound):
        return ("object", id(value))
    return (type(value).__name__, value)
