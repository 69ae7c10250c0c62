"""The text form of label selectors (`app=web,tier in (a,b),!canary,n>3`): lexer and parser.

A recursive-descent parser over Kubernetes' grammar, keeping its quirks (`in ()` and empty list
slots mean the empty value; `in` and `notin` are keywords only in operator position), with
errors worded like Kubernetes' plus the column where parsing stopped.
Knows nothing of objects or HTTP beyond raising BadRequest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NoReturn

from sandbox.errors import BadRequest
from sandbox.selectors.requirements import Operator, Requirement, requirement
from sandbox.validation.causes import render

_BINARY: dict[str, Operator] = {
    "=": "=",
    "==": "=",
    "!=": "!=",
    ">": "gt",
    "<": "lt",
    "in": "in",
    "notin": "notin",
}

TokenKind = Literal["ident", "!", "op", "(", ")", ",", "end"]
_WHITESPACE = frozenset(" \t\r\n")
_SPECIAL = frozenset("=!(),<>")
_PUNCTUATION: dict[str, TokenKind] = {"!": "!", "(": "(", ")": ")", ",": ","}


@dataclass(frozen=True)
class _Token:
    kind: TokenKind
    text: str
    position: int

    def shown(self) -> str:
        return "end of string" if self.kind == "end" else f"'{self.text}'"


def _lex(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _WHITESPACE:
            i += 1
        elif char in _SPECIAL:
            symbol = text[i : i + 2] if text[i : i + 2] in ("!=", "==") else char
            tokens.append(_Token(_PUNCTUATION.get(symbol, "op"), symbol, i))
            i += len(symbol)
        else:
            start = i
            while i < len(text) and text[i] not in _WHITESPACE and text[i] not in _SPECIAL:
                i += 1
            tokens.append(_Token("ident", text[start:i], start))
    tokens.append(_Token("end", "", len(text)))
    return tokens


class _SyntaxError(Exception):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _lex(text)
        self.index = 0

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def fail(self, token: _Token, expected: str) -> NoReturn:
        raise _SyntaxError(f"found {token.shown()}, expected: {expected}", token.position)

    def parse(self) -> list[Requirement]:
        try:
            return self._requirements()
        except _SyntaxError as err:
            where = f"column {err.position + 1} of {render(self.text)}"
            raise BadRequest(f"{err.message} ({where})") from None

    def _requirements(self) -> list[Requirement]:
        found: list[Requirement] = []
        if self.peek().kind == "end":
            return found
        if self.peek().kind not in ("ident", "!"):
            self.fail(self.peek(), "!, identifier, or 'end of string'")
        while True:
            found.append(self._requirement())
            token = self.take()
            if token.kind == "end":
                return found
            if token.kind != ",":
                self.fail(token, "',' or 'end of string'")
            if self.peek().kind not in ("ident", "!"):
                self.fail(self.peek(), "identifier after ','")

    def _requirement(self) -> Requirement:
        start = self.peek().position
        try:
            key, operator = self._key_and_operator()
            values: tuple[str, ...] = ()
            if operator is None:
                operator = self._operator()
                values = self._value_set() if operator in ("in", "notin") else self._exact()
            return requirement(key, operator, values)
        except _SyntaxError as err:
            raise _SyntaxError(
                "unable to parse requirement: " + err.message, err.position
            ) from None
        except ValueError as err:
            raise _SyntaxError(f"unable to parse requirement: {err}", start) from None

    def _key_and_operator(self) -> tuple[str, Operator | None]:
        token = self.take()
        operator: Operator | None = None
        if token.kind == "!":
            operator = "!"
            token = self.take()
        if token.kind != "ident":
            self.fail(token, "identifier")
        if operator is None and self.peek().kind in ("end", ","):
            operator = "exists"
        return token.text, operator

    def _operator(self) -> Operator:
        token = self.take()
        operator = _BINARY.get(token.text) if token.kind in ("op", "ident") else None
        if operator is None:
            self.fail(token, "in, notin, =, ==, !=, gt, lt")
        return operator

    def _exact(self) -> tuple[str, ...]:
        if self.peek().kind in ("end", ","):
            return ("",)
        token = self.take()
        if token.kind != "ident":
            self.fail(token, "identifier")
        return (token.text,)

    def _value_set(self) -> tuple[str, ...]:
        token = self.take()
        if token.kind != "(":
            self.fail(token, "'('")
        if self.peek().kind == ")":
            self.take()
            return ("",)  # `in ()` means the empty value, as in Kubernetes
        if self.peek().kind not in ("ident", ","):
            self.fail(self.peek(), "',', ')' or identifier")
        values = self._identifiers()
        self.take()  # the ')' that _identifiers stopped at
        return values

    def _identifiers(self) -> tuple[str, ...]:
        # Empty slots (`(,a)`, `(a,)`, `(a,,b)`) stand for the empty value, as in Kubernetes.
        values: list[str] = []
        while True:
            token = self.take()
            if token.kind == "ident":
                values.append(token.text)
                if self.peek().kind == ")":
                    return tuple(values)
                if self.peek().kind != ",":
                    self.fail(self.peek(), "',' or ')'")
            elif token.kind == ",":
                if not values:
                    values.append("")
                if self.peek().kind == ")":
                    values.append("")
                    return tuple(values)
                if self.peek().kind == ",":
                    self.take()
                    values.append("")
            else:
                self.fail(token, "',', or identifier")


def parse_requirements(text: str) -> list[Requirement]:
    """The requirements written in `text`; BadRequest says what is wrong and at which column."""
    return _LabelParser(text).parse()
