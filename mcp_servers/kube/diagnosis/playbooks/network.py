"""Selectors and ports that point at nothing: a Service or NetworkPolicy selecting no pod, a
Service `targetPort` or probe port no container declares, an Ingress backend Service or port
that does not exist. Each fix points at what does exist, ranked by how close it is to what was
written (a typo is the usual cause) and whether it serves.

A selector is compared value by value with the labels pods really carry ("wbe" is near "web";
a key the pods lack counts as nothing alike), and a workload named like the Service counts as
near too: a Service is pointed only at pods that nearly match, since sending its traffic to
pods it never named is no typo fix but a decision for its owner (the remediation loop applies
the best fix unattended).

Lists with no merge key (Ingress rules, Service ports under a JSON merge patch) are replaced
whole, with only the broken entry changed, so the patch is exact whatever the server's merge.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any, NamedTuple

from mcp_servers.kube.diagnosis.findings import Finding, Fix
from mcp_servers.kube.diagnosis.playbooks.templates import (
    container_patch,
    finding_workload,
    pod_risk,
    template_container,
)
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

_HASHES = ("pod-template-hash", "controller-revision-hash", "pod-template-generation")
NEAR = 0.5  # how alike a selector's values and the pods' labels must be to be its typo
NAMESAKE = 0.8  # the likeness of the pods of the workload named like the Service


class Source(NamedTuple):
    why: str  # where the labels were seen, in words
    workload: str  # the workload whose pod template carries them ("" for a bare pod)


def label_sets(snapshot: Snapshot, namespace: str) -> dict[tuple[tuple[str, str], ...], Source]:
    """The label sets a namespace's pods (and pod templates) carry, with where each was seen."""
    sources: dict[tuple[tuple[str, str], ...], Source] = {}
    for plural, kind in (
        ("deployments", "Deployment"),
        ("statefulsets", "StatefulSet"),
        ("daemonsets", "DaemonSet"),
    ):
        for obj in snapshot.of(plural):
            if namespace_of(obj) != namespace:
                continue
            labels = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
            key = tuple(sorted((str(k), str(v)) for k, v in (labels.get("labels") or {}).items()))
            why = f"{kind} {name_of(obj)}'s pod template carries {dict(key)}"
            sources.setdefault(key, Source(why, name_of(obj)))
    for pod in snapshot.pods_in(namespace):
        labels = (pod.get("metadata") or {}).get("labels") or {}
        key = tuple(sorted((str(k), str(v)) for k, v in labels.items() if k not in _HASHES))
        if key:
            sources.setdefault(key, Source(f"pod {name_of(pod)} carries {dict(key)}", ""))
    return sources


def _selections(
    snapshot: Snapshot, namespace: str, selector: dict[str, str], named: str = ""
) -> Iterator[tuple[dict[str, str], str, float]]:
    """Selectors of the same keys that match real pods: (new selector, why, similarity), the
    similarity the mean of each value's likeness (a workload called `named` counts as near)."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    for labels, source in label_sets(snapshot, namespace).items():
        carried = dict(labels)
        new = {k: carried[k] for k in selector if k in carried}
        key = tuple(sorted(new.items()))
        if not new or key in seen:
            continue
        seen.add(key)
        similarity = sum(
            difflib.SequenceMatcher(None, value, new.get(k, "")).ratio() if k in new else 0.0
            for k, value in selector.items()
        ) / len(selector)
        if named and source.workload == named:
            similarity = max(similarity, NAMESAKE)
        yield new, source.why, similarity


def selector_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    selector: dict[str, str] = dict(finding.details.get("selector") or {})
    named = finding.ref.name
    for new, why, similarity in _selections(snapshot, finding.ref.namespace, selector, named):
        if similarity < NEAR:
            continue  # pods the Service never named: where its traffic goes is its owner's call
        dropped = {k: None for k in selector if k not in new}
        yield Fix(
            finding.code,
            finding.ref,
            f"select the pods labelled {new}",
            "merge",
            {"spec": {"selector": {**dropped, **new}}},
            f"the Service selects the pods labelled {new} and gets their ready endpoints",
            "low",
            "traffic to the Service reaches these pods from now on",
            round(0.5 + 0.4 * similarity, 2),
            (why, f"old selector {selector} matches no pod"),
        )


def policy_selector_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    selector: dict[str, str] = dict(finding.details.get("selector") or {})
    for new, why, similarity in _selections(snapshot, finding.ref.namespace, selector):
        if similarity < 0.6:
            continue  # a policy aimed elsewhere is no typo: changing it would open or close traffic
        dropped = {k: None for k in selector if k not in new}
        yield Fix(
            finding.code,
            finding.ref,
            f"make the policy select the pods labelled {new}",
            "merge",
            {"spec": {"podSelector": {"matchLabels": {**dropped, **new}}}},
            f"the policy's rules apply to the pods labelled {new}",
            "high",
            "the policy starts to filter these pods' traffic: what its rules do not allow is "
            "dropped from now on; read the rules before applying",
            round(0.3 + 0.4 * similarity, 2),
            (why, f"podSelector {selector} selects no pod"),
        )


def target_port_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    service = snapshot.by_name("services", finding.ref.namespace, finding.ref.name)
    broken: Json = dict(finding.details.get("port") or {})
    if service is None:
        return
    named: dict[str, int] = dict(finding.details.get("named_ports") or {})
    numbers = [int(n) for n in finding.details.get("container_ports") or []]
    target = broken.get("targetPort", broken.get("port"))
    options: list[tuple[Any, float, str]] = []  # (new targetPort, confidence, why)
    for name, number in named.items():
        score = difflib.SequenceMatcher(None, str(target), name).ratio()
        if name == broken.get("name"):
            score = max(score, 0.9)
        options.append((name, 0.5 + 0.4 * score, f"container port {number} is named {name}"))
    for number in numbers:
        alone = len(numbers) == 1
        options.append(
            (number, 0.9 if alone else 0.6, f"the selected pods' container port {number}")
        )
    options.sort(key=lambda o: -o[1])
    used: set[int] = set()
    for value, confidence, why in options:
        number = named[value] if isinstance(value, str) else int(value)
        if number in used:
            continue
        used.add(number)
        ports = [
            {**p, "targetPort": value} if p.get("port") == broken.get("port") else p
            for p in (service.get("spec") or {}).get("ports") or []
        ]
        yield Fix(
            finding.code,
            finding.ref,
            f"send port {broken.get('port')} to container port {value}",
            "merge",
            {"spec": {"ports": ports}},
            f"connections to port {broken.get('port')} reach port {number} of the pods, where "
            "they listen",
            "low",
            "clients of the Service reach a different container port from now on",
            round(min(confidence, 0.9), 2),
            (why, f"targetPort {target} is not a port the selected pods declare"),
        )


def ingress_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    """Point the broken backend at the Service (and port) that exists, nearest name first."""
    ingress = snapshot.by_name("ingresses", finding.ref.namespace, finding.ref.name)
    wanted, port = str(finding.details.get("service") or ""), finding.details.get("port") or {}
    if ingress is None:
        return
    services = [s for s in snapshot.of("services") if namespace_of(s) == finding.ref.namespace]
    if finding.code == "IngressBackendPortMissing":
        services = [s for s in services if name_of(s) == wanted]
    scored = []
    for service in services:
        similarity = difflib.SequenceMatcher(None, wanted, name_of(service)).ratio()
        endpoints = snapshot.by_name("endpoints", finding.ref.namespace, name_of(service)) or {}
        ready = sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or [])
        new_port = _service_port(service, port)
        if new_port is not None and (similarity >= 0.5 or len(services) == 1):
            scored.append((0.45 + 0.4 * similarity + (0.05 if ready else 0.0), service, new_port))
    for confidence, service, new_port in sorted(scored, key=lambda s: -s[0])[:3]:
        backend = {"service": {"name": name_of(service), "port": new_port}}
        yield Fix(
            finding.code,
            finding.ref,
            f"route the backend {wanted} to Service {name_of(service)} port "
            f"{new_port.get('number') or new_port.get('name')}",
            "merge",
            _repointed(ingress, wanted, backend),
            f"requests routed to {wanted} reach Service {name_of(service)}, which exists",
            "low",
            "this Ingress's traffic for those paths goes to that Service from now on",
            round(min(confidence, 0.9), 2),
            (
                f"Service {name_of(service)} exists with ports "
                f"{[p.get('port') for p in (service.get('spec') or {}).get('ports') or []]}",
                f"{finding.summary}",
            ),
        )


def _service_port(service: Json, wanted: Json) -> Json | None:
    """The backend port to use on `service`: the one asked for if it has it, else its only or
    best-named port."""
    ports = (service.get("spec") or {}).get("ports") or []
    for p in ports:
        if (wanted.get("number") and p.get("port") == wanted["number"]) or (
            wanted.get("name") and p.get("name") == wanted["name"]
        ):
            return dict(wanted)
    if len(ports) == 1:
        return {"number": ports[0].get("port")}
    names = [str(p.get("name")) for p in ports if p.get("name")]
    close = difflib.get_close_matches(str(wanted.get("name") or ""), names, n=1)
    return {"name": close[0]} if close else None


def _repointed(ingress: Json, wanted: str, backend: Json) -> Json:
    spec = ingress.get("spec") or {}

    def fix(old: Json) -> Json:
        return backend if (old.get("service") or {}).get("name") == wanted else old

    rules = [
        {
            **rule,
            "http": {
                **(rule.get("http") or {}),
                "paths": [
                    {**p, "backend": fix(p.get("backend") or {})}
                    for p in (rule.get("http") or {}).get("paths") or []
                ],
            },
        }
        if rule.get("http")
        else rule
        for rule in spec.get("rules") or []
    ]
    patch: Json = {"spec": {"rules": rules}} if rules else {"spec": {}}
    if spec.get("defaultBackend"):
        patch["spec"]["defaultBackend"] = fix(spec["defaultBackend"])
    return patch


def probe_port_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    if not finding.details.get("wrong_port") or finding.ref.kind == "Pod":
        return
    ports = finding.details.get("ports") or []
    container, probe = str(finding.details["container"]), str(finding.details["probe"])
    spec = dict(
        template_container(finding_workload(finding, snapshot) or {}, container).get(probe) or {}
    )
    handler = "httpGet" if "httpGet" in spec else "tcpSocket"
    spec[handler] = {**(spec.get(handler) or {}), "port": ports[0]}
    yield Fix(
        finding.code,
        finding.ref,
        f"point the {probe} of {container} at port {ports[0]}",
        "strategic",
        container_patch(finding.ref.kind, container, {probe: spec}),
        "the probe reaches the port the container declares and passes; pods become Ready",
        "low",
        pod_risk(finding.ref),
        0.85,
        (f"probe port {finding.details.get('port')} is not among container ports {ports}",),
    )
