"""Policy answers: would the policy store allow an action, judged as a dry run.

The object named is found first (typos included), then read live (its replicas are the "from"
of a scale, and rules that read the object see it as it is), then judged by the policy
server's `evaluate_action`, which records nothing and changes nothing. The answer gives the
verdict in words, the rules that fired and why, what a counter-offer would accept, who must
approve, and as whom it was judged: the policy server's own identity, which may differ from
the actor the question names ("can alice ...").

Must not know: any agent's code; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from typing import Any

import yaml

from agents.runtime.questions.asked import Answered, PolicyCheck
from agents.runtime.questions.evidence import Evidence, Json, finish, unanswered
from agents.runtime.questions.names import Ref
from agents.runtime.questions.subjects import agent_named
from agents.runtime.questions.targets import WORKLOADS, kinds_for, locate

_NODE_ACTIONS = ("drain", "cordon", "uncordon")
_SAY = {
    "allow": "Yes: policy allows",
    "reject": "No: policy rejects",
    "counter": "Not as asked: policy counters",
    "escalate": "A person decides:",
}
DRY = "a dry run (evaluate_action): nothing was changed or recorded"


async def answer(evidence: Evidence, question: PolicyCheck) -> Answered:
    if not evidence.has("evaluate_action"):
        return Answered(
            "I cannot judge that against the policies: this agent has no `evaluate_action` tool "
            "(no policy server here). Nothing was changed.",
            {"family": "policy", "rows": [], "sure": False, "unseen": ["evaluate_action"]},
        )
    if question.action in _NODE_ACTIONS:
        kinds = kinds_for("nodes")
    elif question.action == "evict":
        kinds = kinds_for("pods")
    else:
        kinds = kinds_for(question.kind, WORKLOADS[:3])
    found = await locate(evidence, "policy", question.names, question.namespace, kinds)
    if isinstance(found, Answered):
        return found
    live = await _live(evidence, found)
    current = ((live or {}).get("spec") or {}).get("replicas")
    replicas = question.replicas
    if question.action == "scale" and replicas is None and question.by is not None:
        replicas = max(0, int(current or 0) + question.by) if current is not None else None
    if question.action == "scale" and replicas is None:
        now = f" (it runs {current} now)" if current is not None else ""
        return Answered(
            f"To how many replicas would you scale {found}{now}? Ask e.g. 'may I "
            f"scale {found.name} to 2?'.",
            {"family": "policy", "clarify": True, "rows": []},
        )
    arguments: Json = {
        "action": question.action,
        "target": f"{found.kind.lower()}/{found.name}",
        "namespace": found.namespace,
        "live_object": live,
    }
    if question.action == "scale":
        arguments.update(replicas=replicas, from_replicas=current)
    judged = await evidence.call("evaluate_action", "the policies' verdict", **arguments)
    if judged is None:
        return unanswered(evidence, "policy", f"whether policy allows that for {found}")
    return _worded(evidence, question, found, judged)


async def _live(evidence: Evidence, ref: Ref) -> dict[str, Any] | None:
    got = await evidence.call(
        "get_resource",
        f"{ref} as it is now",
        kind=ref.kind,
        name=ref.name,
        namespace=ref.namespace or None,
    )
    try:
        live = yaml.safe_load(str((got or {}).get("yaml", ""))) if got else None
    except yaml.YAMLError:
        return None
    return live if isinstance(live, dict) else None


def _worded(evidence: Evidence, question: PolicyCheck, target: Ref, judged: Json) -> Answered:
    verdict = str(judged.get("verdict", ""))
    action = judged.get("action") or {}
    said = str(action.get("text") or f"{question.action} {target}")
    head = f"{_SAY.get(verdict, verdict)} {said}."
    counter = judged.get("counter") or {}
    lines = []
    if verdict == "counter" and counter:
        lines.append(f"It would accept: {_counter(counter)}.")
    for fired in (judged.get("fired") or [])[:5]:
        lines.append(f"- {fired.get('citation')} ({fired.get('effect')}): {fired.get('why')}")
    if not judged.get("fired"):
        lines += [f"- {reason}" for reason in (judged.get("reasons") or [])[:3]]
    for need in judged.get("approvals") or []:
        lines.append(
            f"Needs {need.get('min_approvals')} approval(s) from "
            f"{need.get('approvers')} ({need.get('citation')})."
        )
    lines.append(_judged_as(question, str(action.get("actor") or "")))
    rows = list(judged.get("fired") or [])
    return finish(
        evidence,
        "policy",
        head,
        lines,
        DRY,
        rows=rows,
        total=len(rows),
        verdict=verdict,
        target=str(target),
        action=action,
        applicable=judged.get("applicable") or [],
    )


def _counter(counter: Json) -> str:
    replicas = counter.get("replicas")
    if isinstance(replicas, dict) and replicas.get("to") is not None:
        replicas = replicas["to"]
    if isinstance(replicas, int):
        return f"{replicas} replica{'s' if replicas != 1 else ''}"
    return ", ".join(f"{k} {v}" for k, v in counter.items() if v not in (None, {}, []))


def _judged_as(question: PolicyCheck, identity: str) -> str:
    """As whom the dry run judged, and a warning when the question named someone else."""
    judged = f"Judged as {identity or 'the policy server identity'}"
    asked = question.actor.strip()
    if not asked or asked in ("i", "we", "me", "us"):
        return judged + "."
    agent = agent_named(asked.split())
    if agent and identity.endswith(agent):
        return judged + "."
    return f"{judged}, not as {asked}: rules about who acts may judge {asked} differently."
