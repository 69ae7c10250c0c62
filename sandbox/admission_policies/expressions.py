"""CEL as admission policies run it: compiled once per text, evaluated to a value or an error.

The `cel` package (common-expression-language: Rust bindings of cel-rust) runs the expressions,
with cel-go's strings, lists, math and sets extensions registered, as Kubernetes registers them.
Kubernetes' own CEL libraries (quantity, url, ip and cidr, the authorizer, regex `find`) and the
optional-field syntax (`object.?x`) are not there: a call to them fails when it runs (and the
policy's failurePolicy decides), `.?` fails to compile. Nothing is type-checked ahead of time, so
a misspelt field is found when an expression reads it, as Kubernetes finds it for an untyped
object.

Errors are worded as kube-apiserver words them, so a denial reads the same on both:
`compilation failed: ERROR: <input>:1:4: Syntax error: ...` when a policy is written, and
`expression 'x' resulted in error: no such key: y` when one runs. Evaluation never raises.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cel
from cel.stdlib import add_stdlib_to_context

_LIBRARIES = ["core", "strings", "lists", "math", "sets"]
_PARSE_ERROR = re.compile(r"ERROR: <input>:.*", re.DOTALL)


class CompileError(ValueError):
    """The text is not CEL; the message is kube-apiserver's `compilation failed: ...`."""


@dataclass(frozen=True)
class Outcome:
    """What one expression gave: its value, or (`error` set) why it has none."""

    value: Any = None
    error: str | None = None  # `expression 'x' resulted in error: <reason>`
    reason: str = ""  # the reason alone, for the variables that other expressions read


@functools.lru_cache(maxsize=2048)
def compiled(text: str) -> cel.Program:
    try:
        return cel.compile(text)
    except ValueError as exc:
        found = _PARSE_ERROR.search(str(exc))
        detail = found.group(0).splitlines()[0] if found else str(exc).strip()
        raise CompileError(f"compilation failed: {detail}") from exc


def context(variables: Mapping[str, Any]) -> cel.Context:
    """The activation one policy's expressions run in; build one per request and policy."""
    built = cel.Context(dict(variables))
    add_stdlib_to_context(built, _LIBRARIES)
    return built


def evaluate(text: str, activation: cel.Context) -> Outcome:
    try:
        value = compiled(text).execute(activation)
    except CompileError as exc:  # a policy stored before it was checked (an old state file)
        return Outcome(error=f"expression '{text}' {exc}", reason=str(exc))
    except Exception as exc:  # cel raises KeyError, TypeError, RuntimeError, ZeroDivisionError...
        reason = _reason(exc)
        return Outcome(error=f"expression '{text}' resulted in error: {reason}", reason=reason)
    return Outcome(value)


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0] if exc.args else ''}"
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else type(exc).__name__
    return first.split(". ")[0].rstrip(".")
