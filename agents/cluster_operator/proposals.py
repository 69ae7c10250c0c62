"""The agent's side of negotiation: read a proposal's decision from the policy server.

A decision is final once the store says approved, approved-as-countered or rejected; an
escalated proposal waits for a person. The policy server offers no blocking `wait` tool (the
store's `approvals.wait` is reached only in-process), so the agent looks again on its next patrol
or review with `get_proposal`; exactly-once application holds anyway, because the kube gate lets
an approved proposal carry one change only (it refuses a second call naming it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.runtime.toolbox import Toolbox

APPROVED = ("approved", "approved-as-countered")


@dataclass(frozen=True)
class Decided:
    proposal: str
    outcome: str  # approved, approved-as-countered, rejected, escalated, "" (not decided)
    action: dict[str, Any]  # the decided action (the counter, when countered), else proposed
    reasons: list[str]
    approval: str  # the pending approval request's id, when a person must decide
    text: str  # the decision in words

    @property
    def approved(self) -> bool:
        return self.outcome in APPROVED

    @property
    def waiting(self) -> bool:
        return self.outcome in ("", "escalated") and bool(self.approval)


def decided(record: dict[str, Any]) -> Decided:
    """The decision in a `propose` or `get_proposal` answer."""
    decision = record.get("decision") or {}
    approval = record.get("approval") or {}
    pending = approval.get("state") == "pending"
    return Decided(
        proposal=str(record["proposal"]),
        outcome=str(decision.get("outcome", "")) if not pending else "escalated",
        action=dict(decision.get("action") or record.get("action") or {}),
        reasons=[str(r) for r in decision.get("reasons", [])],
        approval=str(approval.get("id", "")) if pending else "",
        text=str(decision.get("text", "")) or str(record.get("next", "")),
    )


async def look(toolbox: Toolbox, proposal: str) -> Decided:
    return decided(await toolbox.call("get_proposal", proposal_id=proposal))
