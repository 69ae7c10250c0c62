"""One term of a label selector: a key, an operator and values, validated and matched.

Kubernetes' rules for a requirement (`NewRequirement`: the key is a qualified name, values are
label values, `gt`/`lt` take one integer, `in`/`notin` at least one value) and its matching
semantics live here, shared by the text parser and by `metav1.LabelSelector` conversion.
Knows nothing of selector syntax, objects or HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from sandbox.validation import names
from sandbox.validation.causes import render

Operator = Literal["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]

_OPERATOR_ORDER: tuple[Operator, ...] = ("=", "!=", "in", "notin", "exists", "!", "gt", "lt")
_INT64 = (-(2**63), 2**63 - 1)


def int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits only."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits.isascii() or not digits.isdigit():
        return None
    number = int(text)
    return number if _INT64[0] <= number <= _INT64[1] else None


@dataclass(frozen=True, order=True)
class Requirement:
    """One `key <operator> values` term; `values` is sorted and free of duplicates."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        if self.operator in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        have = int64(labels[self.key]) if present else None
        want = int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if self.operator == "gt" else have < want

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return "!" + self.key
        if self.operator in ("in", "notin"):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {"gt": ">", "lt": "<"}.get(self.operator, self.operator)
        return f"{self.key}{symbol}{self.values[0]}"


def sort_key(req: Requirement) -> tuple[str, int, tuple[str, ...]]:
    return (req.key, _OPERATOR_ORDER.index(req.operator), req.values)


def requirement_problems(key: str, operator: Operator, values: Iterable[str]) -> list[str]:
    """What Kubernetes' `NewRequirement` rejects, as `field: Invalid value: ...` messages."""
    vals = list(values)
    problems: list[str] = []
    if key_errors := names.qualified_name(key):
        problems.append(f"key: Invalid value: {render(key)}: {'; '.join(key_errors)}")
    count_rule = {
        "in": (len(vals) > 0, "for 'in', 'notin' operators, values set can't be empty"),
        "notin": (len(vals) > 0, "for 'in', 'notin' operators, values set can't be empty"),
        "=": (len(vals) == 1, "exact-match compatibility requires one single value"),
        "!=": (len(vals) == 1, "exact-match compatibility requires one single value"),
        "exists": (not vals, "values set must be empty for exists and does not exist"),
        "!": (not vals, "values set must be empty for exists and does not exist"),
        "gt": (len(vals) == 1, "for 'Gt', 'Lt' operators, exactly one value is required"),
        "lt": (len(vals) == 1, "for 'Gt', 'Lt' operators, exactly one value is required"),
    }
    ok, message = count_rule[operator]
    if not ok:
        problems.append(f"values: Invalid value: {render(vals)}: {message}")
    for i, value in enumerate(vals):
        if operator in ("gt", "lt") and int64(value) is None:
            problems.append(
                f"values[{i}]: Invalid value: {render(value)}: "
                "for 'Gt', 'Lt' operators, the value must be an integer"
            )
        if errs := names.label_value(value):
            problems.append(
                f"values[{i}][{key}]: Invalid value: {render(value)}: {'; '.join(errs)}"
            )
    return problems


def requirement(key: str, operator: Operator, values: Iterable[str]) -> Requirement:
    """A validated requirement; raises ValueError carrying Kubernetes' aggregate message."""
    vals = list(values)
    problems = requirement_problems(key, operator, vals)
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return Requirement(key, operator, tuple(sorted(set(vals))))
