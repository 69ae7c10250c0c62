"""Shell arithmetic, `$((...))`: integers only, as BusyBox ash evaluates it.

Understood: decimal, hex (`0x1f`) and octal (`017`) numbers; variables by name with or without
`$` (an unset or empty one is 0, a non-numeric one is an error); unary `+ - ! ~`; `* / % + -`,
`<< >>`, comparisons, `== !=`, `& ^ |`, `&& ||` (short-circuit), `?:`, parentheses, and the
assignments `= += -= *= /= %=`. Errors are ash's (`divide by zero`, `arithmetic syntax error`)
and raise `ArithmeticFailure`, which the shell reports as `sh: ...` with status 2. Values wrap
at 64 bits as the C shell's do. Pure: the caller hands in how to read and set a variable.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(
    r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|\$?([A-Za-z_][A-Za-z0-9_]*)"
    r"|(<<=|>>=|\+=|-=|\*=|/=|%=|&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%<>=!~&^|?:()]))"
)
_BINARY: list[tuple[str, ...]] = [  # lowest precedence first
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
]
_ASSIGNING = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=")
_MAX_DEPTH = 100


class ArithmeticFailure(Exception):
    """What ash prints after `sh: ` when an arithmetic expansion fails."""


def _wrap(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def number(text: str) -> int:
    """A variable's text as arithmetic reads it."""
    text = text.strip()
    if not text:
        return 0
    try:
        if text.lower().startswith(("0x", "-0x")):
            return _wrap(int(text, 16))
        if len(text.lstrip("-")) > 1 and text.lstrip("-").startswith("0"):
            return _wrap(int(text, 8))
        return _wrap(int(text))
    except ValueError:
        raise ArithmeticFailure("arithmetic syntax error") from None


def evaluate(text: str, get: Callable[[str], str], set_: Callable[[str, str], None]) -> int:
    tokens: list[str | int] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip():
                raise ArithmeticFailure("arithmetic syntax error")
            break
        position = match.end()
        if match.group(1):
            tokens.append(number(match.group(1)))
        elif match.group(2):
            tokens.append("$" + match.group(2))  # a name, read when it is used
        else:
            tokens.append(match.group(3))
    if not tokens:
        return 0
    parser = _Parser(tokens, get, set_)
    value = parser.assignment(True)
    if parser.position != len(tokens):
        raise ArithmeticFailure("arithmetic syntax error")
    return value


class _Parser:
    def __init__(
        self, tokens: list[str | int], get: Callable[[str], str], set_: Callable[[str, str], None]
    ) -> None:
        self.tokens, self.position, self.depth = tokens, 0, 0
        self.get, self.set = get, set_

    def _peek(self) -> str | int | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> str | int:
        token = self._peek()
        if token is None:
            raise ArithmeticFailure("arithmetic syntax error")
        self.position += 1
        return token

    def assignment(self, live: bool) -> int:
        token = self._peek()
        following = self.tokens[self.position + 1] if self.position + 1 < len(self.tokens) else None
        if isinstance(token, str) and token.startswith("$") and following in _ASSIGNING:
            self.position += 2
            value = self.assignment(live)
            if following != "=":
                value = _apply(str(following)[:-1], self._variable(token, live), value, live)
            if live:
                self.set(token[1:], str(value))
            return value
        return self._ternary(live)

    def _ternary(self, live: bool) -> int:
        condition = self._binary(0, live)
        if self._peek() != "?":
            return condition
        self._take()
        yes = self.assignment(live and condition != 0)
        if self._take() != ":":
            raise ArithmeticFailure("arithmetic syntax error")
        no = self.assignment(live and condition == 0)
        return yes if condition else no

    def _binary(self, level: int, live: bool) -> int:
        if level == len(_BINARY):
            return self._unary(live)
        left = self._binary(level + 1, live)
        while (op := self._peek()) in _BINARY[level]:
            self._take()
            if op in ("&&", "||"):
                short = (left == 0) if op == "&&" else (left != 0)
                right = self._binary(level + 1, live and not short)
                left = int(bool(left) and bool(right)) if op == "&&" else int(bool(left or right))
            else:
                left = _apply(str(op), left, self._binary(level + 1, live), live)
        return left

    def _unary(self, live: bool) -> int:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ArithmeticFailure("arithmetic syntax error")
        token = self._take()
        if token in ("-", "+", "!", "~"):
            value = self._unary(live)
            result = {"-": -value, "+": value, "!": int(value == 0), "~": ~value}[str(token)]
        elif token == "(":
            result = self.assignment(live)
            if self._take() != ")":
                raise ArithmeticFailure("arithmetic syntax error")
        elif isinstance(token, int):
            result = token
        elif token.startswith("$"):
            result = self._variable(token, live)
        else:
            raise ArithmeticFailure("arithmetic syntax error")
        self.depth -= 1
        return _wrap(result)

    def _variable(self, token: str, live: bool) -> int:
        return number(self.get(token[1:])) if live else 0


def _apply(op: str, left: int, right: int, live: bool) -> int:
    if op in ("/", "%") and right == 0:
        if not live:
            return 0
        raise ArithmeticFailure("divide by zero")
    if op == "/":
        return _wrap(abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1))
    if op == "%":
        return _wrap(left - right * _apply("/", left, right, live))
    operations: dict[str, Callable[[int, int], int]] = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "<<": lambda a, b: a << (b & 63),
        ">>": lambda a, b: a >> (b & 63),
        "<": lambda a, b: int(a < b),
        "<=": lambda a, b: int(a <= b),
        ">": lambda a, b: int(a > b),
        ">=": lambda a, b: int(a >= b),
        "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b),
        "&": lambda a, b: a & b,
        "^": lambda a, b: a ^ b,
        "|": lambda a, b: a | b,
    }
    return _wrap(operations[op](left, right))
