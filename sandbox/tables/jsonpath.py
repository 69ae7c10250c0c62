"""A compiled subset of Kubernetes' JSONPath: what CRD `additionalPrinterColumns` use.

Supported: `.field` (with `\\.` for a literal dot), `['key']` and `["a","b"]` (where, as in
Kubernetes, a backslash escapes the next character: `['cluster\\.x-k8s\\.io/cluster-name']`,
as Cluster API's columns write it, names the label), `[2]` and `[-1]`,
`[1:3]`, `[*]` and `.*`, `..field` (recursive descent), and filters such as
`[?(@.type=="Ready")]` (`==`, `!=`, `<`, `<=`, `>`, `>=` against a quoted string, number, `true`,
`false` or `null`) or `[?(@.field)]` (the field exists). Braces and a leading `$` are optional.

A path is parsed once into steps (`compile_path` caches by text); evaluating it walks plain JSON
values and never fails: a missing key simply yields no result, as with Kubernetes'
`AllowMissingKeys(true)`. A path that does not parse raises `ValueError`, which the caller turns
into Kubernetes' behaviour for a bad column. This module knows nothing of tables or kinds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Step = Callable[[list[Any]], list[Any]]

_OPERATORS = ("==", "!=", "<=", ">=", "<", ">")
_NAME_STOPS = frozenset(".[")
_FILTER_STOPS = frozenset(".[ \t=!<>)")


@dataclass(frozen=True)
class JsonPath:
    text: str
    steps: tuple[Step, ...]

    def find(self, value: Any) -> list[Any]:
        """Every match, in document order (empty when nothing matches)."""
        found = [value]
        for step in self.steps:
            found = step(found)
            if not found:
                break
        return found


@dataclass(frozen=True)
class _Keys:
    names: tuple[str, ...]

    def __call__(self, values: list[Any]) -> list[Any]:
        return [v[n] for v in values if isinstance(v, dict) for n in self.names if n in v]


@dataclass(frozen=True)
class _Indices:
    indices: tuple[int, ...]

    def __call__(self, values: list[Any]) -> list[Any]:
        return [
            v[i]
            for v in values
            if isinstance(v, list)
            for i in self.indices
            if -len(v) <= i < len(v)
        ]


@dataclass(frozen=True)
class _Slice:
    window: slice

    def __call__(self, values: list[Any]) -> list[Any]:
        return [item for v in values if isinstance(v, list) for item in v[self.window]]


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, list) else []


def _wildcard(values: list[Any]) -> list[Any]:
    return [child for v in values for child in _children(v)]


@dataclass(frozen=True)
class _Descend:
    """`..name`: the key at any depth, outermost first."""

    name: str

    def __call__(self, values: list[Any]) -> list[Any]:
        found: list[Any] = []
        pending = list(reversed(values))
        while pending:
            value = pending.pop()
            if isinstance(value, dict) and self.name in value:
                found.append(value[self.name])
            pending.extend(reversed(_children(value)))
        return found


@dataclass(frozen=True)
class _Filter:
    path: JsonPath
    operator: str | None
    literal: Any

    def __call__(self, values: list[Any]) -> list[Any]:
        return [item for v in values if isinstance(v, list) for item in v if self._keeps(item)]

    def _keeps(self, item: Any) -> bool:
        found = self.path.find(item)
        if self.operator is None:
            return bool(found)
        return bool(found) and _compare(found[0], self.operator, self.literal)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(left: Any, operator: str, right: Any) -> bool:
    same_kind = (_is_number(left) and _is_number(right)) or type(left) is type(right)
    if operator in ("==", "!="):
        return (same_kind and left == right) == (operator == "==")
    if not same_kind or not (_is_number(left) or isinstance(left, str)):
        return False
    if operator == "<":
        return bool(left < right)
    if operator == ">":
        return bool(left > right)
    return bool(left <= right) if operator == "<=" else bool(left >= right)


@functools.lru_cache(maxsize=1024)
def compile_path(text: str) -> JsonPath:
    """Parse once; raises ValueError when `text` is not a supported JSONPath."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    if body and body[0] not in ".[":
        body = "." + body  # tolerate `spec.size` for `.spec.size`
    parser = _Parser(body, text)
    steps = parser.steps(frozenset())
    return JsonPath(text, steps)


class _Parser:
    def __init__(self, body: str, original: str) -> None:
        self.body, self.original, self.pos = body, original, 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at offset {self.pos} in JSONPath {self.original!r}")

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.body[index] if index < len(self.body) else ""

    def expect(self, token: str) -> None:
        if not self.body.startswith(token, self.pos):
            raise self.fail(f"expected {token!r}")
        self.pos += len(token)

    def skip_spaces(self) -> None:
        while self.peek() in (" ", "\t"):
            self.pos += 1

    def steps(self, stops: frozenset[str]) -> tuple[Step, ...]:
        found: list[Step] = []
        while self.pos < len(self.body) and self.peek() not in stops - _NAME_STOPS:
            if self.body.startswith("..", self.pos):
                self.pos += 2
                found.append(_Descend(self.name(stops)))
            elif self.peek() == ".":
                self.pos += 1
                found.append(self.dotted(stops))
            elif self.peek() == "[":
                found.append(self.bracket())
            else:
                raise self.fail(f"unexpected {self.peek()!r}")
        return tuple(found)

    def dotted(self, stops: frozenset[str]) -> Step:
        if self.peek() == "*":
            self.pos += 1
            return _wildcard
        return _Keys((self.name(stops),))

    def name(self, stops: frozenset[str]) -> str:
        chars: list[str] = []
        while self.pos < len(self.body) and self.peek() not in stops | _NAME_STOPS:
            if self.peek() == "\\" and self.peek(1):
                self.pos += 1  # `\.` keeps a dot inside a key such as app\.kubernetes\.io
            chars.append(self.peek())
            self.pos += 1
        if not chars:
            raise self.fail("expected a field name")
        return "".join(chars)

    def bracket(self) -> Step:
        self.expect("[")
        self.skip_spaces()
        if self.peek() == "?":
            step: Step = self.filter()
        elif self.peek() in ("'", '"'):
            step = _Keys(tuple(self.quoted_list()))
        elif self.peek() == "*":
            self.pos += 1
            step = _wildcard
        else:
            step = self.numeric()
        self.skip_spaces()
        self.expect("]")
        return step

    def quoted_list(self) -> list[str]:
        # Kubernetes re-reads `['a\.b']` as the field `.a\.b`, which drops every backslash
        names = [self.quoted().replace("\\", "")]
        self.skip_spaces()
        while self.peek() == ",":
            self.pos += 1
            self.skip_spaces()
            names.append(self.quoted().replace("\\", ""))
            self.skip_spaces()
        return names

    def quoted(self) -> str:
        quote = self.peek()
        self.pos += 1
        end = self.body.find(quote, self.pos)
        if end < 0:
            raise self.fail("unterminated string")
        text, self.pos = self.body[self.pos : end], end + 1
        return text

    def numeric(self) -> Step:
        end = self.body.find("]", self.pos)
        if end < 0:
            raise self.fail("expected ']'")
        content, start = self.body[self.pos : end].replace(" ", ""), self.pos
        self.pos = end
        try:
            if ":" in content:
                bounds = [int(part) if part else None for part in content.split(":")]
                if len(bounds) > 3:
                    raise ValueError(content)
                return _Slice(slice(*bounds))
            return _Indices(tuple(int(part) for part in content.split(",")))
        except ValueError:
            self.pos = start
            raise self.fail(f"bad index {content!r}") from None

    def filter(self) -> _Filter:
        self.expect("?(")
        self.skip_spaces()
        self.expect("@")
        path = JsonPath(self.original, self.steps(_FILTER_STOPS))
        self.skip_spaces()
        operator = next((op for op in _OPERATORS if self.body.startswith(op, self.pos)), None)
        literal = None
        if operator is not None:
            self.pos += len(operator)
            self.skip_spaces()
            literal = self.literal()
            self.skip_spaces()
        self.expect(")")
        return _Filter(path, operator, literal)

    def literal(self) -> Any:
        if self.peek() in ("'", '"'):
            return self.quoted()
        end = self.body.find(")", self.pos)
        if end < 0:
            raise self.fail("expected ')'")
        token = self.body[self.pos : end].strip()
        constants = {"true": True, "false": False, "null": None}
        if token in constants:
            self.pos = end
            return constants[token]
        try:
            number = float(token)
        except ValueError:
            raise self.fail(f"unsupported filter operand {token!r}") from None
        self.pos = end
        return int(number) if number.is_integer() and "." not in token else number
