"""The agent's side of negotiation: the decision on a proposal it made, remembered and taken up.

A decision is final once the store says approved, approved-as-countered or rejected; the
`propose` answer carries it, and the agent remembers it in its own store (`remember`), so a
later patrol does not ask again. An escalated proposal waits for a person: each patrol takes up
the answer with `claim_approval` (the policy server's exactly-once take-up: the first waiter to
claim an ended request owns it, the same waiter gets it again, any other is refused), with a
waiter named after what waits (`migration node-1`), so patrols on other threads are the same
waiter. The kube gate adds its own guard: an approved proposal carries one change only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agents.runtime.toolbox import Toolbox
from core.policy.proposals import APPROVED


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


def remember(decision: Decided) -> dict[str, Any]:
    """The decision as the agent's store keeps it (plain JSON)."""
    return asdict(decision)


def remembered(kept: dict[str, Any]) -> Decided:
    return Decided(**{k: kept[k] for k in Decided.__dataclass_fields__})


async def settle(toolbox: Toolbox, decision: Decided, *, waiter: str) -> Decided:
    """The decision, taken up from the person's answer when one was awaited (claim_approval);
    unchanged while the request is still pending or when nothing was awaited."""
    if not decision.waiting:
        return decision
    answer = await toolbox.call("claim_approval", request_id=decision.approval, waiter=waiter)
    if not answer.get("claimed"):
        return decision
    final = answer.get("decision") or {}
    state = str(answer.get("state", ""))
    return Decided(
        proposal=decision.proposal,
        outcome=str(final.get("outcome") or "rejected"),
        action=dict(final.get("action") or decision.action),
        reasons=[str(r) for r in final.get("reasons", [])] or [f"the approval was {state}"],
        approval="",
        text=str(final.get("text", "")) or f"approval {decision.approval} {state}",
    )


async def current(toolbox: Toolbox, proposal: str, *, waiter: str) -> Decided:
    """A proposal's decision as the store holds it now, a person's answer taken up once."""
    shown = await toolbox.call("get_proposal", proposal_id=proposal)
    return await settle(toolbox, decided(shown), waiter=waiter)
