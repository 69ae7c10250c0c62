"""The remediation loop as a LangGraph graph:

    learn -> recommend -> plan -> decide -> mutate -> validate -> done
                           ^       |   |       |          |
                           |       |   v       v          v
                           +----(refused) <---------- rollback --> escalate (no fix left)
                                   |                                  ^
                                approval (interrupt until a person answers; denied/expired)

- learn: the agent's own evidence procedure (`LoopContext.learn`: diagnose, recommend, events,
  logs, history, signals), the finding to heal (the top one), its fingerprint, and whether git
  defines the object (`find_manifest`). A workload with nothing wrong whose Service of the same
  name routes nowhere (a selector matching no pod, a wrong targetPort) is one thing to people
  ("fix the web service"): the run heals that Service instead, and says so.
- recommend: the fixes for that finding, ranked by `ranking` (memory of past outcomes moves
  them; the reason is kept).
- plan: the next usable fix written down as `pending` with its idempotency key, and
  checkpointed, before anything changes.
- decide: for a pull request, the policy store's decision (`mutation.decide`), its proposal id
  checkpointed before any PR exists; for direct writes, each step judged by the kube gate on a
  dry run (`mutation.judge_direct`), a step it gives to a person proposed to the policy store.
- approval: when policy asks a person, the run stops here durably (an interrupt; the result says
  which request waits). Any resume, or a plain re-run of the thread, makes the node claim the
  request's end through the policy server (`claim_approval`, waiter = the thread): the answer
  comes from the store, never from the resume value, and is taken up once. Granted: mutate with
  that proposal (direct writes: decide again, for the next step a person must approve); denied,
  expired or taken by another: escalate with the reason.
- mutate: `mutation.apply_*` for the pending fix; it checks what already happened under that
  key, so a resumed run completes, never repeats.
- validate: `validation.validate`; a fix that held is remembered as "fixed".
- rollback: undo (revert PR, rollout undo, or the fields a patch changed put back), remember
  "failed", and go on with the next fix.
- escalate / done: the outcome in words, with evidence and links. An escalation says why
  (`Escalation`: policy or a person said no, no fix offered, none usable here, every one failed)
  and never that a person must approve something: a run policy gives to a person is not
  escalated, it waits at `approval`, naming the request and who may answer it.

Each fix tried is counted when its attempt ends (`kubecrew_fix_attempts_total`: held, failed,
refused) and each run when it ends at done or escalate (`kubecrew_heals_total`: fixed, healthy,
escalated and why); the node's span (core.telemetry.graphs) carries the fix and the outcome.

Tools, learn procedure and settings travel in the run's `LoopContext`; the state is data only.
Whoever streams the run hears, besides each node, the fix being tried and what mutate and
validate wait for (`agents.runtime.progress`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents.runtime import memory
from agents.runtime.errors import ToolFailed
from agents.runtime.loop import mutation, ranking
from agents.runtime.loop.state import Attempt, Escalation, LoopState, Pending, Target
from agents.runtime.loop.validation import LoopSettings, validate
from agents.runtime.progress import Progress, report
from agents.runtime.toolbox import Toolbox
from core import telemetry
from core.telemetry import metrics

Learn = Callable[[Toolbox, Target], Awaitable[list[dict[str, Any]]]]
SERVED = ("Deployment", "StatefulSet", "DaemonSet")  # workloads a Service of their name fronts


@dataclass(frozen=True)
class LoopContext:
    toolbox: Toolbox
    learn: Learn
    agent: str
    thread: str
    settings: LoopSettings = field(default_factory=LoopSettings)


async def learn(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, target = runtime.context, state["target"]
    seen = await context.learn(context.toolbox, target)
    mine = _findings(seen, target)
    if not mine and target["kind"] in SERVED:
        service = await _broken_service(context.toolbox, target)
        if service is not None:  # the workload is fine; its Service routes nowhere
            target, seen = service, await context.learn(context.toolbox, service)
            mine = _findings(seen, service)
    update: dict[str, Any] = {
        "target": target,
        "observations": seen,
        "finding": mine[0] if mine else {},
    }
    if mine:
        ref = mine[0]["ref"]
        update["fingerprint"] = memory.fingerprint(
            mine[0]["code"], ref["kind"], ref["namespace"], ref["name"]
        )
    update["managed"] = await mutation.managed_manifest(context.toolbox, target)
    return update


def _findings(seen: list[dict[str, Any]], target: Target) -> list[dict[str, Any]]:
    found = [f for o in seen if o["tool"] == "diagnose" for f in o["result"].get("findings", [])]
    return [f for f in found if _concerns(f, target)]


async def _broken_service(toolbox: Toolbox, workload: Target) -> Target | None:
    """The Service named like `workload`, when diagnose finds something wrong with it."""
    if not toolbox.has("diagnose"):
        return None
    service = Target(kind="Service", name=workload["name"], namespace=workload["namespace"])
    try:
        found = await toolbox.call(
            "diagnose", namespace=service["namespace"], kind="service", name=service["name"]
        )
    except ToolFailed as exc:
        if exc.unreachable:
            raise
        return None
    own = [f for f in found.get("findings", []) if (f.get("ref") or {}).get("kind") == "Service"]
    return service if own else None


def after_learn(state: LoopState) -> Literal["recommend", "done"]:
    return "recommend" if state.get("finding") else "done"


async def recommend(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, finding, target = runtime.context, state["finding"], state["target"]
    offered = [
        fix
        for o in state.get("observations", [])
        if o["tool"] == "recommend"
        for fix in o["result"].get("fixes", [])
        if fix.get("finding") == finding["code"]
    ]
    past = await ranking.past_outcomes(runtime.store, context.agent, state["fingerprint"])
    elsewhere = []  # other objects the fixes change that git defines: never written behind it
    for other in {ranking.key(f["target"]) for f in offered if f.get("target") != target}:
        kind, namespace, name = other.split("/", 2)
        shown = Target(kind=kind, name=name, namespace=namespace)
        if await mutation.managed_manifest(context.toolbox, shown):
            elsewhere.append(other)
    fixes = ranking.rank(
        offered,
        past,
        target=target,
        managed=bool(state.get("managed")),
        tools=context.toolbox.tools,
        elsewhere=elsewhere,
    )
    return {"fixes": fixes, "index": 0, "pending": None, "applied": None}


async def plan(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    index = _next_usable(state, state.get("index", 0))
    ranked = state["fixes"][index]
    of = f"fix {index + 1} of {len(state['fixes'])}"
    report(Progress("trying", f"{ranked['fix']['title']} ({of}, ranked by {ranked['reason']})"))
    telemetry.annotate(
        {"kubecrew.fix.title": ranked["fix"]["title"], "kubecrew.fix.rank": index + 1}
    )
    digest = hashlib.sha1(
        f"{runtime.context.thread}/{index}/{ranked['fix']['title']}".encode()
    ).hexdigest()[:10]
    target = state["target"]
    own = ranked["fix"].get("target") == target  # else another object, which git does not define
    channel: Literal["gitops", "direct"] = "gitops" if state.get("managed") and own else "direct"
    key = f"kubecrew/heal-{target['name']}-{digest}" if channel == "gitops" else f"heal-{digest}"
    return {
        "index": index,
        "pending": Pending(key=key, channel=channel, fix=ranked["fix"], proposal=""),
    }


def after_recommend(state: LoopState) -> Literal["plan", "escalate"]:
    return (
        "plan"
        if _next_usable(state, state.get("index", 0)) < len(state.get("fixes", []))
        else "escalate"
    )


async def decide(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, pending, target = runtime.context, state["pending"], state["target"]
    assert pending is not None  # plan always precedes decide
    if pending["channel"] == "gitops" and pending["proposal"]:
        return {}
    try:
        if pending["channel"] == "direct":
            judged = await mutation.judge_direct(
                context.toolbox, pending, target, agent=context.agent
            )
            return {"pending": judged}
        proposal = await mutation.decide(
            context.toolbox, target, pending["fix"], key=pending["key"], agent=context.agent
        )
    except mutation.NeedsApproval as asked:
        proposal = asked.proposal if pending["channel"] == "gitops" else pending["proposal"]
        return {
            "pending": Pending(**{**pending, "proposal": proposal}),
            "approval": asked.request,
            "asked": asked.message,
        }
    except (mutation.Refused, ToolFailed) as exc:
        return _refused(state, [exc.message], agent=context.agent)
    return {"pending": Pending(**{**pending, "proposal": proposal})}


def after_decide(state: LoopState) -> Literal["approval", "mutate", "plan", "escalate"]:
    if state.get("approval"):
        return "approval"
    return "mutate" if state.get("pending") else after_recommend(state)


async def mutate(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, target, pending = runtime.context, state["target"], state["pending"]
    assert pending is not None  # plan always precedes mutate
    try:
        if pending["channel"] == "gitops":
            applied = await mutation.apply_gitops(
                context.toolbox, pending, target, state["managed"], agent=context.agent
            )
        else:
            applied = await mutation.apply_direct(
                context.toolbox, pending, target, settings=context.settings
            )
    except (mutation.Refused, ToolFailed) as exc:
        return _refused(state, [exc.message], agent=context.agent)
    return {"pending": pending, "applied": applied}


def after_mutate(state: LoopState) -> Literal["validate", "plan", "escalate"]:
    return "validate" if state.get("applied") else after_recommend(state)


async def check(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, target, applied = runtime.context, state["target"], state["applied"]
    verdict = await validate(context.toolbox, target, state["finding"]["code"], context.settings)
    fix = state["fixes"][state["index"]]["fix"]["title"]
    if not verdict.held:
        return {"verdict_evidence": verdict.evidence}
    attempt = Attempt(
        fix=fix, applied=applied, verdict="held", evidence=verdict.evidence, undone=""
    )
    metrics.fix_tried(context.agent, applied["channel"] if applied else "", "held")
    await _remember(state, runtime, fix, "fixed")
    return {"attempts": [attempt], "pending": None, "outcome": "fixed"}


def after_validate(state: LoopState) -> Literal["done", "rollback"]:
    return "done" if state.get("outcome") == "fixed" else "rollback"


async def rollback(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    context, target, applied = runtime.context, state["target"], state["applied"]
    assert applied is not None
    undone = await mutation.undo(context.toolbox, applied, target, agent=context.agent)
    fix = state["fixes"][state["index"]]["fix"]["title"]
    attempt = Attempt(
        fix=fix,
        applied=applied,
        verdict="failed",
        evidence=list(state.get("verdict_evidence", [])),
        undone=undone,
    )
    metrics.fix_tried(context.agent, applied["channel"], "failed")
    await _remember(state, runtime, fix, "failed")
    return {"attempts": [attempt], "pending": None, "applied": None, "index": state["index"] + 1}


async def escalate(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    target = state["target"]
    lines = [f"I could not heal {_name(target)}: {state['finding'].get('summary', '')}"]
    lines.extend(_attempt_lines(state))
    untried = [r for r in state.get("fixes", []) if not r["usable"]]
    lines.extend(f"Not tried: {r['fix']['title']} ({r['reason']})" for r in untried)
    why = state.get("escalation") or _why(state)
    lines.append(ENDINGS[why])
    metrics.heal_ended(runtime.context.agent, "escalated", why)
    telemetry.annotate({"kubecrew.heal.outcome": "escalated", "kubecrew.heal.escalation": why})
    return {"outcome": "escalated", "escalation": why, "summary": "\n".join(lines)}


ENDINGS: dict[Escalation, str] = {
    "denied": "A person needs to decide what to do instead: the approval was not granted (see "
    "above), so nothing more is tried and nothing changed.",
    "refused": "Policy would not let the fixes through (its reasons are above), so nothing "
    "changed. No approval request waits: whoever takes this up decides on a different fix or "
    "on the policy, with the evidence above and in the audit log.",
    "no-fix": "recommend offered no fix for this finding: the cause is in the application or its "
    "config. I changed nothing, and no approval request waits: the workload's owner changes the "
    "application or its config, with the evidence above.",
    "unusable": "None of the fixes offered can be carried out here (why is above), so I changed "
    "nothing, and no approval request waits: a person applies one by hand, or gives the agent "
    "what it lacks.",
    "failed": "Every fix tried failed validation and was put back (above). No approval request "
    "waits: the evidence is above and in the audit log for whoever takes it up.",
}


def _why(state: LoopState) -> Escalation:
    verdicts = {a["verdict"] for a in state.get("attempts", [])}
    if not state.get("fixes"):
        return "no-fix"
    if "refused" in verdicts:
        return "refused"
    return "failed" if "failed" in verdicts else "unusable"


async def done(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    target = state["target"]
    outcome = "fixed" if state.get("outcome") == "fixed" else "healthy"
    metrics.heal_ended(runtime.context.agent, outcome)
    telemetry.annotate({"kubecrew.heal.outcome": outcome})
    if outcome != "fixed":
        return {
            "outcome": "healthy",
            "summary": f"{_name(target)} shows no finding to heal; I changed nothing.",
        }
    lines = [f"Healed {_name(target)}: {state['finding'].get('summary', '')}"]
    lines.extend(_attempt_lines(state))
    return {"summary": "\n".join(lines)}


async def approval(state: LoopState, runtime: Runtime[LoopContext]) -> dict[str, Any]:
    """Wait, durably, for the person; the answer is claimed from the store, once."""
    context, request = runtime.context, state["approval"]
    try:
        claimed = await context.toolbox.call(
            "claim_approval", request_id=request, waiter=context.thread
        )
    except ToolFailed as exc:  # taken up by another run, or the request is gone
        refused = _refused(state, [exc.message], agent=context.agent)
        return {"approval": "", "asked": "", **refused}
    if not claimed.get("claimed"):
        interrupt(
            {"approval": request, "asked": state.get("asked", ""), "pending": state["pending"]}
        )
        return {}  # resumed while still pending: the router comes back here to wait again
    decision = claimed.get("decision") or {}
    if claimed.get("state") == "granted" and decision.get("outcome") == "approved":
        return {"approval": "", "asked": ""}
    ended = f"approval {request} {claimed.get('state')}: proposal {claimed.get('proposal')} " + (
        f"was {decision.get('outcome')}" if decision else "was not approved"
    )
    refused = _refused(state, [ended, *decision.get("reasons", [])], agent=context.agent)
    return {"approval": "", "asked": "", "escalation": "denied", **refused}


def after_approval(state: LoopState) -> Literal["approval", "decide", "mutate", "escalate"]:
    """A person's "no" (or silence) ends the run: trying the next fix would only ask again.
    A direct fix is judged again once granted: another of its steps may need a person too."""
    if state.get("approval"):
        return "approval"
    pending = state.get("pending")
    if not pending:
        return "escalate"
    return "decide" if pending["channel"] == "direct" else "mutate"


def _refused(state: LoopState, evidence: list[str], *, agent: str) -> dict[str, Any]:
    pending = state["pending"]
    assert pending is not None
    metrics.fix_tried(agent, pending["channel"], "refused")
    attempt = Attempt(
        fix=pending["fix"]["title"], applied=None, verdict="refused", evidence=evidence, undone=""
    )
    return {
        "pending": None,
        "applied": None,
        "attempts": [attempt],
        "index": state.get("index", 0) + 1,
    }


async def _remember(
    state: LoopState, runtime: Runtime[LoopContext], fix: str, outcome: str
) -> None:
    if runtime.store is None:
        return
    finding, target = state["finding"], state["target"]
    attempt = len(state.get("attempts", []))
    await memory.remember(
        runtime.store,
        runtime.context.agent,
        memory.Incident(
            fingerprint=state["fingerprint"],
            code=finding["code"],
            target=_name(target),
            summary=finding.get("summary", ""),
            fix=fix,
            thread=f"{runtime.context.thread}#{attempt}",
            at=memory.now(),
            outcome=outcome,
        ),
    )


def _attempt_lines(state: LoopState) -> list[str]:
    lines = []
    ranked = {r["fix"]["title"]: r for r in state.get("fixes", [])}
    for n, a in enumerate(state.get("attempts", []), 1):
        rank = ranked.get(a["fix"])
        lines.append(
            f"Attempt {n}: {a['fix']} -> {a['verdict']}"
            + (f" (ranked by {rank['reason']})" if rank else "")
        )
        if a["applied"]:
            lines.extend(f"  {note}" for note in a["applied"]["notes"])
        lines.extend(f"  {line}" for line in a["evidence"])
        if a["undone"]:
            lines.append(f"  undone: {a['undone']}")
    return lines


def _next_usable(state: LoopState, index: int) -> int:
    fixes = state.get("fixes", [])
    while index < len(fixes) and not fixes[index]["usable"]:
        index += 1
    return index


def _concerns(finding: dict[str, Any], target: Target) -> bool:
    ref = finding.get("ref") or {}
    if ref.get("kind") == target["kind"] and ref.get("name") == target["name"]:
        return True
    return any(
        r.get("kind") == target["kind"] and r.get("name") == target["name"]
        for r in finding.get("related", [])
    )


def _name(target: Target) -> str:
    return f"{target['kind']} {target['name']} in {target['namespace']}"


builder = StateGraph(LoopState, context_schema=LoopContext)
builder.add_node("learn", learn)
builder.add_node("recommend", recommend)
builder.add_node("plan", plan)
builder.add_node("decide", decide)
builder.add_node("approval", approval)
builder.add_node("mutate", mutate)
builder.add_node("validate", check)
builder.add_node("rollback", rollback)
builder.add_node("escalate", escalate)
builder.add_node("done", done)
builder.add_edge(START, "learn")
builder.add_conditional_edges("learn", after_learn)
builder.add_conditional_edges("recommend", after_recommend)
builder.add_edge("plan", "decide")
builder.add_conditional_edges("decide", after_decide)
builder.add_conditional_edges("approval", after_approval)
builder.add_conditional_edges("mutate", after_mutate)
builder.add_conditional_edges("validate", after_validate)
builder.add_conditional_edges("rollback", after_recommend)
builder.add_edge("escalate", END)
builder.add_edge("done", END)
