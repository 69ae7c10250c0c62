"""The process a simulated Python script runs as: its clock, its output, its modules and builtins.

A `Process` holds what the script can observe of the container and what it leaves behind: the
sandbox seconds it has slept (`time.sleep` moves the clock, `time.time` reads it), the lines it
printed on stdout and stderr (merged, as the container log shows them), its environment, the
files it may open, and the seeded dice of `random`. Modules and builtins are answered here, from
short allow-lists; anything else stops the interpretation with a line saying it is not
simulated. The caps on steps and output are counted here too. The AST walker (`pyscript`) is
built on it; this module knows no syntax.
"""

from __future__ import annotations

import json
import math
import posixpath
import random
from collections.abc import Callable, Mapping
from typing import Any

from sandbox.kubelet.pyvalues import (
    EPOCH,
    MATH,
    MAX_CHARS,
    MAX_LINES,
    MAX_STEPS,
    METHODS,
    PARENTS,
    RANDOM,
    WIDTH_METHODS,
    Bound,
    ErrorClass,
    ExitRequest,
    File,
    Line,
    Module,
    PyError,
    ReadFile,
    Stop,
    Stream,
    as_text,
    bounded,
    checked,
    format_template,
    is_instance,
    strftime,
    unsupported,
    width,
)


class Process:
    """The script's side of the container; `call_function` is the walker's to provide."""

    def __init__(
        self, source: str, filename: str, *, env: Mapping[str, str], read: ReadFile, argv: list[str]
    ) -> None:
        self.source_lines = source.splitlines()
        self.filename = filename
        self.environ = dict(env)
        self.read_file = read
        self.argv = argv
        self.rng = random.Random(0)
        self.t = 0.0
        self.lines: list[Line] = []
        self.chars = 0
        self.pending = {"stdout": "", "stderr": ""}
        self.steps = 0
        self.volatile = 0  # clock and random reads: a loop reading them is not a pure repeat
        self.builtins = self._builtins()

    def _flushed(self) -> tuple[Line, ...]:
        for stream, text in self.pending.items():
            if text:
                self.lines.append((self.t, text))
                self.pending[stream] = ""
        return tuple(self.lines)

    def _traceback(self, error: PyError) -> None:
        self._flushed()
        out = [(self.t, "Traceback (most recent call last):")]
        for name, line in error.frames or ():
            out.append((self.t, f'  File "{self.filename}", line {line}, in {name}'))
            if 0 < line <= len(self.source_lines):
                out.append((self.t, "    " + self.source_lines[line - 1].strip()))
        message = f"{error.kind}: {error.message}" if error.message else error.kind
        out.append((self.t, message))
        self.lines.extend(out)

    def _tick(self, cost: int = 1) -> None:
        self.steps += cost
        if self.steps > MAX_STEPS:
            raise Stop(
                f"sandbox: the simulated python interpreter stopped this script at its limit of "
                f"{MAX_STEPS} steps; the container keeps running without output"
            )

    def _write(self, stream: str, text: str) -> None:
        self.chars += len(text)
        buffered = self.pending[stream] + text
        *complete, self.pending[stream] = buffered.split("\n")
        for line in complete:
            if len(self.lines) >= MAX_LINES or self.chars > MAX_CHARS:
                raise Stop(
                    f"sandbox: the simulated python interpreter stopped this script at its limit "
                    f"of {MAX_LINES} lines or {MAX_CHARS} characters of output; the container "
                    "keeps running without output"
                )
            self.lines.append((self.t, line))

    # -- modules and builtins -------------------------------------------------------------------

    def _attribute(self, value: Any, name: str) -> Any:
        if isinstance(value, Module):
            return self._module_attribute(value.name, name)
        if isinstance(value, Stream) and name in ("write", "flush"):
            return Bound(
                lambda text="": self._write(value.name, str(text)) if name == "write" else None
            )
        if isinstance(value, PyError) and name == "args":
            return (value.message,)
        methods = METHODS.get(type(value), frozenset())
        if name in methods:
            method = getattr(value, name)
            if name in WIDTH_METHODS:
                return Bound(lambda given, *rest: method(width(given), *rest))
            if name == "format":
                return Bound(lambda *a, **k: format_template(value, a, k))
            return Bound(method)
        if name.startswith("_") or isinstance(value, str | list | dict | tuple | set | int | float):
            raise PyError(
                "AttributeError", f"'{type(value).__name__}' object has no attribute '{name}'"
            )
        raise Stop(unsupported("python", f".{name}"))

    def _module_attribute(self, module: str, name: str) -> Any:  # noqa: C901
        qualified = f"{module}.{name}"
        if module == "time":
            if name == "sleep":
                return Bound(self._sleep)
            if name in ("time", "monotonic", "perf_counter"):
                return Bound(self._clock)
            if name == "strftime":
                return Bound(lambda fmt: strftime(str(fmt), EPOCH + self._clock()))
        elif module == "os":
            if name == "environ":
                return self.environ
            if name == "getenv":
                return Bound(lambda key, default=None: self.environ.get(key, default))
            if name == "getcwd":
                return Bound(lambda: "/")
            if name == "path":
                return Module("os.path")
        elif module == "os.path":
            if name in ("exists", "isfile"):
                return Bound(lambda path: self.read_file(str(path)) is not None)
            if name in ("join", "basename", "dirname"):
                return Bound(getattr(posixpath, name))
        elif module == "sys":
            if name == "exit":
                return Bound(self._exit)
            if name in ("stdout", "stderr"):
                return Stream(name)
            if name == "argv":
                return list(self.argv)
        elif module == "json":
            if name in ("dumps", "loads"):
                return Bound(getattr(json, name))
            if name == "load":
                return Bound(lambda f: json.loads(f.read()))
            if name == "JSONDecodeError":
                return ErrorClass("JSONDecodeError")
        elif module == "math" and name in MATH:
            found = getattr(math, name)
            return Bound(found) if callable(found) else found
        elif module == "random" and name in RANDOM:
            return Bound(self._dice(getattr(self.rng, name)))
        raise Stop(unsupported("python", qualified))

    def _dice(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def roll(*args: Any) -> Any:
            self.volatile += 1
            return method(*args)

        return roll

    def _sleep(self, seconds: float) -> None:
        if not isinstance(seconds, int | float) or seconds < 0:
            raise PyError("ValueError", "sleep length must be non-negative")
        self.t += float(seconds)

    def _clock(self) -> float:
        self.volatile += 1
        return self.t

    def _exit(self, code: Any = None) -> None:
        if code is None:
            raise ExitRequest(0)
        if isinstance(code, int):
            raise ExitRequest(code & 0xFF)
        self._write("stderr", f"{code}\n")
        raise ExitRequest(1)

    def _print(
        self, *values: Any, sep: str = " ", end: str = "\n", file: Any = None, flush: bool = False
    ) -> None:
        stream = file.name if isinstance(file, Stream) else "stdout"
        self._write(stream, checked(str(sep).join(as_text(v) for v in values) + str(end)))

    def _open(self, path: str, mode: str = "r", **_: Any) -> File:
        if any(flag in mode for flag in "wax+"):
            raise Stop(unsupported("python", "writing files"))
        text = self.read_file(str(path))
        if text is None:
            raise PyError("FileNotFoundError", f"[Errno 2] No such file or directory: '{path}'")
        return File(text)

    def _input(self, *_: Any) -> str:
        raise PyError("EOFError", "EOF when reading a line")

    def _builtins(self) -> dict[str, Any]:
        def consuming(function: Callable[..., Any]) -> Bound:
            kind = function if isinstance(function, type) else None
            return Bound(lambda *a, **k: function(*(bounded(x) for x in a), **k), kind)

        table: dict[str, Any] = {name: ErrorClass(name) for name in PARENTS}
        table |= {
            "print": Bound(self._print),
            "open": Bound(self._open),
            "input": Bound(self._input),
            "exit": Bound(self._exit),
            "quit": Bound(self._exit),
            "len": Bound(len),
            "range": Bound(range),
            "str": Bound(as_text, str),
            "repr": Bound(repr),
            "int": Bound(int, int),
            "float": Bound(float, float),
            "bool": Bound(bool, bool),
            "abs": Bound(abs),
            "round": Bound(round),
            "divmod": Bound(divmod),
            "chr": Bound(chr),
            "ord": Bound(ord),
            "hex": Bound(hex),
            "isinstance": Bound(is_instance),
        }
        consumers: dict[str, Callable[..., Any]] = {
            "list": list,
            "tuple": tuple,
            "dict": dict,
            "set": set,
            "sorted": sorted,
            "reversed": lambda x: list(reversed(x)),
            "enumerate": lambda x, start=0: list(enumerate(x, start)),
            "zip": lambda *x: list(zip(*x, strict=False)),
            "sum": sum,
            "min": min,
            "max": max,
            "any": any,
            "all": all,
        }
        for name, function in consumers.items():
            table[name] = consuming(function)
        return table
