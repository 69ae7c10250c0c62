"""CostPolicy: when a workload counts as underused, and which savings may be made (cost concern).

    spec:
      selector: {namespaces: [shop]}
      underused:                     # built-in rule underused
        metric: cpu_utilization      # a key of the evaluation's metrics: usage / requests
        below: 0.2                   # underused when the metric is below this
        window: 1h                   # over this window (the caller averages over it)
      allowedActions: [downscale, right-size]   # built-in rule allowed-actions
      rules:                         # CEL; effect `underused` also marks the workload underused
        - name: idle-memory
          when: 'has(metrics.memory_utilization) && metrics.memory_utilization < 0.1'
          effect: underused

A savings action is a scale down (downscale), a resize (right-size), or a drain or cordon of a
node (consolidate). The cost concern supports an allowed saving on an underused workload and
objects to a saving the policy does not allow.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from core.policy.documents.common import (
    API_VERSION,
    Condition,
    Duration,
    Metadata,
    Strict,
    unique_names,
)
from core.policy.documents.selectors import TargetSelector

Saving = Literal["downscale", "right-size", "consolidate"]
BUILT_IN_RULES = ("underused", "allowed-actions")


class Underuse(Strict):
    metric: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")] = "cpu_utilization"
    below: Annotated[float, Field(gt=0, le=1)]
    window: Duration


class CostRule(Condition):
    effect: Literal["reject", "warn", "underused"] = "reject"


class CostSpec(Strict):
    selector: TargetSelector = TargetSelector()
    underused: Underuse | None = None
    allowedActions: list[Saving] = []
    rules: list[CostRule] = []

    @model_validator(mode="after")
    def _consistent(self) -> CostSpec:
        if len(set(self.allowedActions)) != len(self.allowedActions):
            raise ValueError("an action is listed twice in allowedActions")
        if self.underused is None and not any(r.effect == "underused" for r in self.rules):
            raise ValueError(
                "says nothing about underuse: give underused or a rule with that effect"
            )
        unique_names([rule.name for rule in self.rules], reserved=BUILT_IN_RULES)
        return self


class CostPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["CostPolicy"] = "CostPolicy"
    metadata: Metadata
    spec: CostSpec
