"""Network analyzers: Services that reach no pod, Ingresses to nowhere, idle NetworkPolicies.

A Service whose selector matches no pod (with the label sets the namespace's pods really carry,
for the playbook), unless it matches a workload's pod template: then the selector is right and
the backend is the trouble (scaled to 0 replicas, or running no pod: its own finding says why,
see `links.py`); one whose Endpoints have no ready address (naming the selected pods and their
workloads, whose findings say why they are not ready), a `targetPort` no selected container
declares; an Ingress whose backend Service does not exist or lacks the port; a
NetworkPolicy whose podSelector selects nothing. Rules that conclude from an absence (no pod
selected, no such Service) run only when that list was read (`Snapshot.read`).

It knows selectors and Service/Endpoints/Ingress shapes; nothing of fixes or MCP.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import (
    Json,
    Snapshot,
    name_of,
    namespace_of,
    pod_ready,
    workload_of,
)


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    for service in snapshot.of("services"):
        found.extend(_service(snapshot, service))
    for ingress in snapshot.of("ingresses"):
        found.extend(_ingress(snapshot, ingress))
    for policy in snapshot.of("networkpolicies"):
        found.extend(_policy(snapshot, policy))
    return found


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _labels(pod: Json) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((pod.get("metadata") or {}).get("labels") or {}).items()}


def _live(pod: Json) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _service(snapshot: Snapshot, service: Json) -> Iterator[Finding]:
    spec = service.get("spec") or {}
    selector = {str(k): str(v) for k, v in (spec.get("selector") or {}).items()}
    if not selector or spec.get("type") == "ExternalName":
        return
    namespace, name = namespace_of(service), name_of(service)
    ref = ObjectRef("Service", name, namespace)
    if not snapshot.read("pods"):
        return
    pods = [p for p in snapshot.pods_in(namespace) if _live(p)]
    selected = [p for p in pods if matches(selector, _labels(p))]
    if not selected and (backends := _backends(snapshot, namespace, selector)):
        yield _idle_backends(ref, selector, backends)
        return
    if not selected:
        label_sets = sorted({tuple(sorted(_labels(p).items())) for p in pods})
        yield Finding(
            "ServiceSelectorNoMatch",
            ref,
            "high",
            f"selector {selector} matches no pod in {namespace}",
            (
                Evidence("spec", str(ref), f"spec.selector: {selector}"),
                Evidence(
                    "status",
                    f"pods in {namespace}",
                    f"{len(pods)} pods; label sets: {[dict(s) for s in label_sets[:5]]}",
                ),
            ),
            0.95,
            details={"selector": selector, "ports": spec.get("ports") or []},
        )
        return
    yield from _target_ports(ref, spec, selected)
    endpoints = snapshot.by_name("endpoints", namespace, name)
    if endpoints is not None:
        subsets = endpoints.get("subsets") or []
        ready = sum(len(s.get("addresses") or []) for s in subsets)
        not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
        # A selected pod Ready while the Endpoints list none: the Endpoints are behind the
        # Service or its pods (read a moment apart, or the controller still catching up)
        if not ready and not any(map(pod_ready, selected)):
            yield Finding(
                "ServiceNoReadyEndpoints",
                ref,
                "high",
                f"no ready endpoint: {len(selected)} pods selected, {not_ready} not ready",
                (Evidence("status", f"Endpoints {name}", f"ready 0, not ready {not_ready}"),),
                0.8,
                related=(
                    *(ObjectRef("Pod", name_of(p), namespace) for p in selected[:20]),
                    *_workloads(snapshot, selected),
                ),
            )


def _backends(snapshot: Snapshot, namespace: str, selector: dict[str, str]) -> dict[ObjectRef, int]:
    """The namespace's Deployments and StatefulSets whose pod template the selector matches,
    with the replicas each asks for."""
    found = {}
    for plural, kind in (("deployments", "Deployment"), ("statefulsets", "StatefulSet")):
        for obj in snapshot.of(plural):
            spec = obj.get("spec") or {}
            template = spec.get("template") or {}  # labelled as its pods will be
            if namespace_of(obj) == namespace and matches(selector, _labels(template)):
                found[ObjectRef(kind, name_of(obj), namespace)] = int(spec.get("replicas", 1) or 0)
    return found


def _idle_backends(
    ref: ObjectRef, selector: dict[str, str], backends: dict[ObjectRef, int]
) -> Finding:
    """The selector is right (it matches these workloads' pod templates), yet no pod runs:
    scaled to 0 replicas (the fix is a scale, `playbooks/scaling.py`), or failing to start
    its pods (the workload's own finding, linked to this Service, says why)."""
    named = ", ".join(f"{r.kind} {r.name}" for r in backends)
    evidence = [Evidence("spec", str(ref), f"spec.selector: {selector}")]
    evidence += [
        Evidence("spec", str(r), f"spec.replicas: {n}; its pod template matches the selector")
        for r, n in backends.items()
    ]
    if not any(backends.values()):
        return Finding(
            "ServiceBackendScaledToZero",
            ref,
            "high",
            f"selector {selector} selects the pods of {named}, scaled to 0 replicas: "
            "no pod serves the Service",
            tuple(evidence),
            0.95,
            tuple(backends),
            {"backends": [(r.kind, r.name) for r in backends]},
        )
    return Finding(
        "ServiceNoReadyEndpoints",
        ref,
        "high",
        f"no ready endpoint: {named} runs no pod (selector {selector} matches its pod template)",
        tuple(evidence),
        0.7,
        tuple(backends),
    )


def _workloads(snapshot: Snapshot, pods: list[Json]) -> list[ObjectRef]:
    """The objects people change to change these pods, each once."""
    found: list[ObjectRef] = []
    for pod in pods[:50]:
        kind, name = workload_of(snapshot, pod)
        if kind != "Pod" and (ref := ObjectRef(kind, name, namespace_of(pod))) not in found:
            found.append(ref)
    return found


def _target_ports(ref: ObjectRef, spec: Json, selected: list[Json]) -> Iterator[Finding]:
    declared: dict[str, int] = {}
    numbers: set[int] = set()
    for pod in selected[:50]:
        for container in (pod.get("spec") or {}).get("containers") or []:
            for port in container.get("ports") or []:
                numbers.add(int(port.get("containerPort") or 0))
                if port.get("name"):
                    declared[str(port["name"])] = int(port.get("containerPort") or 0)
    if not numbers:
        return  # pods that declare no port may still listen: nothing to compare with
    for port in spec.get("ports") or []:
        target = port.get("targetPort", port.get("port"))
        ok = target in declared if isinstance(target, str) else int(target or 0) in numbers
        if not ok:
            pod = selected[0]
            yield Finding(
                "ServiceTargetPortMismatch",
                ref,
                "high",
                f"targetPort {target} of port {port.get('port')} is not a container port of "
                f"the selected pods ({sorted(numbers)})",
                (
                    Evidence("spec", str(ref), f"ports: {spec.get('ports')}"),
                    Evidence(
                        "spec",
                        f"Pod {name_of(pod)}",
                        f"container ports: {sorted(numbers)}, named: {declared or 'none'}",
                    ),
                ),
                0.85,
                details={
                    "port": port,
                    "container_ports": sorted(numbers),
                    "named_ports": declared,
                    "pod": name_of(pod),
                },
            )


def _ingress(snapshot: Snapshot, ingress: Json) -> Iterator[Finding]:
    namespace = namespace_of(ingress)
    ref = ObjectRef("Ingress", name_of(ingress), namespace)
    spec = ingress.get("spec") or {}
    backends = [spec["defaultBackend"]] if spec.get("defaultBackend") else []
    for rule in spec.get("rules") or []:
        backends.extend(p.get("backend") or {} for p in (rule.get("http") or {}).get("paths") or [])
    if not snapshot.read("services"):
        return
    for backend in backends:
        service = backend.get("service") or {}
        if not service.get("name"):
            continue
        wanted = service.get("port") or {}
        found = snapshot.by_name("services", namespace, str(service["name"]))
        details = {"service": service["name"], "port": wanted}
        if found is None:
            yield Finding(
                "IngressBackendMissing",
                ref,
                "high",
                f"backend Service {service['name']} does not exist",
                (Evidence("spec", str(ref), f"backend: {backend}"),),
                0.95,
                details=details,
            )
            continue
        ports = (found.get("spec") or {}).get("ports") or []
        if wanted and not any(_serves(p, wanted) for p in ports):
            yield Finding(
                "IngressBackendPortMissing",
                ref,
                "high",
                f"backend Service {service['name']} has no port {wanted.get('number') or wanted}",
                (
                    Evidence("spec", str(ref), f"backend: {backend}"),
                    Evidence("spec", f"Service {service['name']}", f"ports: {ports}"),
                ),
                0.9,
                details=details,
            )


def _serves(port: Json, wanted: Json) -> bool:
    if wanted.get("name"):
        return bool(port.get("name") == wanted["name"])
    return bool(port.get("port") == wanted.get("number"))


def _policy(snapshot: Snapshot, policy: Json) -> Iterator[Finding]:
    namespace = namespace_of(policy)
    selector = (policy.get("spec") or {}).get("podSelector") or {}
    labels = {str(k): str(v) for k, v in (selector.get("matchLabels") or {}).items()}
    if not labels or selector.get("matchExpressions") or not snapshot.read("pods"):
        return
    if not any(matches(labels, _labels(p)) for p in snapshot.pods_in(namespace)):
        ref = ObjectRef("NetworkPolicy", name_of(policy), namespace)
        yield Finding(
            "NetworkPolicySelectsNothing",
            ref,
            "low",
            f"podSelector {labels} selects no pod: the policy has no effect",
            (Evidence("spec", str(ref), f"podSelector: {selector}"),),
            0.8,
            details={"selector": labels},
        )
