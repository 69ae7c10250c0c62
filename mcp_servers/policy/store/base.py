"""The one interface every policy store backend implements, and the rules it must keep.

SQLite is the embedded default; the Kubernetes backend (custom resources) will implement the
same protocol and pass the same tests. The rules are the store's, not its callers':

- Optimistic locking: every proposal has a version; `decide` names the version it read, and a
  write that lost a race raises Conflict, so the caller re-reads and deliberates again.
- A proposal is decided once: `decide` only moves an open proposal, whatever the versions say.
- Approvals on one target are serialised: each target has an approval version, a proposal
  records the version it was proposed against (`basis`), and an approval commits only while
  the target is still at that version. So two conflicting proposals are never both approved;
  the later one sees the earlier's decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from mcp_servers.policy.actions import TargetRef
from mcp_servers.policy.proposals import (
    Decision,
    Proposal,
    ProposalRecord,
    ProposalState,
    TranscriptEvent,
)


class TargetState(BaseModel):
    """The approvals a target has seen: how many, and the latest one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 0
    proposal: str | None = None  # the id of the latest approved proposal


def target_key(target: TargetRef) -> str:
    return f"{target.kind}/{target.namespace or ''}/{target.name}"


class Store(Protocol):
    def propose(self, proposal: Proposal) -> ProposalRecord:
        """Store a new open proposal, its `basis` set to the target's current version."""
        ...

    def get(self, proposal_id: str) -> ProposalRecord:
        """The proposal, or NotFound naming how to list the others."""
        ...

    def list(self, *, state: ProposalState | None = None) -> list[Proposal]:
        """Every proposal, oldest first, or only those in `state`."""
        ...

    def target(self, target: TargetRef) -> TargetState: ...

    def decide(
        self,
        proposal_id: str,
        *,
        version: int,
        events: Sequence[TranscriptEvent],
        decision: Decision,
    ) -> ProposalRecord:
        """Record the evaluations and the decision at once, or raise Conflict and change nothing."""
        ...

    def close(self) -> None: ...
