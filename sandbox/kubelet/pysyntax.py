"""The syntax side of the simulated Python interpreter (`pyscript`): the operators it applies,
the names it gives the constructs it does not simulate, and a SyntaxError as Python prints it.
Pure tables and functions over `ast` nodes; no values, no process."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from sandbox.kubelet.pyvalues import Line

BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
}
COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
SYNTAX_NAMES = {
    "ClassDef": "class",
    "Lambda": "lambda",
    "AsyncFunctionDef": "async def",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield from",
    "NamedExpr": ":=",
    "Match": "match",
    "Nonlocal": "nonlocal",
}


def loaded(target: ast.expr) -> ast.expr:
    """The target of `x += 1` read as an expression."""
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    return target


def feature(node: ast.AST) -> str:
    name = type(node).__name__
    return SYNTAX_NAMES.get(name, name.lower())


def syntax_error(error: SyntaxError, filename: str) -> tuple[Line, ...]:
    lines: list[Line] = [(0.0, f'  File "{filename}", line {error.lineno or 1}')]
    if error.text:
        lines.append((0.0, "    " + error.text.strip()))
    lines.append((0.0, f"SyntaxError: {error.msg}"))
    return tuple(lines)
