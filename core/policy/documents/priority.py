"""PriorityPolicy and Ownership: how conflicts between concerns resolve, and who owns what.

    kind: PriorityPolicy
    spec:
      order: [security, reliability, cost]      # first outranks the rest
      tieBreaks: [owner, most-conservative]     # when one concern both supports and rejects
      arbiter: platform                         # the agent that may answer escalations; null: none

    kind: Ownership
    spec:
      team: shop
      agent: dev-team                           # platform | cluster-operator | dev-team
      humans: {groups: [shop-admins]}
      slack: C05H0PADM1                         # the owners' Slack channel (id), for approvals
      owns:                                     # any selector matching makes the team an owner
        - {namespaces: [shop]}

Tie-breaks, tried in order until one decides: `owner` (the finding from a policy labelled
`kubecrew.io/team` with the target owner's team wins), `most-conservative` (the rejection wins:
do less), `escalate` (a person decides). One PriorityPolicy governs a policy set; without one the
order above applies. Several Ownerships may select one target: all are stakeholders, and the most
specific selector names the owner. `slack` is a channel id (not a name, which can be renamed):
`kubecrew slack` posts the approval requests of the owner's targets there.

`arbiter` is the agent the org lets answer the escalations its own policy can settle: a counter
the proposer refused, counters that did not converge, a rule that could not be evaluated, a tie
sent to a person. Negotiation adds it to the people such a request already names (either may
answer); an escalation from a ChangePolicy approval rule asked for people by name and never
names the arbiter. `arbiter: null` sends every escalation to people only. Default: platform.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from core.policy.documents.common import (
    API_VERSION,
    CONCERNS,
    Agent,
    Concern,
    DnsLabel,
    Metadata,
    Principals,
    Strict,
)
from core.policy.documents.selectors import TargetSelector

TieBreak = Literal["owner", "most-conservative", "escalate"]
TEAM_LABEL = "kubecrew.io/team"
# A public (C...) or private (G...) channel id, as Slack shows it under the channel's details.
SlackChannel = Annotated[str, StringConstraints(pattern=r"^[CG][A-Z0-9]{2,}$")]


class PrioritySpec(Strict):
    description: str = ""
    order: Annotated[list[Concern], Field(min_length=1)]
    tieBreaks: list[TieBreak] = ["most-conservative"]
    arbiter: Agent | None = "platform"

    @model_validator(mode="after")
    def _unique(self) -> PrioritySpec:
        if len(set(self.order)) != len(self.order):
            raise ValueError("a concern is listed twice in order")
        if len(set(self.tieBreaks)) != len(self.tieBreaks):
            raise ValueError("a tie-break is listed twice in tieBreaks")
        return self

    def ranked(self) -> tuple[Concern, ...]:
        """Every concern, in this order; concerns left out rank after the listed ones."""
        return (*self.order, *(c for c in CONCERNS if c not in self.order))


class PriorityPolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["PriorityPolicy"] = "PriorityPolicy"
    metadata: Metadata
    spec: PrioritySpec


DEFAULT_PRIORITY = PrioritySpec(order=["security", "reliability", "cost"])


class OwnershipSpec(Strict):
    team: DnsLabel
    agent: Agent | None = None
    humans: Principals | None = None
    slack: SlackChannel | None = None
    owns: Annotated[list[TargetSelector], Field(min_length=1)]

    def specificity(self, *, kind: str, namespace: str | None, labels: dict[str, str]) -> int:
        """-1 when no selector matches, else the most specific matching selector's count."""
        scores = [
            s.specificity
            for s in self.owns
            if s.matches(kind=kind, namespace=namespace, labels=labels)
        ]
        return max(scores, default=-1)


class Ownership(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["Ownership"] = "Ownership"
    metadata: Metadata
    spec: OwnershipSpec
