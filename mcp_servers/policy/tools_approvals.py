"""The policy server's approval and audit tools: pending requests, answering one, the audit log.

`answer_approval` answers as the server's identity through `approvals.answer` (via "mcp"),
which checks it against the request's approvers and lets each answer once; the store ends the
request when it decides and decides its proposal in the same write. It is registered for a
person's server that is not read-only, and for an agent's only where the org delegated to that
agent (`answers`: the PriorityPolicy's arbiter, or an approval rule's `agents`); even then the
store accepts its answer only on the requests that name it, so an agent never answers for a
person.
The audit tools read the tamper-evident log every store write appends to; `audit_verify` walks
the whole chain and names each record that was changed, deleted or cut off.

`claim_approval` is the proposer's side: an agent (or person) that proposed and was told a
person decides resumes, later and perhaps in another process, by claiming the ended request
(`Store.claim`, after expiring it when past due). The store hands an ended request out once, so
the answer is acted on once; the same waiter claiming again (a run resumed after a crash between
its claim and its checkpoint) gets it back marked `again`, any other waiter a Conflict. It is
registered with the reads on every server that is not read-only, since claiming writes.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.fastmcp import FastMCP

from core.errors import Conflict, PermissionDenied
from core.policy import approvals
from core.policy.audit import AuditKind, AuditRecord
from core.policy.catalog import PolicySet
from core.policy.documents.change import ChangePolicy
from core.policy.proposals import AnswerVerdict, ApprovalRequest, ApprovalState, Identity, record_id
from core.policy.store.base import Store
from mcp_servers.common.bounds import DEFAULT_LIMIT, MAX_LIMIT, page
from mcp_servers.common.tools import READ_ONLY
from mcp_servers.policy.tools_base import Deps, text, write_hints
from mcp_servers.policy.tools_proposals import approval_json, decision_json

# answer_approval: an answer cannot be taken back and may end the request (and decide its
# proposal) for good, so destructive; each person answers once, so not idempotent.
ANSWER = write_hints(destructive=True, idempotent=False)
# claim_approval: marks the ended request taken up, for good; the same waiter may claim again.
CLAIM = write_hints(destructive=False, idempotent=True)


def register_reads(mcp: FastMCP, deps: Deps) -> None:
    store = deps.store

    @mcp.tool(annotations=READ_ONLY)
    async def list_approvals(
        state: ApprovalState | Literal["all"] = "pending",
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Approval requests, oldest first (pending by default): what a person must decide,
        for which proposal, by whom, until when, the answers so far, and whether this server's
        identity may answer (may_answer)."""
        found = await store.run(lambda s: s.approvals(state=None if state == "all" else state))
        shown = page(found, limit=limit, offset=offset, what="approval requests")
        now = deps.now()
        return {
            "approvals": [
                approval_json(r)
                | {
                    "may_answer": approvals.authorized(r.approvers, deps.identity),
                    "overdue": r.state == "pending" and now > r.expires_at,
                }
                for r in shown.items
            ],
            "total": shown.total,
            "note": shown.note,
            "you": str(deps.identity),
            "next": "answer_approval ID grant|deny (as an approver), or get_proposal PROPOSAL",
        }

    @mcp.tool(annotations=READ_ONLY)
    async def audit_query(
        after: int = 0, limit: int = DEFAULT_LIMIT, subject: str = "", kind: AuditKind | None = None
    ) -> dict[str, Any]:
        """Audit records with seq > after, oldest first: who (actor), what (kind: proposal,
        evaluation, decision, approval, answer, mutation; summary), why (citations) and the
        result. subject: a proposal or approval id (or the target a mutation names). Page on
        with after=next_after."""
        text(subject, argument="subject", limit=300)
        chosen = max(1, min(limit, MAX_LIMIT))
        records = await store.run(
            lambda s: s.audit(after=max(0, after), limit=chosen, subject=subject or None, kind=kind)
        )
        return {
            "records": [_record(r) for r in records],
            "next_after": records[-1].seq if records else max(0, after),
            "note": f"at most {chosen} records; call again with after=next_after for more"
            if len(records) == chosen
            else "",
        }

    @mcp.tool(annotations=READ_ONLY)
    async def audit_verify() -> dict[str, Any]:
        """Check the whole audit chain: intact, or every record that was modified, deleted or
        cut off the end, by number."""
        report = await store.run(lambda s: s.verify_audit())  # columns, seal and decisions too
        problems, head = report.problems, report.head
        return {
            "intact": not problems,
            "records": report.records,
            "head": {"seq": head.seq, "hash": head.hash[:12]},
            "problems": problems,
            "next": "the log is intact" if not problems else "the problems name the records",
        }

    if not deps.settings.read_only:
        _register_claim(mcp, deps)


def _register_claim(mcp: FastMCP, deps: Deps) -> None:
    @mcp.tool(annotations=CLAIM)
    async def claim_approval(request_id: str, waiter: str = "") -> dict[str, Any]:
        """Take up the end of an approval request for a proposal you made: once it has ended
        (granted, denied or expired; a request past due expires now), the first waiter claims
        it and acts on its decision; the same waiter gets it again (again: true), any other is
        refused. Still pending: claimed false, ask again later. waiter: your run's id."""
        record_id(request_id, argument="request_id")
        me = f"{deps.identity} {text(waiter, argument='waiter', limit=200)}".strip()
        now = deps.now()

        def run(s: Store) -> tuple[ApprovalRequest, Any, bool]:
            s.expire(now=now)
            request = s.approval(request_id)
            record = s.get(request.proposal)
            if str(record.proposal.proposer) != str(deps.identity):
                raise PermissionDenied(
                    f"{request_id} waits on proposal {request.proposal} by "
                    f"{record.proposal.proposer}; only its proposer takes up the answer"
                )
            if not request.ended:
                return request, None, False
            claimed = s.claim(request_id, waiter=me)
            if claimed is None:
                claimed = s.approval(request_id)
                if claimed.claimed_by != me:
                    raise Conflict(
                        f"{request_id} ended ({claimed.state}) and was already taken up by "
                        f"{claimed.claimed_by}; it is acted on once"
                    )
                return claimed, s.get(claimed.proposal).decision, True
            return claimed, s.get(claimed.proposal).decision, False

        request, decision, again = await deps.store.run(run)
        answer = approval_json(request) | {
            "claimed": request.ended,
            "again": again,
            "claimed_by": request.claimed_by,
            "decision": decision_json(decision) if decision else None,
        }
        answer["next"] = (
            f"still pending: {request.approvers.describe()} answer it before "
            f"{request.expires_at.isoformat()}; claim again later"
            if not request.ended
            else f"{request.state}: act on the decision (proposal {request.proposal}) once"
        )
        return answer


def answers(identity: Identity, policies: PolicySet) -> bool:
    """Whether `identity` may ever answer a request under `policies`: any person; an agent only
    as the org's arbiter or where an approval rule names it."""
    if identity.kind == "person":
        return True
    arbiter = policies.priorities.arbiter
    named = {
        agent
        for policy in policies.documents(ChangePolicy)
        for rule in policy.spec.approvals
        for agent in rule.approvers.agents
    }
    return identity.name == arbiter or identity.name in named


def register_answer(mcp: FastMCP, deps: Deps) -> None:
    @mcp.tool(annotations=ANSWER)
    async def answer_approval(
        request_id: str, verdict: AnswerVerdict, reason: str = ""
    ) -> dict[str, Any]:
        """Grant or deny an approval request as this server's identity (an approver by name or
        group, or an agent the request names, else refused). A deny ends it; grants end it once
        min_approvals approvers granted; its proposal is then decided (approved with the
        request's action, or rejected)."""
        record_id(request_id, argument="request_id")
        text(reason, argument="reason")
        now = deps.now()

        def run(s: Store) -> tuple[ApprovalRequest, Any]:
            ended = approvals.answer(
                s, request_id, deps.identity, verdict, via="mcp", now=now, reason=reason
            )
            return ended, s.get(ended.proposal).decision

        request, decision = await deps.store.run(run)
        answer = approval_json(request) | {
            "decision": decision_json(decision) if request.ended and decision else None
        }
        answer["next"] = (
            f"pending: {request.min_approvals - _grants(request)} more grant(s) needed"
            if not request.ended
            else f"{request.state}: get_proposal {request.proposal} shows the decision"
        )
        return answer


def _grants(request: ApprovalRequest) -> int:
    return len({a.by.name for a in request.answers if a.verdict == "grant"})


def _record(record: AuditRecord) -> dict[str, Any]:
    return {
        "seq": record.seq,
        "at": record.at.isoformat(),
        "actor": record.actor,
        "kind": record.kind,
        "subject": record.subject,
        "summary": record.summary,
        "citations": record.citations,
        "result": record.result,
        "hash": record.hash[:12],
    }
