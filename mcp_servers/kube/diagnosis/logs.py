"""Log analyzer: running, Ready pods whose recent log lines are mostly errors.

A pod that serves 5xx answers or fails its work while staying Ready shows nothing in its status;
its log is where it says so. For a bounded number of workloads (the newest first: errors right
after a rollout matter most) this reads the last lines of one Ready pod's containers and counts
the lines that are errors by any common convention (a logfmt or JSON `level` of error/fatal,
`[error]`, a leading `ERROR`, a panic or traceback, an HTTP 5xx in an access line). Many errors
in few lines make a `LogErrors` Finding on the workload with the lines as evidence.

Pods that crash, wait or fail probes are the pod rules' business, and are skipped here. An error
rate or latency that an application never logs is invisible to the Kubernetes API (only request
metrics show it); this analyzer sees what the logs say, no more. It reads logs, nothing else.
"""

from __future__ import annotations

import re

from mcp_servers.kube.diagnosis.evidence import pod_finding
from mcp_servers.kube.diagnosis.findings import Evidence, Finding
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of

MAX_WORKLOADS = 10  # log reads per diagnosis: a 5,000-pod namespace stays cheap
TAIL = 50
MIN_ERRORS, MIN_SHARE = 3, 0.2
_ERROR = re.compile(
    r"""("?level"?\s*[=:]\s*"?(error|err|fatal|crit|critical|panic)\b)"""
    r"|(\[(error|crit|alert|emerg)\])"
    r"|(^\s*(ERROR|FATAL|PANIC|CRITICAL)\b)"
    r"|(\bpanic:|Traceback \(most recent call last\)|\bException\b)"
    # the status right after the request ("GET /x 500", or '"GET /x HTTP/1.1" 500'), never
    # a later number such as a 512-byte body
    r'|(\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+\S+(\s+HTTP/[\d.]+")?\s+5\d\d\b)',
    re.IGNORECASE,
)


def is_error(line: str) -> bool:
    return bool(_ERROR.search(line))


def analyze(snapshot: Snapshot) -> list[Finding]:
    if not snapshot.read("pods"):
        return []
    chosen: dict[tuple[str, str, str], Json] = {}
    newest_first = sorted(
        snapshot.of("pods"),
        key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""),
        reverse=True,
    )
    for pod in newest_first:
        if len(chosen) >= MAX_WORKLOADS:
            break
        key = (namespace_of(pod), *workload_of(snapshot, pod))
        if key not in chosen and _serving(pod):
            chosen[key] = pod
    found = []
    for pod in chosen.values():
        finding = _errors(snapshot, pod)
        if finding is not None:
            found.append(finding)
    return found


def _serving(pod: Json) -> bool:
    """Running, every container ready and never restarted: a pod no other rule speaks about."""
    status = pod.get("status") or {}
    statuses = status.get("containerStatuses") or []
    return (
        status.get("phase") == "Running"
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
        and bool(statuses)
        and all(s.get("ready") and not s.get("restartCount") for s in statuses)
    )


def _errors(snapshot: Snapshot, pod: Json) -> Finding | None:
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = str(container.get("name"))
        lines = snapshot.log_tail(namespace_of(pod), name_of(pod), name, previous=False, lines=TAIL)
        errors = [line for line in lines if is_error(line)]
        if len(errors) < MIN_ERRORS or len(errors) < MIN_SHARE * len(lines):
            continue
        share = len(errors) / len(lines)
        where = f"Pod {name_of(pod)} container {name}"
        return pod_finding(
            snapshot,
            pod,
            "LogErrors",
            "medium",
            f"container {name} is Ready but {len(errors)} of its last {len(lines)} log lines "
            "are errors",
            [Evidence("log", where, line) for line in errors[-5:]],  # the latest errors, verbatim
            0.75 if share >= 0.5 else 0.6,
            container=name,
            errors=len(errors),
            lines=len(lines),
            image=str(container.get("image") or ""),
        )
    return None
