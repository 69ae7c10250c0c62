"""What an evaluation says: findings citing policy and rule, and the verdict they resolve to.

A `Finding` is one rule's answer about one action: it rejects (with the replica bounds it would
accept, the basis of a counter-offer), supports (cost sees a saving), warns, asks for approval,
defers to a maintenance window, passes, or could not be evaluated. Findings with a concern are
weighed by the PriorityPolicy; findings without one are ChangePolicy gates, which always hold.
These models are the dry run's output, and what proposals and decisions will cite later.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

from core.policy.actions import Action
from core.policy.documents.common import Concern, Principals

Effect = Literal["reject", "support", "warn", "require-approval", "defer", "error", "pass"]
Outcome = Literal["allow", "counter", "reject", "escalate"]
Opinion = Literal["reject", "support", "escalate", "none"]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Citation(_Result):
    kind: str
    policy: str
    rule: str

    def __str__(self) -> str:
        return f"{self.kind} {self.policy} / rule {self.rule}"


class ReplicaBounds(_Result):
    """The replica counts a rule accepts; None is unbounded on that side."""

    minimum: int | None = None
    maximum: int | None = None

    def clamp(self, replicas: int) -> int | None:
        """`replicas` moved into the bounds, or None when no count satisfies them."""
        low, high = self.minimum or 0, self.maximum
        if high is not None and low > high:
            return None
        value = max(replicas, low)
        return value if high is None else min(value, high)

    def intersect(self, other: ReplicaBounds) -> ReplicaBounds:
        lows = [b for b in (self.minimum, other.minimum) if b is not None]
        highs = [b for b in (self.maximum, other.maximum) if b is not None]
        return ReplicaBounds(minimum=max(lows, default=None), maximum=min(highs, default=None))


class Finding(_Result):
    citation: Citation
    concern: Concern | None  # None: a ChangePolicy gate, outside the priority order
    effect: Effect
    message: str
    bounds: ReplicaBounds | None = None  # reject: the replica counts this rule accepts
    via: Literal["pull-request"] | None = None  # reject: the channel this rule accepts
    approvers: Principals | None = None  # require-approval
    min_approvals: int | None = None
    expires_after: timedelta | None = None  # require-approval: how long a request stays open
    opens_at: datetime | None = None  # defer: when the next maintenance window opens
    team: str | None = None  # the team whose policy this is (its kubecrew.io/team label)

    def __str__(self) -> str:
        return f"{self.citation}: {self.message}"


class Applicability(_Result):
    kind: str
    policy: str
    reason: str  # why it applies: "selects kind Deployment in namespace shop"


class Stakeholder(_Result):
    team: str
    ownership: str
    agent: str | None = None
    humans: Principals | None = None
    owner: bool = False  # the most specific ownership of the target


class ConcernVerdict(_Result):
    concern: Concern
    opinion: Opinion
    citations: list[Citation] = []
    note: str = ""


class Counter(_Result):
    replicas: int | None = None
    via: Literal["pull-request"] | None = None

    def describe(self) -> str:
        parts = [f"replicas={self.replicas}"] if self.replicas is not None else []
        return ", ".join(parts + ([f"via={self.via}"] if self.via else []))


class ApprovalNeed(_Result):
    citation: Citation
    approvers: Principals
    min_approvals: int = 1
    expires_after: timedelta | None = None  # None: the store's default (a day)


class Verdict(_Result):
    outcome: Outcome
    counter: Counter | None = None
    approvals: list[ApprovalNeed] = []
    not_before: datetime | None = None  # outside a maintenance window: when it opens
    reasons: list[str] = []


class EvaluationReport(_Result):
    action: Action
    priority: list[Concern]
    priority_source: str  # "PriorityPolicy org-priorities", or the built-in default
    applicable: list[Applicability]
    stakeholders: list[Stakeholder]
    findings: list[Finding]
    concerns: list[ConcernVerdict]
    verdict: Verdict

    def fired(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.effect != "pass"]
