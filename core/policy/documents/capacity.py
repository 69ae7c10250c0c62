"""CapacityPolicy: the capacity a workload keeps whatever anyone wants (a reliability concern).

spec:
  selector: {namespaces: [shop], kinds: [Deployment], labelSelector: {...}}
  minReplicas: 3          # built-in rule min-replicas: no scale below, no delete
  minAvailable: 2         # or "50%": built-in rule min-available, for evictions
  maxUnavailable: 1       # or "25%": built-in rule max-unavailable (not with minAvailable)
  rules:                  # CEL rules; a reject may carry the replica bounds it would accept
    - name: peak-headroom
      actions: [scale]
      when: 'now.getHours() >= 8 && now.getHours() < 20 && action.replicas.to < 4'
      counter: {minReplicas: 4}
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from core.policy.documents.common import (
    API_VERSION,
    IntOrPercent,
    Located,
    Metadata,
    Rule,
    Strict,
    unique_names,
)
from core.policy.documents.selectors import TargetSelector

BUILT_IN_RULES = ("min-replicas", "min-available", "max-unavailable")


class ReplicaCounter(Strict):
    """The replica counts a rejecting rule would accept instead: the basis of a counter-offer."""

    minReplicas: Annotated[int, Field(ge=0)] | None = None
    maxReplicas: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _bounded(self) -> ReplicaCounter:
        if self.minReplicas is None and self.maxReplicas is None:
            raise ValueError("give minReplicas, maxReplicas or both")
        low, high = self.minReplicas, self.maxReplicas
        if low is not None and high is not None and low > high:
            raise ValueError("minReplicas is larger than maxReplicas")
        return self


class CapacityRule(Rule):
    counter: ReplicaCounter | None = None


class CapacitySpec(Strict):
    selector: TargetSelector = TargetSelector()
    minReplicas: Annotated[int, Field(ge=0)] | None = None
    minAvailable: IntOrPercent | None = None
    maxUnavailable: IntOrPercent | None = None
    rules: list[CapacityRule] = []

    @model_validator(mode="after")
    def _says_something(self) -> CapacitySpec:
        if self.minAvailable is not None and self.maxUnavailable is not None:
            raise Located(
                ("maxUnavailable",),
                "give minAvailable or maxUnavailable, not both (as in a PodDisruptionBudget)",
            )
        limits = (self.minReplicas, self.minAvailable, self.maxUnavailable)
        if all(limit is None for limit in limits) and not self.rules:
            raise ValueError(
                "says nothing: give minReplicas, minAvailable, maxUnavailable or rules"
            )
        unique_names([rule.name for rule in self.rules], reserved=BUILT_IN_RULES)
        return self


class CapacityPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["CapacityPolicy"] = "CapacityPolicy"
    metadata: Metadata
    spec: CapacitySpec
