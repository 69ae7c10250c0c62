"""ChangePolicy: how changes may happen, whatever they are for (gates, not a traded concern).

    spec:
      selector: {namespaces: [shop]}
      approvals:                      # who must approve which actions
        - name: deletes
          actions: [delete]
          approvers: {groups: [shop-admins]}
          expiresAfter: 8h            # unanswered for 8h: the request expires (default 24h)
        - name: large-drains
          actions: [drain]
          when: 'action.pods > 10'
          approvers: {groups: [sre]}
          minApprovals: 2
      maintenance:                    # built-in rule maintenance-window
        actions: [drain, delete]
        windows:
          - {name: weeknights, days: [Mon, Tue, Wed, Thu], start: "22:00", end: "06:00",
             timezone: Europe/Paris}
      blastRadius:
        maxEvictionsPerHour: 20          # built-in rule max-evictions-per-hour
        maxReplicaChangeFraction: 0.5    # built-in rule max-replica-change-fraction
      directPatches: forbidden         # built-in rule direct-patches: pull requests only
      rules: [...]                     # CEL rules, rejecting or warning

The priority order never outweighs these: a change that needs approval needs it whichever concern
wins, and one outside its window waits for the window.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from core.policy.documents.common import (
    API_VERSION,
    ActionType,
    CelCondition,
    Condition,
    Duration,
    Located,
    Metadata,
    Principals,
    Rule,
    Strict,
    unique_names,
)
from core.policy.documents.selectors import TargetSelector
from core.policy.documents.windows import MaintenanceWindow

BUILT_IN_RULES = (
    "maintenance-window",
    "max-evictions-per-hour",
    "max-replica-change-fraction",
    "direct-patches",
)


class ApprovalRule(Condition):
    when: CelCondition = "true"
    approvers: Principals
    minApprovals: Annotated[int, Field(ge=1)] = 1
    # How long the approval request stays answerable; unanswered by then, it expires and the
    # proposal is rejected. None: the store's default of a day.
    expiresAfter: Duration | None = None


class Maintenance(Strict):
    actions: Annotated[list[ActionType], Field(min_length=1)]
    windows: Annotated[list[MaintenanceWindow], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique(self) -> Maintenance:
        unique_names([window.name for window in self.windows], field="windows")
        return self


class BlastRadius(Strict):
    maxEvictionsPerHour: Annotated[int, Field(ge=0)] | None = None
    maxReplicaChangeFraction: Annotated[float, Field(gt=0, le=1)] | None = None

    @model_validator(mode="after")
    def _limits_something(self) -> BlastRadius:
        if self.maxEvictionsPerHour is None and self.maxReplicaChangeFraction is None:
            raise ValueError("give maxEvictionsPerHour, maxReplicaChangeFraction or both")
        return self


class ChangeSpec(Strict):
    selector: TargetSelector = TargetSelector()
    approvals: list[ApprovalRule] = []
    maintenance: Maintenance | None = None
    blastRadius: BlastRadius | None = None
    directPatches: Literal["allowed", "forbidden"] = "allowed"
    rules: list[Rule] = []

    @model_validator(mode="after")
    def _consistent(self) -> ChangeSpec:
        unique_names([a.name for a in self.approvals], field="approvals", reserved=BUILT_IN_RULES)
        unique_names([rule.name for rule in self.rules], reserved=BUILT_IN_RULES)
        shared = {a.name for a in self.approvals} & {rule.name for rule in self.rules}
        if shared:
            index = [rule.name for rule in self.rules].index(min(shared))
            raise Located(
                ("rules", index, "name"), f"{min(shared)!r} is also the name of an approval"
            )
        return self


class ChangePolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["ChangePolicy"] = "ChangePolicy"
    metadata: Metadata
    spec: ChangeSpec
