"""Containers that die: CrashLoopBackOff (with the previous instance's last log lines) and
OOMKilled (with the limit, the observed usage, and how long each instance lived).

How long a killed container ran tells a leak from an undersized limit: a process that dies at
its limit moments after starting needs a bigger limit, one that ran for a while first grows
until killed (a leak, or load), and a bigger limit only delays its next kill. `details["leak"]`
carries that reading for the playbook, which weighs it against the rollout history.

It reads container statuses, metrics and logs; it knows nothing of fixes.
"""

from __future__ import annotations

from core.quantity import MIB, parse
from mcp_servers.kube.diagnosis.evidence import pod_finding, seconds_between, spec_container
from mcp_servers.kube.diagnosis.findings import Evidence, Finding
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

LEAK_SECONDS = 10.0  # an instance that lived this long before its OOM kill grew into it


def crash_loop(snapshot: Snapshot, pod: Json, cstatus: Json, where: str) -> Finding:
    name = str(cstatus.get("name"))
    waiting = (cstatus.get("state") or {}).get("waiting") or {}
    reason, message = str(waiting.get("reason") or ""), str(waiting.get("message") or "")
    last = (cstatus.get("lastState") or {}).get("terminated") or {}
    logs = snapshot.log_tail(namespace_of(pod), name_of(pod), name, previous=True)
    exit_code = last.get("exitCode")
    ran = seconds_between(last.get("startedAt"), last.get("finishedAt"))
    lived = f", after running {ran:.0f} s" if ran is not None else ""
    evidence = [
        Evidence("status", where, f"waiting: {reason or 'restarting'}: {message}".strip()),
        Evidence(
            "status",
            where,
            f"last exit: code {exit_code}, reason {last.get('reason')}{lived}, "
            f"restarts {cstatus.get('restartCount')}",
        ),
        *[Evidence("log", f"{where} (previous instance)", line) for line in logs[-10:]],
    ]
    spec = spec_container(pod, name)
    return pod_finding(
        snapshot,
        pod,
        "CrashLoopBackOff",
        "critical",
        f"container {name} keeps exiting (code {exit_code}) and is restarted in back-off",
        evidence,
        0.9,
        container=name,
        exit_code=exit_code,
        command=spec.get("command"),
        args=spec.get("args"),
        last_logs=logs[-5:],
    )


def oom(snapshot: Snapshot, pod: Json, cstatus: Json, where: str) -> Finding:
    name = str(cstatus.get("name"))
    state = cstatus.get("state") or {}
    killed = state.get("terminated") or (cstatus.get("lastState") or {}).get("terminated") or {}
    resources = spec_container(pod, name).get("resources") or {}
    declared = (resources.get("limits") or {}).get("memory")
    limit = parse(declared)
    ran = seconds_between(killed.get("startedAt"), killed.get("finishedAt"))
    leak = ran is not None and ran >= LEAK_SECONDS
    evidence = [
        Evidence(
            "status",
            where,
            f"last state: terminated, reason OOMKilled, exit code {killed.get('exitCode', 137)}, "
            f"restarts {cstatus.get('restartCount')}",
        ),
        Evidence(
            "spec",
            where,
            f"memory limit {declared}, request {(resources.get('requests') or {}).get('memory')}",
        ),
    ]
    if ran is not None:
        reading = (
            "memory grows while it runs until the limit is reached (a leak, or growing load)"
            if leak
            else "it needs more than its limit to start"
        )
        evidence.append(Evidence("status", where, f"killed {ran:.0f} s after starting: {reading}"))
    usage = _usage(snapshot, pod, cstatus, where, evidence)
    return pod_finding(
        snapshot,
        pod,
        "OOMKilled",
        "critical",
        f"container {name} is killed for using more memory than its limit "
        f"({declared or 'no limit'})",
        evidence,
        0.95,
        container=name,
        limit=limit,
        usage=usage,
        ran_seconds=ran,
        leak=leak,
    )


def _usage(
    snapshot: Snapshot, pod: Json, cstatus: Json, where: str, evidence: list[Evidence]
) -> float | None:
    """The container's memory use from metrics.k8s.io, with its age at the sample as evidence."""
    name = str(cstatus.get("name"))
    usage = parse(snapshot.usage(namespace_of(pod), name_of(pod), name).get("memory"))
    if usage is None:
        return None
    metrics = snapshot.by_name("podmetrics", namespace_of(pod), name_of(pod)) or {}
    started = ((cstatus.get("state") or {}).get("running") or {}).get("startedAt")
    age = seconds_between(started, metrics.get("timestamp"))
    when = f" {age:.0f} s after its restart" if age is not None and age >= 0 else ""
    evidence.append(
        Evidence("metric", f"metrics.k8s.io {where}", f"memory usage {usage / MIB:.0f}Mi{when}")
    )
    return usage
