"""Arbitration: the Platform answers the escalations org policy already settles, and no others.

The policy store names the org's arbiter (the PriorityPolicy's `arbiter`, the Platform by default)
beside the people on an escalation no approval rule asked for: the proposer refused a counter,
counters did not converge, a rule could not be evaluated, or a tie the org sends to a person.
`answer_escalations` takes the pending requests that name this agent, reads each proposal's
decided action, and evaluates that action again now, against the live object (`get_resource`),
with the org's policies (`evaluate_action`), the metrics the proposal carried and a resize's
per-container values: the same action the store judged, on today's object and policies. The
fresh verdict decides, the same way every time:

    counter or reject   deny, citing the rules that rejected and the priority order, and naming
                        what policy would accept ("propose scale to 3")
    allow               grant, citing the fresh evaluation (a rule that could not be evaluated
                        now can be, and lets it through; or policy changed since)
    anything else       left to the people, saying why (still unevaluable, an approval rule
                        fires now, a time window)

Two kinds are always left to the people: a tie the org's tie-breaks send to a person, and an
approval rule's request that names people (a person's rule is never overridden). An approval
rule that names only this agent was delegated to it explicitly, and is judged like the rest.

The proposal's rationale and the people's text are data: only the cause the store recorded, the
action and the policies' fresh verdict choose the answer. The answer goes through the policy
server's `answer_approval` as this agent's own identity, which the store checks against the
request's approvers.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import yaml

from agents.platform.coverage import documents
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox
from core.policy.documents.priority import PriorityPolicy

Answer = Literal["grant", "deny", "left"]
AGENT = "platform"
_LIMIT = 3900  # answer_approval takes a reason of at most 4000 characters
_WHY = {
    "counter-refused": "the proposer refused the counter-offer policy made",
    "no-agreement": "the counter-offers did not converge within the rounds",
    "unevaluable": "a rule could not be evaluated when it was proposed",
    "tie": "a tie the org's tie-breaks send to a person",
    "approval-rule": "an approval rule asked for it",
}


class Arbitration(TypedDict):
    request: str
    proposal: str
    action: str  # the escalated action, in words
    cause: str  # why it escalated, as the store recorded it
    verdict: Answer
    reasons: list[str]
    citations: list[str]  # "CapacityPolicy shop-min-capacity / rule min-replicas", the priority
    answered: str  # the request's state after the answer, or why the answer was not taken


class Escalations(TypedDict):
    requests: list[Arbitration]
    others: int  # pending requests that do not name this agent: the people's alone


async def answer_escalations(toolbox: Toolbox, *, agent: str = AGENT) -> Escalations:
    """Answer each pending request that names `agent` where org policy decides it."""
    listed = await toolbox.call("list_approvals", state="pending", limit=200)
    pending = list(listed.get("approvals") or [])
    mine = [r for r in pending if r.get("may_answer")]  # the store's word: it names this agent
    order = await _priority(toolbox)
    done = [await _arbitrate(toolbox, request, order, agent) for request in mine]
    return Escalations(requests=done, others=len(pending) - len(mine))


async def _arbitrate(
    toolbox: Toolbox, request: dict[str, Any], order: str, agent: str
) -> Arbitration:
    cause = str(request.get("cause", "approval-rule"))
    record = await toolbox.call("get_proposal", proposal_id=request["proposal"])
    action = dict((record.get("decision") or {}).get("action") or record["action"])
    row = Arbitration(
        request=str(request["id"]), proposal=str(request["proposal"]),
        action=str(action.get("text", request.get("action", ""))), cause=cause,
        verdict="left", reasons=[f"escalated because {_WHY.get(cause, cause)}"],
        citations=[], answered="pending",
    )  # fmt: skip
    delegated = cause == "approval-rule" and _agents_only(request, agent)
    if cause == "tie" or (cause == "approval-rule" and not delegated):
        row["reasons"].append(
            "a person decides this one: the org's tie-break asks for a person"
            if cause == "tie"
            else "a person's approval rule asked for it; the arbiter never overrides one"
        )
        return row
    fresh = await _evaluate(toolbox, action, metrics=dict(record.get("metrics") or {}))
    verdict, reasons, cited = judge(fresh, order=order, agent=agent, delegated=delegated)
    row |= {"verdict": verdict, "reasons": row["reasons"] + reasons, "citations": cited}
    if verdict != "left":
        row["answered"] = await _answer(toolbox, row)
    return row


def judge(
    fresh: dict[str, Any], *, order: str, agent: str, delegated: bool = False
) -> tuple[Answer, list[str], list[str]]:
    """The verdict, its reasons and citations, from the fresh evaluation of the action alone."""
    outcome = str(fresh.get("verdict", ""))
    fired = list(fresh.get("fired") or [])
    rejecting = [f for f in fired if f.get("effect") == "reject"]
    cited = [str(f["citation"]) for f in rejecting]
    weighed = [f"resolved under {order}"] + [str(r) for r in fresh.get("reasons") or []]
    if outcome in ("counter", "reject"):
        reasons = weighed
        counter = fresh.get("counter") or {}
        if outcome == "counter":
            reasons.append(f"policy would accept it: {_proposal_of(fresh['action'], counter)}")
        else:
            reasons.append("no variant of this action satisfies the rejecting rules")
        return "deny", reasons, [*cited, order]
    needs = [str(n.get("approvers", "")) for n in fresh.get("approvals") or []]
    asks_me = bool(needs) and all(n == f"agent {agent}" for n in needs)
    if outcome == "allow" and (not needs or (delegated and asks_me)):
        if fresh.get("not_before"):
            return "left", [f"allowed only from {fresh['not_before']} (a window)"], []
        passed = f"evaluated again now, the rules that apply allow {fresh['action']['text']}"
        return "grant", [passed, *weighed], ["evaluate_action now: allow", order]
    errors = [f"{f['citation']}: {f['why']}" for f in fired if f.get("effect") == "error"]
    why = [f"still not evaluable: {e}" for e in errors] or [
        f"evaluated again now the verdict is {outcome}"
        + (f", needing {', '.join(needs)}" if needs else "")
        + ": org policy does not settle it, so the people decide"
    ]
    return "left", why, [str(f["citation"]) for f in fired if f.get("effect") == "error"]


def _proposal_of(action: dict[str, Any], counter: dict[str, Any]) -> str:
    text = f"propose {action['type']}"
    if counter.get("replicas") is not None:
        text += f" to {counter['replicas']}"
    via = counter.get("via") or action.get("via")
    return text + (" via a pull request" if via == "pull-request" else "")


def _agents_only(request: dict[str, Any], agent: str) -> bool:
    return str(request.get("approvers", "")).split(", ") == [f"agent {agent}"]


async def _evaluate(
    toolbox: Toolbox, action: dict[str, Any], *, metrics: dict[str, float]
) -> dict[str, Any]:
    """The dry run of exactly this action now, against its live object when it exists, with
    the metrics the proposal carried (a rule reading them is judged as it was proposed, not
    left unevaluable for want of them)."""
    target = action["target"]
    namespace = target.get("namespace") or ""
    replicas = action.get("replicas") or {}
    try:
        got = await toolbox.call(
            "get_resource", kind=target["kind"], name=target["name"], namespace=namespace or None
        )
        live: dict[str, Any] | None = yaml.safe_load(str(got.get("yaml", ""))) or None
    except ToolFailed as exc:
        if "not found" not in exc.reason.lower():
            raise
        live = None  # gone: the rules judge the action alone
    return await toolbox.call(
        "evaluate_action",
        action=action["type"], target=f"{target['kind'].lower()}/{target['name']}",
        namespace=namespace, replicas=replicas.get("to"), from_replicas=replicas.get("from"),
        pods=action.get("pods"), via=action.get("via", "direct"),
        labels=action.get("labels") or None, live_object=live, metrics=metrics or None,
        resources=_requests(action.get("resources")),
    )  # fmt: skip


def _requests(changes: Any) -> list[dict[str, str]] | None:
    """A resize's per-container changes as evaluate_action (like propose) takes them. Only
    requests: propose takes no limits, so a proposal's resize carries none."""
    if not isinstance(changes, list):
        return None
    flat: list[dict[str, str]] = []
    for change in changes:
        entry = {"container": str(change["container"])}
        for name, amount in (change.get("requests") or {}).items():
            entry[name] = str(amount["to"])
            if amount.get("from") is not None:
                entry[f"from_{name}"] = str(amount["from"])
        flat.append(entry)
    return flat


async def _answer(toolbox: Toolbox, row: Arbitration) -> str:
    """Answer through the policy server as this agent; a request someone answered meanwhile
    is reported, not retried."""
    said = "; ".join(row["reasons"] + [f"cites {c}" for c in row["citations"]])
    try:
        done = await toolbox.call(
            "answer_approval", request_id=row["request"], verdict=row["verdict"],
            reason=said[:_LIMIT],
        )  # fmt: skip
    except ToolFailed as exc:
        return f"not taken: {exc.reason}"
    return str(done.get("state", "answered"))


async def _priority(toolbox: Toolbox) -> str:
    """The org's priority order as cited: 'PriorityPolicy NAME (a > b > c)'."""
    declared = await documents(toolbox, PriorityPolicy)
    if not declared:
        return "the built-in priority order (security > reliability > cost)"
    policy = declared[0]
    return f"PriorityPolicy {policy.metadata.name} ({' > '.join(policy.spec.ranked())})"
