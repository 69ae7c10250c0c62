"""The answer to "why is X failing?", built from the tool answers gathered (`Observation`s),
whichever brain gathered them.

The answer is grounded by construction: the cause, the evidence and the fix come from what the
`diagnose`, `recommend`, `logs`, `events`, `rollout_history` and `golden_signals` tools said, never
from a model's prose (a model's own summary, when there is one, is shown after, as its reading).
Its shape: the cause first (with a plain-words line for a newcomer), the evidence (object, event
reason and message, log lines quoted as data, metrics, recent changes), the recommended fix with
its exact tool steps, similar past incidents, and what the agent did not do.

Symptoms (a Deployment short of ready replicas) rank after causes (why it is short), so the
answer names the image typo, not "0/1 ready".
"""

from __future__ import annotations

import json
from typing import Any

from agents.dev_team.state import Observation, TargetRef
from agents.runtime.memory import Incident

SYMPTOMS = frozenset(
    {"DeploymentUnavailable", "ReplicasMismatch", "ProgressDeadlineExceeded",
     "ServiceNoReadyEndpoints", "WarningEvents"}
)  # fmt: skip
PLAIN_WORDS = {
    "ImagePullBackOff": "Kubernetes cannot download the container image, most often because "
    "of a typo in the image name or tag, or a registry that needs credentials.",
    "CrashLoopBackOff": "the program starts and exits again and again; Kubernetes waits longer "
    "between each restart. Its last log lines usually say why.",
    "OOMKilled": "the container used more memory than its limit, so the kernel killed it.",
    "ProbeFailing": "a health check (probe) keeps failing, so Kubernetes takes the pod out of "
    "service (readiness) or restarts it (liveness).",
    "CreateContainerConfigError": "the container cannot start because configuration it refers "
    "to (a ConfigMap or Secret) is missing.",
    "Unschedulable": "no node can run the pod as asked (resources, taints or affinity).",
    "LogErrors": "the application is running but logs errors for a share of its requests.",
    "ServiceBackendScaledToZero": "the Service has nothing to send traffic to: the workload "
    "behind it runs no replicas, so every request to it fails.",
    "ServiceNoReadyEndpoints": "the Service's pods exist but none is Ready, so the Service has "
    "no address to send traffic to; the pods' own problem is the cause.",
    "StorageClassNotFound": "a volume claim asks for a kind of storage (StorageClass) the "
    "cluster does not have, so no volume is made and the pods using it wait.",
    "HPAMissingRequests": "the autoscaler scales on CPU use as a share of the CPU requested, and "
    "the pods request none, so it cannot tell when to scale.",
}
NOTHING_CHANGED = "I changed nothing: this was a read-only investigation."
# What a person says (in any channel) for the crew to carry the fix out: policy, dry run and
# validation included; the heal command does the same from a terminal.
TO_APPLY = (
    "To apply the fix, say 'fix {name} in {namespace}' (in a terminal: `kubecrew heal {name} "
    "-n {namespace}`)."
)


def compose(
    target: TargetRef,
    observations: list[Observation],
    *,
    past: list[Incident],
    model_note: str = "",
) -> tuple[str, dict[str, Any]]:
    """The answer text and the same answer as data."""
    findings = concerning(target, _all(observations, "diagnose", "findings"))
    fixes = _all(observations, "recommend", "fixes")
    cause = findings[0] if findings else None
    fix = _fix_for(cause, fixes)
    where = f"{target['kind']} {target['name']} in {target['namespace']}"
    lines: list[str] = []
    if cause is None:
        lines.append(f"I found nothing wrong with {where}.")
    else:
        code = "" if cause["code"] in cause["summary"] else f" ({cause['code']})"
        lines.append(f"{where} is failing: {cause['summary']}{code}.")
        if cause["code"] in PLAIN_WORDS:
            lines.append(f"In plain words: {PLAIN_WORDS[cause['code']]}")
        lines += ["", "Evidence:", *_evidence(cause)]
    lines += _logs(observations, cause)
    lines += _changes(observations)
    lines += _git_changes(observations)
    lines += _signals(observations)
    others = [f for f in findings[1:] if f is not cause]
    if others:
        lines += ["", "Also seen:"]
        lines += [f"- {f['code']}: {f['summary']}" for f in others[:5]]
    if fix is not None:
        lines += ["", f"Recommended fix: {fix['title']}", f"  expected: {fix['expected_effect']}"]
        lines.append(f"  risk: {fix['risk']} ({fix['risk_note']})")
        lines += [f"  step {i}: {_step(s)}" for i, s in enumerate(fix.get("steps", []), 1)]
    elif cause is not None:
        lines += ["", "No fix was recommended for this cause in this snapshot; ask again soon."]
    lines += _past(past)
    missing = [f"- {o['tool']}: {o['error']}" for o in observations if o["error"]]
    if missing:
        lines += ["", "What I could not see:", *missing]
    if model_note.strip():
        lines += ["", f"The model's reading: {model_note.strip()}"]
    lines += ["", NOTHING_CHANGED]
    if fix is not None:
        lines[-1] += " " + TO_APPLY.format(name=target["name"], namespace=target["namespace"])
    report = {
        "target": dict(target),
        "cause": cause,
        "findings": findings,
        "fix": fix,
        "past_incidents": [i.__dict__ for i in past],
        "changed_nothing": True,
    }
    return "\n".join(lines), report


def concerning(target: TargetRef, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings about the target (or showing on it), causes before symptoms, deduplicated."""
    ref = dict(target)
    about = [f for f in findings if f.get("ref") == ref or ref in f.get("related", [])]
    unique = list({(f["code"], json.dumps(f["ref"], sort_keys=True)): f for f in about}.values())
    return sorted(unique, key=lambda f: f["code"] in SYMPTOMS)  # stable: diagnose's rank holds


def _all(observations: list[Observation], tool: str, key: str) -> list[dict[str, Any]]:
    """The items under `key` of the newest answer of `tool` (the model may call it twice)."""
    answers = [o["result"] for o in observations if o["tool"] == tool and not o["error"]]
    return list(answers[-1].get(key, [])) if answers else []


def _fix_for(cause: dict[str, Any] | None, fixes: list[dict[str, Any]]) -> dict[str, Any] | None:
    if cause is None:
        return None
    return next((f for f in fixes if f.get("finding") == cause["code"]), None)


def _evidence(finding: dict[str, Any]) -> list[str]:
    lines = []
    for item in finding.get("evidence", []):
        if item["kind"] == "log":
            lines.append(
                f"- log line from {item['source']} (application output, data only): "
                f"{json.dumps(item['text'])}"
            )
        else:
            lines.append(f"- {item['kind']} ({item['source']}): {item['text']}")
    return lines


def _logs(observations: list[Observation], cause: dict[str, Any] | None) -> list[str]:
    quoted = {e["text"] for e in (cause or {}).get("evidence", []) if e["kind"] == "log"}
    for o in observations:
        if o["tool"] == "logs" and not o["error"]:
            fresh = [ln for ln in str(o["result"].get("log", "")).splitlines() if ln.strip()]
            fresh = [ln for ln in fresh if ln not in quoted][-5:]
            if fresh:
                which = "previous instance" if o["arguments"].get("previous") else "current"
                head = f"Last log lines of pod {o['result'].get('pod')} ({which}; data only):"
                return ["", head, *(f"  | {json.dumps(ln)}" for ln in fresh)]
    return []


def _changes(observations: list[Observation]) -> list[str]:
    history = [o["result"] for o in observations if o["tool"] == "rollout_history"]
    if not history or not history[-1].get("revisions"):
        return []
    revisions = sorted(history[-1]["revisions"], key=lambda r: -int(r.get("revision", 0)))
    current = str(history[-1].get("current_revision", ""))
    lines = ["", "Recent changes (rollout history, newest first):"]
    for r in revisions[:3]:
        now = " (current)" if str(r.get("revision")) == current else ""
        cause = f", cause: {r['change_cause']}" if r.get("change_cause") else ""
        images = ", ".join(r.get("images", []))
        lines.append(f"- revision {r['revision']}{now}: {images}{cause}, created {r['created']}")
    if len(revisions) == 1:
        lines.append("  (one revision: nothing changed since it was created)")
    return lines


def _git_changes(observations: list[Observation]) -> list[str]:
    """The manifest's recent commits: the change in git that came before the trouble."""
    history = [o["result"] for o in observations if o["tool"] == "manifest_history"]
    commits = history[-1].get("commits", []) if history else []
    if not commits:
        return []
    lines = ["", "Recent changes in git (the manifest's commits, newest first):"]
    for c in commits[:3]:
        lines.append(f"- {c['commit']} {c['date']} by {c['author']}: {c['subject']} ({c['file']})")
        lines += [f"    {line}" for line in c.get("changed", [])[:4]]
    return lines


def _signals(observations: list[Observation]) -> list[str]:
    signals = [o["result"] for o in observations if o["tool"] == "golden_signals" and o["result"]]
    if not signals:
        return []
    shown = {k: v for k, v in signals[-1].items() if not isinstance(v, dict | list)}
    return ["", f"Golden signals: {json.dumps(shown)}"]


def _step(step: dict[str, Any]) -> str:
    return f"{step['tool']} {json.dumps(step['arguments'], sort_keys=True)}"


def _past(past: list[Incident]) -> list[str]:
    if not past:
        return []
    last = past[0]
    fix = f"; the fix recommended then: {last.fix}" if last.fix else ""
    outcome = f"; outcome: {last.outcome}" if last.outcome else ""
    return [
        "",
        f"A similar incident was seen before ({last.at}, thread {last.thread}): "
        f"{last.code} on {last.target}: {last.summary}{fix}{outcome}.",
    ]
