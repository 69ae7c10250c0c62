"""Pods the scheduler cannot place, by the constraint its message names: a request no node can
meet, a nodeSelector no node satisfies, a taint no toleration matches, every fitting node
cordoned.

For taints the choice is the pod's side (a toleration) or the node's (remove the taint), and the
ranking says which is likelier meant: a pod whose nodeSelector picks the tainted nodes was meant
for them (dedicated nodes: tolerate), a taint on nodes the pod never asked for is someone's
fence (tolerating it trespasses, removing it opens the node to every pod, so both rank lower).
The taints Kubernetes itself keeps for a node's condition (`node.kubernetes.io/...`) are never
tolerated or removed here: the node is what needs fixing, and its own Finding says how.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.quantity import mebibytes, parse
from mcp_servers.kube.diagnosis.findings import Finding, Fix, ObjectRef, Step
from mcp_servers.kube.diagnosis.playbooks.templates import (
    TEMPLATED,
    container_patch,
    finding_workload,
    pod_spec,
    pod_spec_patch,
)
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of

SYSTEM_TAINTS = "node.kubernetes.io/"


def unschedulable_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    constraints = list(finding.details.get("constraints") or [])
    workload = finding_workload(finding, snapshot)
    if workload is None:
        return
    spec = pod_spec(finding.ref.kind, workload)
    if "resources" in constraints:
        yield from _resource_fix(finding, snapshot, spec)
    if "taints" in constraints:
        yield from _taint_fixes(finding, snapshot, spec)
    if "cordoned" in constraints:
        yield from _uncordon(finding, snapshot)
    if "node-selector" in constraints and spec.get("nodeSelector"):
        path = (
            {"template": {"spec": {"nodeSelector": None}}}
            if finding.ref.kind in TEMPLATED
            else {"nodeSelector": None}
        )
        yield Fix(
            finding.code,
            finding.ref,
            "drop the nodeSelector no node satisfies",
            "merge",
            {"spec": path},
            "the scheduler may place the pods on any node",
            "medium",
            "pods may land on nodes the selector meant to avoid",
            0.6,
            (f"nodeSelector {spec.get('nodeSelector')}: {finding.details.get('message')}",),
        )


def _resource_fix(finding: Finding, snapshot: Snapshot, spec: Json) -> Iterator[Fix]:
    for resource in finding.details.get("resources") or []:
        biggest = max(
            (
                parse(((n.get("status") or {}).get("allocatable") or {}).get(resource)) or 0.0
                for n in snapshot.of("nodes")
            ),
            default=0.0,
        )
        for container in spec.get("containers") or []:
            requests = (container.get("resources") or {}).get("requests") or {}
            asked = parse(requests.get(resource))
            if asked is None or asked <= biggest / 2 or not biggest:
                continue
            fit = biggest / 4
            value = mebibytes(fit) if resource == "memory" else f"{int(fit * 1000)}m"
            change: Json = {"resources": {"requests": {resource: value}}}
            if (container.get("resources") or {}).get("limits", {}).get(resource):
                change["resources"]["limits"] = {resource: value}
            yield Fix(
                finding.code,
                finding.ref,
                f"lower the {resource} request of {container.get('name')} to {value}",
                "strategic",
                container_patch(finding.ref.kind, str(container.get("name")), change),
                f"pods fit on a node (largest allocatable {resource}: {biggest:g})",
                "medium",
                "the container gets less guaranteed capacity; check it still performs",
                0.6,
                (
                    f"request {requests.get(resource)} exceeds what any node can offer",
                    str(finding.details.get("message")),
                ),
            )


def _taint_fixes(finding: Finding, snapshot: Snapshot, spec: Json) -> Iterator[Fix]:
    selector = {str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()}
    tolerations = list(spec.get("tolerations") or [])
    for named in finding.details.get("taints") or []:
        key, value = str(named.get("key")), str(named.get("value") or "")
        if key.startswith(SYSTEM_TAINTS):
            continue
        tainted = [(n, t) for n in snapshot.of("nodes") for t in _taints(n) if _same(t, key, value)]
        if not tainted:
            continue
        effect = str(tainted[0][1].get("effect") or "NoSchedule")
        wanted = bool(selector) and any(_labelled(n, selector) for n, _ in tainted)
        toleration: Json = {"key": key, "operator": "Equal", "value": value, "effect": effect}
        if not value:
            toleration = {"key": key, "operator": "Exists", "effect": effect}
        taint_text = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        nodes = sorted({name_of(n) for n, _ in tainted})
        yield Fix(
            finding.code,
            finding.ref,
            f"tolerate the taint {taint_text}",
            "merge",
            pod_spec_patch(finding.ref.kind, {"tolerations": [*tolerations, toleration]}),
            f"the pods may be scheduled onto {', '.join(nodes[:3])}",
            "low" if wanted else "medium",
            "the pods run on nodes the taint reserves"
            + ("" if wanted else ": make sure they are meant to share them"),
            0.85 if wanted else 0.6,
            (
                f"{len(nodes)} node(s) carry {taint_text}: {', '.join(nodes[:5])}",
                f"the pods' nodeSelector {selector} picks them"
                if wanted
                else "the pods do not ask for these nodes",
                str(finding.details.get("message")),
            ),
        )
        node = nodes[0]
        yield Fix(
            finding.code,
            ObjectRef("Node", node),
            f"remove the taint {taint_text} from node {node}",
            "steps",
            {},
            f"node {node} accepts the pods (and any other pod) again",
            "high" if wanted else "medium",
            f"every pod may land on {node} from now on; whoever tainted it meant to keep them "
            "off: ask before removing it",
            0.35 if wanted else 0.5,
            (f"node {node} carries {taint_text}", str(finding.details.get("message"))),
            (Step("taint", {"node": node, "key": key, "effect": effect, "remove": True}),),
        )


def _uncordon(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    for node in snapshot.of("nodes"):
        conditions = {
            str(c.get("type")): c.get("status")
            for c in (node.get("status") or {}).get("conditions") or []
        }
        cordoned = (node.get("spec") or {}).get("unschedulable")
        if cordoned and conditions.get("Ready") == "True":
            yield Fix(
                finding.code,
                ObjectRef("Node", name_of(node)),
                f"uncordon node {name_of(node)}",
                "steps",
                {},
                f"node {name_of(node)} (Ready) takes new pods again",
                "medium",
                "the node may have been cordoned for maintenance: ask whoever cordoned it",
                0.45,
                (
                    f"node {name_of(node)} is cordoned and Ready",
                    str(finding.details.get("message")),
                ),
                (Step("uncordon", {"node": name_of(node)}),),
            )
            return


def _taints(node: Json) -> list[Json]:
    return list((node.get("spec") or {}).get("taints") or [])


def _same(taint: Json, key: str, value: str) -> bool:
    return bool(taint.get("key") == key and str(taint.get("value") or "") == value)


def _labelled(node: Json, selector: dict[str, str]) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())
