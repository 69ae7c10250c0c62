"""Which objects a policy is about: Kubernetes label selectors, and target selectors over them.

`LabelSelector` has the exact semantics of metav1.LabelSelector (matchLabels and matchExpressions
AND-ed; `NotIn` and `DoesNotExist` hold when the key is absent; empty selects everything), so a
selector written here means what the same selector means to kubectl and to the NetworkPolicies the
Platform agent renders from EgressPolicies. Matching takes plain kind, namespace and labels, so
this module knows nothing of actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import model_validator

from core.policy.documents.common import DnsLabel, Kind, LabelKey, Labels, LabelValue, Strict


class Requirement(Strict):
    key: LabelKey
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[LabelValue] = []

    @model_validator(mode="after")
    def _values_fit_operator(self) -> Requirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            return labels.get(self.key) not in self.values
        return (self.key in labels) == (self.operator == "Exists")

    def describe(self) -> str:
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        verb = "in" if self.operator == "In" else "notin"
        return f"{self.key} {verb} ({','.join(self.values)})"


class LabelSelector(Strict):
    matchLabels: Labels = {}
    matchExpressions: list[Requirement] = []

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key) == value for key, value in self.matchLabels.items()) and all(
            requirement.matches(labels) for requirement in self.matchExpressions
        )

    def describe(self) -> str:
        """kubectl's selector syntax: `app=web,tier in (a,b),!legacy`."""
        parts = [f"{key}={value}" for key, value in self.matchLabels.items()]
        return ",".join(parts + [r.describe() for r in self.matchExpressions]) or "everything"


class TargetSelector(Strict):
    """Objects by namespace, kind and labels; an omitted field does not narrow the selection.

    With `namespaces` set, cluster-scoped objects (nodes) are not selected.
    """

    namespaces: list[DnsLabel] | None = None
    kinds: list[Kind] | None = None
    labelSelector: LabelSelector | None = None

    def matches(self, *, kind: str, namespace: str | None, labels: Mapping[str, str]) -> bool:
        if self.namespaces is not None and namespace not in self.namespaces:
            return False
        if self.kinds is not None and kind not in self.kinds:
            return False
        return self.labelSelector is None or self.labelSelector.matches(labels)

    def describe(self) -> str:
        """`Deployment or StatefulSet in namespace shop with labels app=web`."""
        text = " or ".join(self.kinds) if self.kinds is not None else "every object"
        if self.namespaces is not None:
            text += " in namespace " + " or ".join(self.namespaces)
        if self.labelSelector is not None:
            text += f" with labels {self.labelSelector.describe()}"
        return text

    @property
    def specificity(self) -> int:
        """How narrow this selector is; of several matching Ownerships the narrowest owns.

        Naming kinds (2) is narrower than naming namespaces (1): "who owns NetworkPolicies" beats
        "who owns namespace shop". Each label requirement adds 1.
        """
        labels = self.labelSelector
        requirements = len(labels.matchLabels) + len(labels.matchExpressions) if labels else 0
        return (self.namespaces is not None) + 2 * (self.kinds is not None) + requirements
