"""Pod analyzers: why pods do not pull, start, stay up, get scheduled or become ready.

Each rule reads a pod's status (container waiting/terminated states, conditions) and the events
about it, and reports on the object a person would change (`workload_of`: the Deployment rather
than its ReplicaSet's pods), so 300 crashing replicas make one Finding with the pod names in
`related`, not 300. Rules: image pull failures, CrashLoopBackOff (with the previous instance's
last log lines), OOMKilled (with the limit and observed usage), CreateContainerConfigError /
FailedMount for a missing ConfigMap, Secret or key, Pending with the scheduler's reason and the
constraint behind it, and failing readiness/liveness probes (Unhealthy events).

It knows pod and event shapes; it knows nothing of fixes (`recommend.py`) or of the MCP layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mcp_servers.common.quantity import parse
from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef, Severity
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of

_PULL = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_MISSING = re.compile(r'(configmap|secret)s? "([^"]+)" not found', re.IGNORECASE)
_MISSING_KEY = re.compile(r"couldn't find key (\S+) in (ConfigMap|Secret) [^/\s]+/(\S+)")
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
    yield from _mount_failures(snapshot, pod)
    yield from _probes(snapshot, pod)


def _finding(
    snapshot: Snapshot,
    pod: Json,
    code: str,
    severity: Severity,
    summary: str,
    evidence: list[Evidence],
    confidence: float,
    **details: Any,
) -> Finding:
    kind, name = workload_of(snapshot, pod)
    namespace = namespace_of(pod)
    return Finding(
        code,
        ObjectRef(kind, name, namespace),
        severity,
        summary,
        tuple(evidence),
        confidence,
        (ObjectRef("Pod", name_of(pod), namespace),),
        {**details, "pod": name_of(pod), "namespace": namespace},
    )


def _events(snapshot: Snapshot, pod: Json, *reasons: str, limit: int = 3) -> list[Evidence]:
    found = [
        e
        for e in snapshot.events_for("Pod", namespace_of(pod), name_of(pod))
        if e.get("reason") in reasons
    ]
    return [
        Evidence("event", f"event {e.get('reason')} on Pod {name_of(pod)}", str(e.get("message")))
        for e in found[-limit:]
    ]


def _spec_container(pod: Json, name: str) -> Json:
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if container.get("name") == name:
            return dict(container)
    return {}


def _container_findings(snapshot: Snapshot, pod: Json, cstatus: Json) -> Iterator[Finding]:
    name = str(cstatus.get("name"))
    state = cstatus.get("state") or {}
    waiting = state.get("waiting") or {}
    reason, message = str(waiting.get("reason") or ""), str(waiting.get("message") or "")
    last = (cstatus.get("lastState") or {}).get("terminated") or {}
    where = f"Pod {name_of(pod)} container {name}"
    if reason in _PULL:
        image = str(_spec_container(pod, name).get("image") or cstatus.get("image") or "")
        yield _finding(
            snapshot,
            pod,
            "ImagePullBackOff",
            "critical",
            f"container {name} cannot pull image {image!r}: {reason}",
            [
                Evidence("status", where, f"waiting: {reason}: {message}"),
                *_events(snapshot, pod, "Failed", "BackOff"),
            ],
            0.95,
            container=name,
            image=image,
        )
    elif (
        last.get("reason") == "OOMKilled"
        or state.get("terminated", {}).get("reason") == "OOMKilled"
    ):
        yield _oom(snapshot, pod, cstatus, where)
    elif reason == "CreateContainerConfigError":
        yield from _config_error(snapshot, pod, name, message, where)
    elif reason in ("CrashLoopBackOff", "RunContainerError", "StartError") or (
        last and int(cstatus.get("restartCount") or 0) > 2 and not cstatus.get("ready")
    ):
        logs = snapshot.log_tail(namespace_of(pod), name_of(pod), name, previous=True)
        exit_code = last.get("exitCode")
        evidence = [
            Evidence("status", where, f"waiting: {reason or 'restarting'}: {message}".strip()),
            Evidence(
                "status",
                where,
                f"last exit: code {exit_code}, reason {last.get('reason')}, "
                f"restarts {cstatus.get('restartCount')}",
            ),
            *[Evidence("log", f"{where} (previous instance)", line) for line in logs[-10:]],
        ]
        spec = _spec_container(pod, name)
        yield _finding(
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


def _oom(snapshot: Snapshot, pod: Json, cstatus: Json, where: str) -> Finding:
    name = str(cstatus.get("name"))
    resources = _spec_container(pod, name).get("resources") or {}
    limit = parse((resources.get("limits") or {}).get("memory"))
    usage = parse(snapshot.usage(namespace_of(pod), name_of(pod), name).get("memory"))
    evidence = [
        Evidence(
            "status",
            where,
            f"last state: terminated, reason OOMKilled, exit code 137, "
            f"restarts {cstatus.get('restartCount')}",
        ),
        Evidence(
            "spec",
            where,
            f"memory limit {(resources.get('limits') or {}).get('memory')}, "
            f"request {(resources.get('requests') or {}).get('memory')}",
        ),
    ]
    if usage is not None:
        evidence.append(
            Evidence("metric", f"metrics.k8s.io {where}", f"memory usage {usage:.0f} bytes")
        )
    return _finding(
        snapshot,
        pod,
        "OOMKilled",
        "critical",
        f"container {name} is killed for using more memory than its limit "
        f"({(resources.get('limits') or {}).get('memory') or 'no limit'})",
        evidence,
        0.95,
        container=name,
        limit=limit,
        usage=usage,
    )


def _config_error(
    snapshot: Snapshot, pod: Json, name: str, message: str, where: str
) -> Iterator[Finding]:
    missing = _MISSING.search(message)
    missing_key = _MISSING_KEY.search(message)
    evidence = [Evidence("status", where, f"waiting: CreateContainerConfigError: {message}")]
    if missing:
        kind = "ConfigMap" if missing.group(1).lower() == "configmap" else "Secret"
        yield _missing(snapshot, pod, kind, missing.group(2), evidence, name)
    elif missing_key:
        kind, obj = missing_key.group(2), missing_key.group(3)
        yield _missing(snapshot, pod, kind, obj, evidence, name, key=missing_key.group(1))
    else:
        yield _finding(
            snapshot,
            pod,
            "CreateContainerConfigError",
            "critical",
            f"container {name} cannot be created: {message}",
            evidence,
            0.7,
            container=name,
        )


def _missing(
    snapshot: Snapshot,
    pod: Json,
    kind: str,
    obj: str,
    evidence: list[Evidence],
    container: str,
    key: str = "",
) -> Finding:
    keys = sorted(referenced_keys(pod, kind, obj))
    what = f"key {key} of {kind} {obj}" if key else f"{kind} {obj}"
    return _finding(
        snapshot,
        pod,
        f"Missing{kind}Key" if key else f"Missing{kind}",
        "critical",
        f"pod references {what}, which does not exist",
        evidence,
        0.95,
        container=container,
        object=obj,
        object_kind=kind,
        keys=keys,
        missing_key=key,
    )


def referenced_keys(pod: Json, kind: str, obj: str) -> set[str]:
    """The keys of ConfigMap/Secret `obj` the pod's env and volumes name."""
    ref_field = "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef"
    spec = pod.get("spec") or {}
    keys: set[str] = set()
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for env in container.get("env") or []:
            ref = (env.get("valueFrom") or {}).get(ref_field) or {}
            if ref.get("name") == obj and ref.get("key"):
                keys.add(str(ref["key"]))
    source = "configMap" if kind == "ConfigMap" else "secret"
    for volume in spec.get("volumes") or []:
        vol = volume.get(source) or {}
        if (vol.get("name") or vol.get("secretName")) == obj:
            keys.update(str(item.get("key")) for item in vol.get("items") or [])
    return keys


def _mount_failures(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    for event in _events(snapshot, pod, "FailedMount", limit=1):
        missing = _MISSING.search(event.text)
        if missing:
            kind = "ConfigMap" if missing.group(1).lower() == "configmap" else "Secret"
            yield _missing(snapshot, pod, kind, missing.group(2), [event], "")


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
            yield _finding(
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
                    *_events(snapshot, pod, "FailedScheduling", limit=1),
                ],
                0.9,
                constraints=constraints,
                resources=sorted(set(resources)),
                message=message,
            )


def _probes(snapshot: Snapshot, pod: Json) -> Iterator[Finding]:
    unhealthy = _events(snapshot, pod, "Unhealthy", limit=3)
    if not unhealthy:
        return
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if statuses and all(s.get("ready") for s in statuses):
        return
    for container in (pod.get("spec") or {}).get("containers") or []:
        ports = [p.get("containerPort") for p in container.get("ports") or []]
        for probe_kind in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = container.get(probe_kind) or {}
            handler = probe.get("httpGet") or probe.get("tcpSocket") or {}
            port = handler.get("port")
            if port is None:
                continue
            wrong = _resolve_port(container, port) not in ports and bool(ports)
            yield _finding(
                snapshot,
                pod,
                "ProbeFailing",
                "high",
                f"{probe_kind} of container {container.get('name')} fails"
                + (f": port {port} is not a container port ({ports})" if wrong else ""),
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
            )


def _resolve_port(container: Json, port: object) -> object:
    if isinstance(port, str):
        for entry in container.get("ports") or []:
            if entry.get("name") == port:
                return entry.get("containerPort")
    return port
