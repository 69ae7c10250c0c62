"""NamespaceBlueprint: what every team namespace of a class is set up with (a governance baseline).

    spec:
      namespaceSelector: {matchLabels: {kubecrew.io/class: team}}   # and/or namespaces: [shop]
      requiredLabels: [kubecrew.io/team]                            # label keys each must carry
      resourceQuota: {hard: {requests.cpu: "4", requests.memory: 8Gi, pods: "50"}}
      limitRange:                                                   # per container
        defaultRequest: {cpu: 100m, memory: 128Mi}
        default: {cpu: 500m, memory: 512Mi}
        max: {cpu: "2", memory: 2Gi}
      networkPolicy: {ingress: same-namespace}                      # or deny-all
      teamAccess: {clusterRole: edit}        # bound to the owning team's groups (Ownership)

The Platform agent renders it per covered namespace into a ResourceQuota, a LimitRange, a default
ingress NetworkPolicy and the team's RoleBinding, compares them with the live objects and fixes
drift by pull request. Quantities are Kubernetes quantities and are checked here (`2Gi`, `500m`),
so a blueprint that the API server would refuse never loads; `quantity` gives their value so a
live `0.5` and a rendered `500m` compare equal. It judges no action: evaluation skips it.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from core.policy.documents.common import API_VERSION, DnsLabel, LabelKey, Metadata, Name, Strict
from core.policy.documents.selectors import LabelSelector

_QUANTITY = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?")
_SUFFIX = {
    "": Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"), "Ki": Decimal(2**10), "Mi": Decimal(2**20),
    "Gi": Decimal(2**30), "Ti": Decimal(2**40), "Pi": Decimal(2**50), "Ei": Decimal(2**60),
}  # fmt: skip
_RESOURCE = re.compile(
    r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?"
)


def quantity(text: object) -> Decimal:
    """The value of a Kubernetes quantity (`2Gi`, `500m`, `1e3`, a bare number); ValueError if
    it is none."""
    found = _QUANTITY.fullmatch(str(text)) if isinstance(text, str | int) else None
    if found is None or isinstance(text, bool):
        raise ValueError(f"{text!r} is not a Kubernetes quantity (like 500m, 2, 512Mi or 2Gi)")
    number, suffix = found.group(1), found.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number + suffix)
        return Decimal(number) * _SUFFIX[suffix]
    except InvalidOperation as exc:
        raise ValueError(f"{text!r} is not a Kubernetes quantity ({exc})") from exc


def _as_text(value: object) -> object:
    """YAML reads `pods: 50` as a number; a quantity is written as text either way."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _quantity_text(value: str) -> str:
    quantity(value)
    return value


def _resource_name(value: str) -> str:
    if len(value) > 253 or not _RESOURCE.fullmatch(value):
        raise ValueError(f"{value!r} is not a resource name (such as cpu, requests.memory, pods)")
    return value


Quantity = Annotated[str, BeforeValidator(_as_text), AfterValidator(_quantity_text)]
ResourceName = Annotated[str, AfterValidator(_resource_name)]
Amounts = dict[ResourceName, Quantity]


class QuotaSpec(Strict):
    hard: Annotated[Amounts, Field(min_length=1)]


class LimitRangeSpec(Strict):
    """One `type: Container` item of a LimitRange: defaults and bounds per container."""

    defaultRequest: Amounts = {}
    default: Amounts = {}
    max: Amounts = {}
    min: Amounts = {}

    @model_validator(mode="after")
    def _ordered(self) -> LimitRangeSpec:
        if not (self.defaultRequest or self.default or self.max or self.min):
            raise ValueError("give at least one of defaultRequest, default, max, min")
        chain = (("min", self.min), ("defaultRequest", self.defaultRequest),
                 ("default", self.default), ("max", self.max))  # fmt: skip
        for index, (low_name, low) in enumerate(chain):
            for high_name, high in chain[index + 1 :]:
                for resource in low.keys() & high.keys():
                    if quantity(low[resource]) > quantity(high[resource]):
                        raise ValueError(
                            f"{low_name}.{resource} {low[resource]} is above "
                            f"{high_name}.{resource} {high[resource]}"
                        )
        return self


class DefaultNetworkPolicy(Strict):
    """Who may reach the namespace's pods: only its own pods, or nobody (ingress only)."""

    ingress: Literal["same-namespace", "deny-all"]


class TeamAccess(Strict):
    """The ClusterRole the owning team's groups get in their namespace by a RoleBinding."""

    clusterRole: Name = "edit"


class BlueprintSpec(Strict):
    namespaces: list[DnsLabel] | None = None
    namespaceSelector: LabelSelector | None = None
    requiredLabels: list[LabelKey] = []
    resourceQuota: QuotaSpec | None = None
    limitRange: LimitRangeSpec | None = None
    networkPolicy: DefaultNetworkPolicy | None = None
    teamAccess: TeamAccess | None = None

    @model_validator(mode="after")
    def _consistent(self) -> BlueprintSpec:
        if self.namespaces is None and self.namespaceSelector is None:
            raise ValueError("select namespaces: give namespaces, namespaceSelector or both")
        parts = (self.resourceQuota, self.limitRange, self.networkPolicy, self.teamAccess)
        if not self.requiredLabels and all(part is None for part in parts):
            raise ValueError(
                "a blueprint sets something: requiredLabels, resourceQuota, limitRange, "
                "networkPolicy or teamAccess"
            )
        return self

    def selects(self, namespace: str, namespace_labels: dict[str, str]) -> bool:
        """Either way of naming namespaces selects (names OR class), as EgressPolicy does."""
        by_name = self.namespaces is not None and namespace in self.namespaces
        by_class = self.namespaceSelector is not None and self.namespaceSelector.matches(
            namespace_labels
        )
        return by_name or by_class


class NamespaceBlueprint(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["NamespaceBlueprint"] = "NamespaceBlueprint"
    metadata: Metadata
    spec: BlueprintSpec
