"""`LabelSelector`: a set of requirements that all must hold, built from text or from a
`metav1.LabelSelector` object, with Kubernetes' nil-versus-empty semantics (nil matches nothing,
`{}` matches everything). Knows nothing of storage or HTTP beyond raising BadRequest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.errors import BadRequest
from sandbox.selectors.label_syntax import parse_requirements
from sandbox.selectors.requirements import Operator, Requirement, requirement, sort_key
from sandbox.validation.causes import render

_EXPRESSION_OPERATORS: dict[str, Operator] = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
}


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False  # a nil metav1.LabelSelector

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements, key=sort_key)))

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        return cls(tuple(parse_requirements(text)))

    @classmethod
    def from_object(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        if selector is None:
            return cls(matches_nothing=True)
        if not isinstance(selector, Mapping):
            raise BadRequest(f"a label selector must be an object, not {render(selector)}")
        try:
            return cls(tuple(_object_requirements(selector)))
        except ValueError as err:
            raise BadRequest(f"invalid label selector: {err}") from err

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.matches_nothing:
            return False
        present = labels or {}
        return all(req.matches(present) for req in self.requirements)

    @property
    def empty(self) -> bool:
        """True when the selector matches everything."""
        return not self.matches_nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(req) for req in self.requirements)


def _object_requirements(selector: Mapping[str, Any]) -> Iterable[Requirement]:
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        raise ValueError("matchLabels must be an object and matchExpressions a list")
    for key, value in match_labels.items():
        yield requirement(str(key), "=", [value if isinstance(value, str) else render(value)])
    for expr in expressions:
        expr = expr if isinstance(expr, Mapping) else {}
        raw = expr.get("operator")
        operator = _EXPRESSION_OPERATORS.get(raw) if isinstance(raw, str) else None
        if operator is None:
            raise ValueError(f"{render(raw)} is not a valid label selector operator")
        values = expr.get("values") or []
        if not isinstance(values, list):
            raise ValueError(f"values must be a list of strings, not {render(values)}")
        key = expr.get("key")
        yield requirement(key if isinstance(key, str) else "", operator, [str(v) for v in values])
