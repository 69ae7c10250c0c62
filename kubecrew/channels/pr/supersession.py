"""An amended pull request's approval request, superseded by one for what the PR now does.

A crew PR may carry a pending approval request (`approval_links`). When a `@kubecrew` comment
amends the PR (`pr_comments`), the request still describes the old change: approving it would
approve the new one under the old one's name. So the amendment supersedes it:

1. a new proposal for the amended action (`amended`: the old action with the new replica count,
   or a patch when the amendment reaches beyond what a scale or a resize covers), made by the
   old proposal's proposer, with its rationale, impact, live object and metrics, and negotiated
   against the policies as the policy server's `propose` does (same store, same engine);
2. the old request ended by that proposer's own word: denied via the pull request, the reason
   naming the new proposal (the store has no other way to withdraw a request, and a deny is
   what a withdrawal means for it: the old proposal is rejected, nobody can grant it late);
3. the PR body's marker moved to the new request when it waits for a person, or removed when
   policy decided the new proposal itself (approved or rejected), so reviews answer the
   request that describes the PR as it is;
4. the words for the reply on the PR (`Superseded.describe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.policy import approvals
from core.policy.actions import Action, ReplicaChange
from core.policy.catalog import PolicySet
from core.policy.negotiation import negotiate, new_proposal_id
from core.policy.proposals import ApprovalAnswer, ApprovalRequest, Identity, Proposal
from core.policy.store.base import Store
from kubecrew.channels.pr.amendments import Amendment
from mcp_servers.gitops.approval_links import PREFIX, mark
from mcp_servers.gitops.providers.base import Provider, PullRequest


@dataclass(frozen=True)
class Superseded:
    old: ApprovalRequest
    proposal: str  # the new proposal
    outcome: str  # its decision: approved, approved-as-countered, rejected, escalated
    action: Action  # the amended action, as proposed
    reasons: tuple[str, ...]
    request: ApprovalRequest | None  # the new request, when a person decides

    def describe(self) -> str:
        head = (
            f"Approval request {self.old.id} was for {self.old.action.describe()}, so this "
            "amendment supersedes it"
        )
        if self.request is not None:
            approvers = self.request.approvers
            people, settle = approvers.people(), approvers.agents_settle()
            answers = f"a review by {people} answers it" if people else "no review answers it"
            return (
                f"{head}: approval request {self.request.id} (proposal {self.proposal}) asks "
                f"for {self.action.describe()}, and this pull request now carries it; "
                f"{answers}" + (f"; {settle}." if settle else ".")
            )
        if self.outcome.startswith("approved"):
            return (
                f"{head}: policy approved {self.action.describe()} (proposal {self.proposal}) "
                "without a person, so this pull request carries no approval request now."
            )
        why = "; ".join(self.reasons[:2]) or self.outcome
        return (
            f"{head}: policy {self.outcome} {self.action.describe()} (proposal "
            f"{self.proposal}: {why}); this pull request should not merge as it is."
        )


def amended(old: Action, asked: Amendment) -> Action:
    """The action the PR makes once `asked` is applied to a PR that made `old`."""
    replicas = old.replicas
    if asked.replicas is not None:
        start = old.replicas.from_ if old.replicas is not None else None
        replicas = ReplicaChange(from_=start, to=asked.replicas)
    kind = old.type
    if kind == "scale" and (asked.tag is not None or asked.requests):
        kind = "patch"  # no longer only a replica count
    if kind == "resize" and (asked.tag is not None or asked.replicas is not None):
        kind = "patch"  # no longer only resources
    return Action.model_validate({**old.model_dump(by_alias=True), "type": kind,
                                  "replicas": replicas})  # fmt: skip


def supersede(
    store: Store,
    policies: PolicySet,
    provider: Provider,
    pr: PullRequest,
    old: ApprovalRequest,
    asked: Amendment,
    *,
    asked_by: Identity,
    now: datetime,
) -> Superseded:
    """Propose the amended action, end `old`, and point the PR at what decides now."""
    before = store.get(old.proposal).proposal
    action = amended(old.action, asked)
    proposal = Proposal(
        id=new_proposal_id(),
        proposer=before.proposer,
        action=action,
        rationale=(
            f"{before.rationale} (amended on pull request #{pr.number}: {asked.describe()}, "
            f"asked by {asked_by}; supersedes approval request {old.id})"
        ),
        impact=before.impact,
        created=now,
        target=before.target,
        metrics=before.metrics,
        counters=before.counters,
    )
    store.propose(proposal)
    record = negotiate(store, policies, proposal.id, now=now)
    decision = record.decision
    request = approvals.request_of(store, proposal.id)
    waiting = request if request is not None and not request.ended else None
    withdrawn = ApprovalAnswer(
        by=before.proposer,
        via="pull-request",
        verdict="deny",
        reason=(
            f"superseded by proposal {proposal.id}"
            + (f" (approval request {waiting.id})" if waiting is not None else "")
            + f": pull request #{pr.number} was amended ({asked.describe()})"
        ),
        at=now,
    )
    store.answer(old.id, withdrawn, now=now)
    body = unmarked(pr.body, old.id)
    provider.set_body(pr.number, body=mark(body, waiting.id) if waiting is not None else body)
    outcome = "escalated" if waiting is not None else decision.outcome if decision else "open"
    return Superseded(
        old=old,
        proposal=proposal.id,
        outcome=outcome,
        action=action,
        reasons=tuple(decision.reasons) if decision is not None else (),
        request=waiting,
    )


def unmarked(body: str, request_id: str) -> str:
    """`body` without the sentence and the marker line `approval_links.mark` wrote."""
    head, found, _ = body.partition(f"This change waits for approval request {request_id}:")
    kept = head if found else body
    lines = [line for line in kept.splitlines() if not line.strip().startswith(PREFIX)]
    return "\n".join(lines).rstrip()
