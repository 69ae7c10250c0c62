"""Inventory answers: what runs where, what is heaviest, and what workloads lack.

Images are read from the pods (what actually runs), each cited by the workload that owns it
(a ReplicaSet's pods by their Deployment, through the pod-template-hash label). The heaviest
pods come from `top` (one sample of metrics.k8s.io: the answer says so). Restarts, counts and
lists come from the pods' and objects' summary rows. Checks (`workload_checks`) read the pod
templates of Deployments, StatefulSets and DaemonSets.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from agents.runtime.questions.asked import Answered, Inventory
from agents.runtime.questions.evidence import (
    Evidence,
    Json,
    cite,
    finish,
    more,
    unanswered,
    where,
)
from agents.runtime.questions.words import singular
from agents.runtime.questions.workload_checks import check_workloads

POD_FIELDS = [
    "spec.containers[*].image",
    "spec.initContainers[*].image",
    "metadata.ownerReferences[*].kind",
    "metadata.ownerReferences[*].name",
    "metadata.labels.pod-template-hash",
    "status.phase",
]
# A kind word of the grammar -> (the resource the tools take, Kind, the plural said)
_SHOWN = {
    "pods": ("pods", "Pod", "pods"),
    "deployments": ("deployments", "Deployment", "Deployments"),
    "statefulsets": ("statefulsets", "StatefulSet", "StatefulSets"),
    "daemonsets": ("daemonsets", "DaemonSet", "DaemonSets"),
    "replicasets": ("replicasets", "ReplicaSet", "ReplicaSets"),
    "services": ("services", "Service", "Services"),
    "nodes": ("nodes", "Node", "nodes"),
    "namespaces": ("namespaces", "Namespace", "namespaces"),
    "jobs": ("jobs", "Job", "Jobs"),
    "cronjobs": ("cronjobs", "CronJob", "CronJobs"),
    "configmaps": ("configmaps", "ConfigMap", "ConfigMaps"),
    "secrets": ("secrets", "Secret", "Secrets"),
    "ingresses": ("ingresses", "Ingress", "Ingresses"),
    "pvcs": ("persistentvolumeclaims", "PersistentVolumeClaim", "PersistentVolumeClaims"),
    "hpa": ("horizontalpodautoscalers", "HorizontalPodAutoscaler", "HorizontalPodAutoscalers"),
    "pdb": ("poddisruptionbudgets", "PodDisruptionBudget", "PodDisruptionBudgets"),
    "networkpolicies": ("networkpolicies", "NetworkPolicy", "NetworkPolicies"),
    "serviceaccounts": ("serviceaccounts", "ServiceAccount", "ServiceAccounts"),
    "roles": ("roles", "Role", "Roles"),
    "rolebindings": ("rolebindings", "RoleBinding", "RoleBindings"),
    "quotas": ("resourcequotas", "ResourceQuota", "ResourceQuotas"),
    "limitranges": ("limitranges", "LimitRange", "LimitRanges"),
}
_CLUSTER_SCOPED = frozenset({"nodes", "namespaces"})


def shown(kind: str) -> tuple[str, str] | None:
    """The Kind a grammar's kind word names and its plural as answers say it ("pods" ->
    ("Pod", "pods")); None for a word of no single kind ("workloads")."""
    found = _SHOWN.get(kind)
    return (found[1], found[2]) if found else None


_STATEFUL = frozenset({"pods", "deployments", "statefulsets", "daemonsets", "workloads"})


async def answer(evidence: Evidence, question: Inventory) -> Answered:
    if question.topic == "images":
        return await _images(evidence, question)
    if question.topic == "top":
        return await _top(evidence, question)
    if question.topic == "restarts":
        return await _restarts(evidence, question)
    if question.topic == "check":
        return await check_workloads(evidence, question)
    return await _listed(evidence, question)


async def _images(evidence: Evidence, question: Inventory) -> Answered:
    ns = question.namespace
    scan = await evidence.scan("pods", f"pods {where(ns)}", namespace=ns, fields=POD_FIELDS)
    if scan is None:
        return unanswered(evidence, "inventory", f"which images run {where(ns)}")
    users: dict[str, Counter[str]] = defaultdict(Counter)
    pods = [p for p in scan.items if not question.owner or workload_of(p)[1] == question.owner]
    for pod in pods:
        owner = owner_of(pod)
        images = (pod.get("spec.containers[*].image") or []) + (
            pod.get("spec.initContainers[*].image") or []
        )
        for image in dict.fromkeys(str(i) for i in images):
            users[image][owner] += 1
    ranked = sorted(users.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    shown = ranked[: question.count]
    rows: list[Json] = [
        {
            "image": image,
            "pods": sum(owners.values()),
            "used_by": [{"object": o, "pods": n} for o, n in owners.most_common()],
        }
        for image, owners in shown
    ]
    lines = [f"- {image}: {_owners(owners)}" for image, owners in shown]
    of = f" of {question.owner}" if question.owner else ""
    head = (
        f"{len(ranked)} {'image runs' if len(ranked) == 1 else 'images run'} in {len(pods)} "
        f"pod{'s' if len(pods) != 1 else ''}{of} {where(ns)}"
        f"{more(len(shown), len(ranked), 'images')}:"
        if ranked
        else f"No pods{of} run {where(ns)}, so no images."
    )
    basis = f"read the containers of {len(pods)} pod{'s' if len(pods) != 1 else ''}"
    return finish(
        evidence, "inventory", head, lines, basis, rows=rows, total=len(ranked), **_facts(question)
    )


def _owners(owners: Counter[str]) -> str:
    listed = owners.most_common(4)
    said = ", ".join(f"{o} ({n} pod{'s' if n != 1 else ''})" for o, n in listed)
    return said + more(len(listed), len(owners), "owners")


def owner_of(pod: Json) -> str:
    """The workload a pod belongs to, cited (`workload_of`)."""
    return cite(*workload_of(pod), str(pod.get("namespace", "")))


def workload_of(pod: Json) -> tuple[str, str]:
    """The kind and name of the workload a pod belongs to: its Deployment for a ReplicaSet's
    pod (named by the pod-template-hash it adds), else its owner, else the pod itself."""
    kinds = pod.get("metadata.ownerReferences[*].kind") or []
    names = pod.get("metadata.ownerReferences[*].name") or []
    if not kinds or not names:
        return "Pod", str(pod.get("name", ""))
    kind, name = str(kinds[0]), str(names[0])
    hashed = str(pod.get("metadata.labels.pod-template-hash") or "")
    if kind == "ReplicaSet" and hashed and name.endswith(f"-{hashed}"):
        return "Deployment", name[: -len(hashed) - 1]
    return kind, name


async def _top(evidence: Evidence, question: Inventory) -> Answered:
    ns, metric = question.namespace, question.metric or "cpu"
    arguments: Json = {"what": "pods", "sort_by": metric, "limit": question.count}
    if ns:
        arguments["namespace"] = ns
    top = await evidence.call("top", f"pod {metric} use {where(ns)}", **arguments)
    if top is None:
        return unanswered(evidence, "inventory", f"which pods use the most {metric}")
    rows = [r for r in top.get("items") or [] if isinstance(r, dict)]
    total = int(top.get("total") or len(rows))
    unit, key = ("m CPU", "cpu_m") if metric == "cpu" else (" MiB", "memory_mi")
    lines = [
        f"- {cite('Pod', r['name'], r.get('namespace', ''))}: {r.get(key)}{unit}" for r in rows
    ]
    head = (
        f"The {len(rows)} pods {where(ns)} using the most {metric} now"
        f"{more(len(rows), total, 'pods')}:"
        if rows
        else f"No pod metrics {where(ns)}."
    )
    basis = f"one sample of metrics.k8s.io, taken now, for {total} pods (not an average)"
    return finish(
        evidence, "inventory", head, lines, basis, rows=rows, total=total, **_facts(question)
    )


async def _restarts(evidence: Evidence, question: Inventory) -> Answered:
    ns = question.namespace
    scan = await evidence.scan("pods", f"pods {where(ns)}", namespace=ns)
    if scan is None:
        return unanswered(evidence, "inventory", "which pods restarted")
    restarted = sorted(
        (p for p in scan.items if int(p.get("restarts") or 0) > 0),
        key=lambda p: (-int(p["restarts"]), p.get("namespace", ""), p["name"]),
    )
    rows = restarted[: question.count]
    lines = [
        f"- {cite('Pod', p['name'], p.get('namespace', ''))}: {p['restarts']} restarts "
        f"({p.get('status', '')})"
        for p in rows
    ]
    head = (
        f"{len(restarted)} of {len(scan.items)} pods {where(ns)} have restarted, most first"
        f"{more(len(rows), len(restarted), 'pods')}:"
        if restarted
        else f"None of the {len(scan.items)} pods {where(ns)} has restarted."
    )
    basis = f"read the restart counts of {len(scan.items)} pods"
    return finish(
        evidence,
        "inventory",
        head,
        lines,
        basis,
        rows=rows,
        total=len(restarted),
        **_facts(question),
    )


async def _listed(evidence: Evidence, question: Inventory) -> Answered:
    ns, kind = question.namespace, question.kind
    kinds = ["deployments", "statefulsets", "daemonsets"] if kind == "workloads" else [kind]
    namespaced = kind not in _CLUSTER_SCOPED
    found: list[Json] = []
    for each in kinds:
        resource, shown_kind, _ = _SHOWN.get(each, (each, each, each))
        scan = await evidence.scan(
            resource, f"{each} {where(ns)}", namespace=ns if namespaced else None
        )
        found += [{**row, "kind": shown_kind} for row in scan.items] if scan else []
    noun = "workloads" if kind == "workloads" else _SHOWN.get(kind, (kind, kind, kind))[2]
    if not found and evidence.unseen:
        return unanswered(evidence, "inventory", f"the {noun} {where(ns)}")
    scope = f" {where(ns)}" if namespaced else ""
    if question.owner:
        owners = await _owners_of(evidence, ns)
        if owners is None:
            return unanswered(evidence, "inventory", f"which pods {question.owner} has {where(ns)}")
        found = [row for row in found if owners.get(str(row.get("name"))) == question.owner]
        scope = f" of {question.owner}{scope}"
    chosen = [row for row in found if _in_state(row, question.state)]
    state = question.state.replace("-", " ")
    if question.topic == "count":
        counted = noun if len(chosen) != 1 else singular(noun)
        head = f"{len(chosen)} {counted}{' ' + state if state else ''}{scope}" + (
            f" (of {len(found)})." if state else "."
        )
    elif chosen:
        said = f" {state}" if state else ""
        listed = noun if len(chosen) != 1 else singular(noun)
        head = f"{len(chosen)} {listed}{said}{scope}{more(question.count, len(chosen), noun)}:"
    elif state == "not ready":
        head = f"All {len(found)} {noun}{scope} are ready."
    elif state:
        head = f"None of the {len(found)} {noun}{scope} is {state}."
    elif question.owner:
        head = f"No pods{scope}: no pod there belongs to a workload named {question.owner}."
    else:
        head = f"No {noun}{scope}."
    lines = [
        f"- {cite(r['kind'], r['name'], r.get('namespace', ''))}: {_columns(r)}"
        for r in (chosen[: question.count] if question.topic == "list" else [])
    ]
    ignored = state and kind not in _STATEFUL
    basis = f"listed {len(found)} {noun if len(found) != 1 else singular(noun)}" + (
        " (a state applies to pods and workloads only)" if ignored else ""
    )
    return finish(
        evidence,
        "inventory",
        head,
        lines,
        basis,
        rows=chosen[: question.count],
        total=len(chosen),
        **_facts(question),
    )


async def _owners_of(evidence: Evidence, ns: str | None) -> dict[str, str] | None:
    """Each pod's workload name (`workload_of`), by pod name; None when unreadable."""
    scan = await evidence.scan("pods", f"the owners of pods {where(ns)}", namespace=ns,
                               fields=POD_FIELDS)  # fmt: skip
    if scan is None:
        return None
    return {str(pod.get("name")): workload_of(pod)[1] for pod in scan.items}


def _in_state(row: Json, state: str) -> bool:
    if not state:
        return True
    status = str(row.get("status", ""))
    ready = str(row.get("ready", ""))
    if "/" in ready:
        have, _, want = ready.partition("/")
        full = have == want and want != "0"
    else:
        full = str(row.get("ready", "")) == str(row.get("desired", ""))
    checks = {
        "running": status == "Running",
        "pending": status in ("Pending", "ContainerCreating") or status.startswith("Init"),
        "failed": status in ("Failed", "Error") or "BackOff" in status,
        "succeeded": status in ("Succeeded", "Completed"),
        "ready": full,
        "not-ready": not full and status not in ("Succeeded", "Completed"),
        "crashing": "CrashLoop" in status or status == "Error",
    }
    return checks.get(state, True)


def _columns(row: Json) -> str:
    shown = {k: v for k, v in row.items() if k not in ("name", "namespace", "kind")}
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in shown.items() if v not in ("", None))


def _facts(question: Inventory) -> Json:
    facts = {"topic": question.topic, "namespace": question.namespace, "kind": question.kind}
    return facts | ({"owner": question.owner} if question.owner else {})
