"""CEL conditions: compiled once, checked when a policy loads, run as results that never raise.

Rules carry CEL (the expression language Kubernetes uses) over four variables, the documented
input every condition sees:

    action    the proposed action: type, verb, target {kind, name, namespace}, labels,
              replicas {from, to}, pods, via ("direct" or "pull-request"), actor,
              resources (resize: [{container, requests|limits: {cpu|memory: {from, to,
              from_value, to_value}}}], values in cores and bytes as doubles)
              (an unknown field is an absent key: guard with has(action.replicas))
    target    the live object as a dict ({} when none was given)
    metrics   numbers by name, all doubles (cpu_utilization: 0.1, evictions_last_hour: 4.0)
    now       the evaluation time, a timestamp

The library is `common-expression-language` (Rust bindings of cel-rust): about 1 µs per
condition on a built context (about 30 µs to build one per evaluation), against about 600 µs
for cel-python. It supports maps, lists, has(), size(), the macros, string predicates,
int/double comparison and timestamps; besides the core we register cel-go's strings, lists,
math and sets extensions. It takes no time zone in getHours() and friends, which is why
maintenance windows are typed data (`documents/windows.py`), not CEL.

A condition's text is checked at load time: syntax, functions that do not exist, and variables
the input does not have (`acton.type` is refused there, not at 3 a.m.). Evaluation turns every
failure into an `Outcome` with a reason ("no field 'replicas'"), since a bad rule must be reported
as such, never crash an evaluation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

# The CEL engine is imported where a condition is compiled or evaluated: its package also loads
# its own command line (prompt_toolkit, rich), a tenth of a second that a start-up judging no
# condition (an MCP server without policies listing its tools) should not pay.
if TYPE_CHECKING:
    import cel as celrs

VARIABLES = ("action", "target", "metrics", "now")
_LIBRARIES = ("core", "strings", "lists", "math", "sets")
_NATIVE_FUNCTIONS = frozenset(
    (
        *("size", "contains", "startsWith", "endsWith", "matches"),
        *("int", "uint", "double", "string", "bytes", "timestamp", "duration", "dyn", "type"),
        *("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear"),
        *("getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds"),
    )
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Variables bound by the comprehension macros: `list.all(c, ...)`, `map.map(k, v, ...)`.
_BOUND = re.compile(
    r"\.(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_]\w*)\s*,(?:\s*([A-Za-z_]\w*)\s*,)?"
)
_SYNTAX = re.compile(r"ERROR: <input>:(\d+):(\d+): (?:Syntax error: )?(.*)")
_NO_COERCION = "CEL mixes no types in arithmetic: write 10.0 for a double, or use double(x)"


@functools.cache
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """The functions and the namespaces a condition may name: CEL's own and the libraries'."""
    from cel.stdlib import EXTENSIONS

    names = [name for library in _LIBRARIES for name in EXTENSIONS[library]]
    functions = _NATIVE_FUNCTIONS | frozenset(name.rsplit(".", 1)[-1] for name in names)
    return functions, frozenset(name.split(".", 1)[0] for name in names if "." in name)


class CelSyntaxError(ValueError):
    """The text is not a valid condition; the message is one line, fit for a load problem."""


@dataclass(frozen=True)
class Outcome:
    """What one condition evaluated to: a boolean, or why it could not be evaluated."""

    value: bool | None
    error: str | None = None


@functools.lru_cache(maxsize=4096)
def compile_condition(text: str) -> celrs.Program:
    """The compiled program for `text`, compiled once per distinct text (checked, cached)."""
    import cel as celrs  # here: see the note on the imports

    try:
        program = celrs.compile(text)
    except ValueError as exc:
        raise CelSyntaxError(_syntax_reason(str(exc))) from exc
    _check_names(text, program)
    return program


def check(text: str) -> str:
    """Pydantic validator for condition fields: the text itself, or a ValueError saying why."""
    if not text.strip():
        raise ValueError("empty CEL condition; write a boolean expression such as 'true'")
    compile_condition(text)
    return text


def context(variables: Mapping[str, object]) -> celrs.Context:
    """A context holding the input and the extension functions; build one per evaluation."""
    import cel as celrs
    from cel.stdlib import add_stdlib_to_context

    built = celrs.Context(dict(variables))
    add_stdlib_to_context(built, list(_LIBRARIES))
    return built


def evaluate(text: str, variables: celrs.Context) -> Outcome:
    """Run one condition; any failure, including a non-boolean result, is an `Outcome.error`."""
    try:
        value = compile_condition(text).execute(variables)
    except CelSyntaxError as exc:
        return Outcome(None, str(exc))
    except KeyError as exc:
        return Outcome(None, f"no field {exc.args[0]!r} in the input")
    except ZeroDivisionError:
        return Outcome(None, "division by zero")
    except TypeError as exc:
        return Outcome(None, f"{_first_sentence(str(exc))} ({_NO_COERCION})")
    except Exception as exc:  # the bindings also raise RuntimeError and ValueError
        return Outcome(None, _first_sentence(str(exc)) or type(exc).__name__)
    if not isinstance(value, bool):
        return Outcome(None, f"the condition returned {value!r}, not true or false")
    return Outcome(value)


def _check_names(text: str, program: celrs.Program) -> None:
    functions, namespaces = _known()
    for function in program.functions():
        if _IDENTIFIER.match(function) and function not in functions:
            raise CelSyntaxError(f"unknown CEL function {function!r}")
    bound = {name for pair in _BOUND.findall(text) for name in pair if name}
    unknown = set(program.variables()) - set(VARIABLES) - namespaces - bound
    if unknown:
        raise CelSyntaxError(
            f"unknown variable {sorted(unknown)[0]!r}; the input has action, target, metrics "
            "and now"
        )


def _syntax_reason(message: str) -> str:
    found = _SYNTAX.search(message)
    if found is None:
        return f"CEL syntax error: {_first_sentence(message)}"
    line, column, reason = found.groups()
    where = f"column {column}" if line == "1" else f"line {line}, column {column}"
    return f"CEL syntax error at {where}: {reason.strip()}"


def _first_sentence(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0].split(". ")[0].rstrip(".") if lines else ""
