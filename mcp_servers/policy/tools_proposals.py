"""The policy server's negotiation tools: propose an action, read proposals, and see how one
team's policies judge a stored proposal.

`propose` records a Proposal whose proposer is the server's identity (never an argument) and
runs the negotiation at once (`negotiation.negotiate`, now = UTC now): the answer is the
decision, and for "escalated" the approval request a person must answer. `evaluate_proposal`
is read-only: it re-runs the dry run on the proposal's current action and resolves one team's
own findings under the org's priorities, as that team's agent would answer, without writing.
A resize carries the requested values per container (`resized`), so what is approved is exactly
the values the kube gate later lets `set_resources` write.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.fastmcp import FastMCP
from pydantic import ValidationError

from core.errors import InvalidArgument
from core.policy import approvals
from core.policy.actions import Action, EvaluationRequest, ResourceChange
from core.policy.documents.common import ActionType
from core.policy.evaluation import evaluate
from core.policy.findings import EvaluationReport, Stakeholder
from core.policy.negotiation import answer_for, negotiate, new_proposal_id
from core.policy.proposals import (
    ApprovalRequest,
    Decision,
    Impact,
    Proposal,
    ProposalRecord,
    ProposalState,
    record_id,
)
from core.policy.store.base import Store
from mcp_servers.common.bounds import DEFAULT_LIMIT, page
from mcp_servers.common.tools import READ_ONLY, off_loop
from mcp_servers.policy.tools_base import (
    Deps,
    Via,
    action_json,
    build_action,
    moment,
    text,
    write_hints,
)

# propose: records a proposal and its decision for good (not destructive: nothing in a cluster
# changes); proposing twice makes two proposals, so not idempotent.
PROPOSE = write_hints(destructive=False, idempotent=False)


def register_reads(mcp: FastMCP, deps: Deps) -> None:
    store = deps.store

    @mcp.tool(annotations=READ_ONLY)
    async def get_proposal(proposal_id: str) -> dict[str, Any]:
        """One proposal: what was proposed by whom, with the metrics it carried, the transcript
        in order (each stakeholder's answer citing policy and rule, counters, approvals), the
        decision and, when a person decides, the approval request (why it was opened: cause)
        and its answers."""
        record_id(proposal_id, argument="proposal_id")
        record, request = await store.run(
            lambda s: (s.get(proposal_id), approvals.request_of(s, proposal_id))
        )
        return proposal_json(record, request)

    @mcp.tool(annotations=READ_ONLY)
    async def list_proposals(
        state: ProposalState | None = None, limit: int = DEFAULT_LIMIT, offset: int = 0
    ) -> dict[str, Any]:
        """Proposals, oldest first: id, state (open, decided, escalated), proposer, action."""
        found = await store.run(lambda s: s.list(state=state))
        shown = page(found, limit=limit, offset=offset, what="proposals")
        return {
            "proposals": [
                {
                    "id": p.id,
                    "state": p.state,
                    "proposer": str(p.proposer),
                    "action": p.action.describe(),
                    "created": p.created.isoformat(),
                }
                for p in shown.items
            ],
            "total": shown.total,
            "note": shown.note,
            "next": "get_proposal ID for the transcript and decision",
        }

    @mcp.tool(annotations=READ_ONLY)
    async def evaluate_proposal(proposal_id: str, team: str) -> dict[str, Any]:
        """How one stakeholder team's policies judge a stored proposal's current action (as
        decided or countered, else as proposed), now: accept, reject citing policy and rule, or
        counter with the action the team would accept. Records nothing."""
        record_id(proposal_id, argument="proposal_id")
        record = await store.run(lambda s: s.get(proposal_id))
        proposal = record.proposal
        request = EvaluationRequest(
            action=record.decision.action if record.decision else proposal.action,
            target=proposal.target,
            metrics=proposal.metrics,
            now=deps.now(),
        )
        report = await off_loop(evaluate, deps.policies, request)
        return {"proposal": proposal_id, **team_answer(report, deps, team)}


def register_propose(mcp: FastMCP, deps: Deps) -> None:
    @mcp.tool(annotations=PROPOSE)
    async def propose(
        action: ActionType,
        target: str,
        rationale: str,
        namespace: str = "",
        replicas: int | None = None,
        from_replicas: int | None = None,
        pods: int | None = None,
        via: Via = "direct",
        labels: dict[str, str] | None = None,
        metrics: dict[str, float] | None = None,
        live_object: dict[str, Any] | None = None,
        savings_per_month: float | None = None,
        risk: Literal["low", "medium", "high"] = "low",
        deadline: str = "",
        counters: Literal["accept", "refuse"] = "accept",
        resources: list[dict[str, str]] | None = None,
        cluster: str = "",
    ) -> dict[str, Any]:
        """Propose an action to its stakeholders and get the decision: approved, approved as
        countered (act on the decision's action, not yours), rejected (citing the rules), or
        escalated to a person (the approval request's id, approvers and expiry). Arguments as
        for evaluate_action, plus why (rationale), the expected saving and risk, an ISO
        deadline, and counters: `refuse` sends any counter-offer to a person instead.
        resources (action resize): one entry per container, {"container": "web", "cpu":
        "100m", "from_cpu": "500m", "memory": "64Mi", "from_memory": "128Mi"}, the requests
        asked and the current ones; the approved values are the ones set_resources may write.
        cluster: the kubeconfig context the action is for, in a fleet (the write then names the
        same context; an approval in one cluster carries nothing in another)."""
        now = deps.now()
        typed = build_action(
            action,
            target,
            namespace=namespace,
            replicas=replicas,
            from_replicas=from_replicas,
            pods=pods,
            via=via,
            labels=labels,
            actor=str(deps.identity),
            cluster=cluster,
        )
        try:
            proposal = Proposal(
                id=new_proposal_id(),
                proposer=deps.identity,
                action=resized(typed, resources),
                rationale=text(rationale, argument="rationale"),
                impact=Impact(savings_per_month=savings_per_month, risk=risk),
                deadline=moment(deadline, argument="deadline"),
                created=now,
                target=live_object,
                metrics=metrics or {},
                counters=counters,
            )
        except ValidationError as exc:  # a negative saving, say
            first = exc.errors()[0]
            raise InvalidArgument(f"{first['loc'][-1]}: {first['msg']}") from exc

        def run(s: Store) -> tuple[ProposalRecord, ApprovalRequest | None]:
            s.propose(proposal)
            record = negotiate(s, deps.policies, proposal.id, now=now)
            return record, approvals.request_of(s, proposal.id)

        record, request = await deps.store.run(run)
        return proposal_json(record, request, transcript=False)


RESOURCE_KEYS = ("container", "cpu", "memory", "from_cpu", "from_memory")


def resized(action: Action, resources: list[dict[str, str]] | None) -> Action:
    """`action` carrying the per-container requests `resources` asks for (resize only)."""
    if resources is None:
        return action
    expected = (
        'resources is a list of {"container": NAME, "cpu": "100m", "from_cpu": "500m", '
        '"memory": "64Mi", "from_memory": "128Mi"} (cpu or memory, or both)'
    )
    if action.type != "resize":
        raise InvalidArgument(f"resources is for action resize, not {action.type}; drop it")
    changes: list[ResourceChange] = []
    for entry in resources:
        unknown = sorted(set(entry) - set(RESOURCE_KEYS)) if isinstance(entry, dict) else []
        if not isinstance(entry, dict) or unknown or "container" not in entry:
            raise InvalidArgument(f"{expected}; got {entry!r}")
        requests = {
            name: {"to": entry[name], "from": entry.get(f"from_{name}")}
            for name in ("cpu", "memory")
            if entry.get(name)
        }
        try:
            changes.append(
                ResourceChange.model_validate(
                    {"container": entry["container"], "requests": requests}
                )
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InvalidArgument(
                f"resources {entry!r}: {where}: {first['msg']}; {expected}"
            ) from exc
    if not changes:
        raise InvalidArgument(f"resources names no container; {expected}")
    return action.model_copy(update={"resources": changes})


def proposal_json(
    record: ProposalRecord, request: ApprovalRequest | None, *, transcript: bool = True
) -> dict[str, Any]:
    proposal = record.proposal
    answer: dict[str, Any] = {
        "proposal": proposal.id,
        "state": proposal.state,
        "proposer": str(proposal.proposer),
        "action": action_json(proposal.action),
        "rationale": proposal.rationale,
        "metrics": proposal.metrics,  # what its CEL rules read, so a re-evaluation reads it too
        "decision": decision_json(record.decision) if record.decision else None,
        "approval": approval_json(request) if request else None,
    }
    if transcript:
        answer["transcript"] = [
            {"seq": e.seq, "at": e.at.isoformat(), "kind": e.kind, "actor": e.actor}
            | {"text": e.describe()}
            for e in record.transcript
        ]
    answer["next"] = _next(record.decision, request)
    return answer


def decision_json(decision: Decision) -> dict[str, Any]:
    return {
        "outcome": decision.outcome,
        "action": action_json(decision.action),
        "decided_by": str(decision.decided_by),
        "reasons": decision.reasons,
        "rounds": decision.rounds,
        "at": decision.at.isoformat(),
        "text": decision.describe(),
    }


def approval_json(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        "proposal": request.proposal,
        "state": request.state,
        "action": request.action.describe(),
        "approvers": request.approvers.describe(),
        "min_approvals": request.min_approvals,
        "reasons": request.reasons,
        "cause": request.cause,
        "requested_at": request.requested_at.isoformat(),
        "expires_at": request.expires_at.isoformat(),
        "answers": [
            {"by": str(a.by), "verdict": a.verdict, "via": a.via, "reason": a.reason}
            | {"at": a.at.isoformat()}
            for a in request.answers
        ],
    }


def _next(decision: Decision | None, request: ApprovalRequest | None) -> str:
    if request is not None and request.state == "pending":
        return (
            f"a person decides: {request.approvers.describe()} answer {request.id} "
            f"(answer_approval, or `kubecrew approvals grant {request.id}`) before "
            f"{request.expires_at.isoformat()}; get_proposal {request.proposal} shows the end"
        )
    if decision is None:
        return "not decided yet; call get_proposal again"
    if decision.outcome == "approved":
        return "approved: carry out the decision's action; nothing else is needed from the store"
    if decision.outcome == "approved-as-countered":
        return "approved as countered: carry out the decision's action, not the one proposed"
    if decision.outcome == "rejected":
        return "rejected: do not act; the reasons cite the rules; evaluate_action a different one"
    return "escalated: a person decides; list_approvals shows the request"


def team_answer(report: EvaluationReport, deps: Deps, team: str) -> dict[str, Any]:
    """`team`'s own findings on the report's action, resolved under the org's priorities."""
    teams = sorted(
        {h.team for h in report.stakeholders} | {f.team for f in report.findings if f.team}
    )
    if team not in teams:
        raise InvalidArgument(
            f"team {team!r} has no say on {report.action.target}: no Ownership or policy of it "
            f"selects it; the teams that do: {', '.join(teams) or 'none'}"
        )
    holder = next(
        (h for h in report.stakeholders if h.team == team),
        Stakeholder(team=team, ownership="(none: its policies select the target)"),
    )
    evaluation = answer_for(holder, report, deps.policies)
    counter = evaluation.counter
    return {
        "team": team,
        "owner": holder.owner,
        "action": action_json(report.action),
        "verdict": evaluation.verdict,
        "citations": [str(citation) for citation in evaluation.citations],
        "reasons": evaluation.reasons,
        "counter": None if counter is None else action_json(counter),
    }
