"""`FieldSelector`: `metadata.name=web,status.phase!=Failed` queries, and which fields each
kind may be selected by.

Values may escape `\\`, `,` and `=` with a backslash; field names cannot be escaped, so the
first operator in a term splits it. A field an object lacks compares as "", except the
booleans and counters Kubernetes renders from Go zero values ("false", "0").
Knows nothing of storage or HTTP beyond raising BadRequest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from sandbox.errors import BadRequest
from sandbox.validation.payload import path_get

_COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
_EVENT_FIELDS = frozenset(
    {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    }
)
SUPPORTED_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "Pod": frozenset(
            {
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            }
        ),
        "Event": _EVENT_FIELDS,
        "Secret": frozenset({"type"}),
        "Service": frozenset({"spec.clusterIP", "spec.type"}),
        "Node": frozenset({"spec.unschedulable"}),
        "Namespace": frozenset({"status.phase"}),
        "ReplicaSet": frozenset({"status.replicas"}),
        "ReplicationController": frozenset({"status.replicas"}),
        "Job": frozenset({"status.successful"}),
    }
)


def _flag(dotted: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda obj: "true" if path_get(obj, dotted) is True else "false"


def _count(dotted: str) -> Callable[[Mapping[str, Any]], str]:
    def read(obj: Mapping[str, Any]) -> str:
        value = path_get(obj, dotted)
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"

    return read


def _pod_ip(obj: Mapping[str, Any]) -> str:
    ips = path_get(obj, "status.podIPs")
    if isinstance(ips, list) and ips and isinstance(ips[0], Mapping):
        return _scalar(ips[0].get("ip"))
    return _scalar(path_get(obj, "status.podIP"))


# Fields whose selectable value is not simply the JSON value at the same path: Kubernetes
# renders Go zero values ("false", "0") for absent booleans and counters.
_DERIVED: Mapping[tuple[str, str], Callable[[Mapping[str, Any]], str]] = {
    ("Pod", "spec.hostNetwork"): _flag("spec.hostNetwork"),
    ("Pod", "status.podIP"): _pod_ip,
    ("Node", "spec.unschedulable"): _flag("spec.unschedulable"),
    ("ReplicaSet", "status.replicas"): _count("status.replicas"),
    ("ReplicationController", "status.replicas"): _count("status.replicas"),
    ("Job", "status.successful"): _count("status.succeeded"),
    ("Event", "source"): lambda obj: _scalar(path_get(obj, "source.component")),
}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return ""


def field_value(obj: Mapping[str, Any], name: str) -> str:
    """The value a field selector compares for `name`; "" when the field is absent."""
    derive = _DERIVED.get((str(obj.get("kind", "")), name))
    return derive(obj) if derive else _scalar(path_get(obj, name))


def escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True, order=True)
class FieldRequirement:
    field: str
    operator: Literal["=", "!="]
    value: str

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (field_value(obj, self.field) == self.value) == (self.operator == "=")

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements)))

    @classmethod
    def parse(cls, text: str) -> FieldSelector:
        found = [_field_term(text, term) for term in _split_terms(text) if term]
        return cls(tuple(found))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(req.matches(obj) for req in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def single_value(self, field: str) -> str | None:
        """The value `field` must equal, when an `=` term pins it (for watch shortcuts)."""
        for req in self.requirements:
            if req.field == field and req.operator == "=":
                return req.value
        return None

    def check_supported(self, kind: str) -> None:
        supported = SUPPORTED_FIELDS.get(kind, frozenset())
        for req in self.requirements:
            if req.field not in _COMMON_FIELDS and req.field not in supported:
                raise BadRequest(f"field label not supported: {req.field}")

    def __str__(self) -> str:
        return ",".join(str(req) for req in self.requirements)


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash; escapes stay in place for unescaping."""
    terms: list[str] = []
    start = 0
    escaped = False
    for i, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _field_term(text: str, term: str) -> FieldRequirement:
    # The first operator wins: field names cannot be escaped, values can.
    for i in range(len(term)):
        for symbol in ("!=", "==", "="):
            if term.startswith(symbol, i):
                operator: Literal["=", "!="] = "!=" if symbol == "!=" else "="
                value = _unescape(term, term[i + len(symbol) :])
                return FieldRequirement(term[:i], operator, value)
    raise BadRequest(
        f"invalid selector: '{text}'; can't understand '{term}' "
        "(expected <field>=<value>, <field>==<value> or <field>!=<value>)"
    )


def _unescape(term: str, raw: str) -> str:
    out: list[str] = []
    escaped = False
    for char in raw:
        if escaped:
            if char not in "\\,=":
                raise BadRequest(
                    f"invalid field selector: invalid escape sequence: \\{char} in '{term}' "
                    "(the only escapes are \\\\ \\, \\=)"
                )
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            raise BadRequest(
                f"invalid field selector: unescaped character in value: '{char}' in '{term}' "
                f"(write it as \\{char})"
            )
        else:
            out.append(char)
    if escaped:
        raise BadRequest(
            f"invalid field selector: invalid escape sequence: \\ at the end of '{term}'"
        )
    return "".join(out)
