"""Pod analyzers: why pods do not pull, start, stay up, get scheduled or become ready.

Each rule reads a pod's status (container waiting/terminated states, conditions) and the events
about it, and reports on the object a person would change (`workload_of`: the Deployment rather
than its ReplicaSet's pods), so 300 crashing replicas make one Finding with the pod names in
`related`, not 300. Rules here: image pull failures, Pending with the scheduler's reason and the
constraint behind it (the taints no toleration matches, named), and failing readiness/liveness
probes (Unhealthy events; an HTTP probe that times out says the app answers too slowly). Crash
loops and OOM kills are `crashes.py`'s (with the probe that killed the container, if one did),
missing ConfigMaps and Secrets `references.py`'s; this module dispatches each container status
to its rule.

It knows pod and event shapes; it knows nothing of fixes (`recommend.py`) or of the MCP layer.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from mcp_servers.kube.diagnosis import crashes, references
from mcp_servers.kube.diagnosis.evidence import pod_events, pod_finding, spec_container
from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

_PULL = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_TAINT = re.compile(r"untolerated taint \{([^:}]+): ?([^}]*)\}")
_TIMEOUT = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
MAX_RELATED = 20


def analyze(snapshot: Snapshot) -> list[Finding]:
    grouped: dict[tuple[ObjectRef, str, str], list[tuple[Json, Finding]]] = {}
    for pod in snapshot.of("pods"):
        for finding in _pod_findings(snapshot, pod):
            key = (finding.ref, finding.code, str(finding.details.get("container", "")))
            grouped.setdefault(key, []).append((pod, finding))
    return [_merge(entries) for entries in grouped.values()]


def _merge(entries: list[tuple[Json, Finding]]) -> Finding:
    """One finding for a workload's pods: the first pod's evidence, every pod named."""
    pods = [ObjectRef("Pod", name_of(p), namespace_of(p)) for p, _ in entries]
    first = entries[0][1]
    summary = first.summary
    if len(pods) > 1:
        summary = f"{summary} ({len(pods)} pods)"
    return Finding(
        code=first.code,
        ref=first.ref,
        severity=first.severity,
        summary=summary,
        evidence=first.evidence,
        confidence=first.confidence,
        related=tuple(pods[:MAX_RELATED]),
        details={**first.details, "pods": len(pods)},
    )


def _pod_findings(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    found = False
    for cstatus in statuses:
        for finding in _container_findings(snapshot, pod, cstatus):
            found = True
            yield finding
    if found:
        return
    if phase == "Pending":
        yield from _pending(snapshot, pod)
    yield from references.mount_failures(snapshot, pod)
    yield from _probes(snapshot, pod)


def _container_findings(snapshot: Snapshot, pod: Json, cstatus: Json) -> Iterator[Finding]:
    name = str(cstatus.get("name"))
    state = cstatus.get("state") or {}
    waiting = state.get("waiting") or {}
    reason, message = str(waiting.get("reason") or ""), str(waiting.get("message") or "")
    last = (cstatus.get("lastState") or {}).get("terminated") or {}
    where = f"Pod {name_of(pod)} container {name}"
    if reason in _PULL:
        image = str(spec_container(pod, name).get("image") or cstatus.get("image") or "")
        yield pod_finding(
            snapshot,
            pod,
            "ImagePullBackOff",
            "critical",
            f"container {name} cannot pull image {image!r}: {reason}",
            [
                Evidence("status", where, f"waiting: {reason}: {message}"),
                *pod_events(snapshot, pod, "Failed", "BackOff"),
            ],
            0.95,
            container=name,
            image=image,
        )
    elif (
        last.get("reason") == "OOMKilled"
        or state.get("terminated", {}).get("reason") == "OOMKilled"
    ):
        yield crashes.oom(snapshot, pod, cstatus, where)
    elif reason == "CreateContainerConfigError":
        yield from references.config_error(snapshot, pod, name, message, where)
    elif reason in ("CrashLoopBackOff", "RunContainerError", "StartError") or (
        last and int(cstatus.get("restartCount") or 0) > 2 and not cstatus.get("ready")
    ):
        found = crashes.crash_loop(snapshot, pod, cstatus, where)
        # exit code 137 only says "killed": a liveness or startup probe's kill says why
        events = pod_events(snapshot, pod, "Unhealthy", "Killing", limit=20)
        killed = [e for e in events if _kill(e.text)]
        yield dataclasses.replace(found, evidence=(*found.evidence, *killed[-2:]))


_CONSTRAINTS = (
    ("Insufficient", "resources"),
    ("node affinity/selector", "node-selector"),
    ("untolerated taint", "taints"),
    ("persistentvolumeclaim", "volume"),
    ("volume node affinity", "volume"),
    ("anti-affinity", "pod-affinity"),
    ("affinity rules", "pod-affinity"),
    ("unschedulable", "cordoned"),
    ("free ports", "host-ports"),
)


def _pending(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            message = str(cond.get("message") or "")
            constraints = sorted({c for text, c in _CONSTRAINTS if text.lower() in message.lower()})
            resources = [r.rstrip(".,") for r in re.findall(r"Insufficient ([\w./-]+)", message)]
            taints = sorted({(k.strip(), v.strip()) for k, v in _TAINT.findall(message)})
            yield pod_finding(
                snapshot,
                pod,
                "Unschedulable",
                "high",
                f"pod cannot be scheduled: {message or cond.get('reason')}",
                [
                    Evidence(
                        "condition",
                        f"Pod {name_of(pod)} condition PodScheduled",
                        f"False/{cond.get('reason')}: {message}",
                    ),
                    *pod_events(snapshot, pod, "FailedScheduling", limit=1),
                ],
                0.9,
                constraints=constraints,
                resources=sorted(set(resources)),
                taints=[{"key": k, "value": v} for k, v in taints],
                message=message,
            )


def _probes(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    unhealthy = pod_events(snapshot, pod, "Unhealthy", limit=3)
    if not unhealthy:
        return
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if statuses and all(s.get("ready") for s in statuses):
        return
    slow = _timed_out(unhealthy)
    for container in (pod.get("spec") or {}).get("containers") or []:
        ports = [p.get("containerPort") for p in container.get("ports") or []]
        for probe_kind in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = container.get(probe_kind) or {}
            handler = probe.get("httpGet") or probe.get("tcpSocket") or {}
            port = handler.get("port")
            if port is None:
                continue
            wrong = _resolve_port(container, port) not in ports and bool(ports)
            timed_out = slow and not wrong and "httpGet" in probe
            why = f": port {port} is not a container port ({ports})" if wrong else ""
            if timed_out:
                timeout = probe.get("timeoutSeconds") or 1
                why = f": the app answers slower than the probe's timeoutSeconds ({timeout}s)"
            yield pod_finding(
                snapshot,
                pod,
                "ProbeFailing",
                "high",
                f"{probe_kind} of container {container.get('name')} fails{why}",
                [
                    *unhealthy,
                    Evidence(
                        "spec",
                        f"Pod {name_of(pod)} container {container.get('name')}",
                        f"{probe_kind}: {probe}",
                    ),
                ],
                0.9 if wrong else 0.6,
                container=str(container.get("name")),
                probe=probe_kind,
                port=port,
                ports=ports,
                wrong_port=wrong,
                timed_out=timed_out,
            )


def _kill(message: str) -> bool:
    return message.startswith(("Liveness probe failed", "Startup probe failed")) or (
        "probe, will be restarted" in message
    )


def _timed_out(unhealthy: list[Evidence]) -> bool:
    """The app answered the probe too late (the kubelet's HTTP and gRPC timeout messages)."""
    return any(_TIMEOUT in e.text or "did not complete within" in e.text for e in unhealthy)


def _resolve_port(container: Json, port: object) -> object:
    if isinstance(port, str):
        for entry in container.get("ports") or []:
            if entry.get("name") == port:
                return entry.get("containerPort")
    return port
