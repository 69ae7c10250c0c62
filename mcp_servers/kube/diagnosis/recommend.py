"""Playbooks: from Findings to ranked, concrete Fixes, each with its evidence and risk.

One playbook per Finding code. A playbook builds the precise change (a strategic or JSON merge
patch to a named object, or a whole manifest to create) from the Finding's details and the same
Snapshot the analyzers read, and says why that value: the sandbox, like many clusters, offers no
registry API, so an image fix comes from the images the namespace and cluster run and the
workload's earlier ReplicaSets, named in `evidence`. Fixes of all findings are ranked by their
finding's severity, then confidence.

Nothing is applied here: a Fix is a proposal for the write tools or a person.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator

from mcp_servers.common.quantity import mebibytes, parse
from mcp_servers.kube.diagnosis.findings import SEVERITY_RANK, Finding, Fix, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

OOM_HEADROOM = 1.5
MAX_FIXES_PER_FINDING = 3
_TEMPLATED = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}
_PLURALS = {
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "Job": "jobs",
    "Pod": "pods",
}

Playbook = Callable[[Finding, Snapshot], Iterator[Fix]]


def recommend(findings: list[Finding], snapshot: Snapshot) -> list[Fix]:
    fixes: list[tuple[int, float, Fix]] = []
    for finding in findings:
        playbook = PLAYBOOKS.get(finding.code)
        if playbook is None:
            continue
        made = sorted(playbook(finding, snapshot), key=lambda f: -f.confidence)
        for fix in made[:MAX_FIXES_PER_FINDING]:
            fixes.append((SEVERITY_RANK[finding.severity], -fix.confidence, fix))
    fixes.sort(key=lambda entry: (entry[0], entry[1]))
    return [fix for _, _, fix in fixes]


def container_patch(kind: str, container: str, change: Json) -> Json:
    """A strategic merge patch changing one container (merged by name) of a pod or template."""
    pod_spec = {"containers": [{"name": container, **change}]}
    return {"spec": {"template": {"spec": pod_spec}}} if kind in _TEMPLATED else {"spec": pod_spec}


def _workload(finding: Finding, snapshot: Snapshot) -> Json | None:
    plural = _PLURALS.get(finding.ref.kind)
    if plural is None:
        return None
    return snapshot.by_name(plural, finding.ref.namespace, finding.ref.name)


def _pod_risk(ref: ObjectRef) -> str:
    if ref.kind == "Pod":
        return "a bare pod's containers are mostly immutable: recreate the pod with this change"
    return f"rolls out new pods of {ref}; old pods are replaced per its update strategy"


def _owned_replicasets(snapshot: Snapshot, ref: ObjectRef) -> list[Json]:
    found = [
        rs
        for rs in snapshot.of("replicasets")
        if namespace_of(rs) == ref.namespace
        and any(
            o.get("kind") == ref.kind and o.get("name") == ref.name
            for o in (rs.get("metadata") or {}).get("ownerReferences") or []
        )
    ]
    return sorted(found, key=_revision, reverse=True)


def _revision(rs: Json) -> int:
    annotations = (rs.get("metadata") or {}).get("annotations") or {}
    try:
        return int(annotations.get("deployment.kubernetes.io/revision") or 0)
    except ValueError:
        return 0


def _template_container(obj: Json, name: str) -> Json:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or obj.get("spec") or {}
    for container in spec.get("containers") or []:
        if container.get("name") == name:
            return dict(container)
    return {}


# -- the playbooks ----------------------------------------------------------------------------


def image_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    broken = str(finding.details.get("image") or "")
    container = str(finding.details.get("container") or "")
    candidates: dict[str, tuple[float, str]] = {}  # image -> (bonus, why)
    for rs in _owned_replicasets(snapshot, finding.ref):
        image = str(_template_container(rs, container).get("image") or "")
        ready = int((rs.get("status") or {}).get("readyReplicas") or 0)
        if image and image != broken and image not in candidates:
            good = "ran ready pods" if ready else "is an earlier revision"
            candidates[image] = (
                0.25 if ready else 0.1,
                f"ReplicaSet {name_of(rs)} (revision {_revision(rs)}) {good} with image {image}",
            )
    for pod in snapshot.of("pods"):
        for cstatus in (pod.get("status") or {}).get("containerStatuses") or []:
            image = str(cstatus.get("image") or "")
            if image and image != broken and cstatus.get("imageID") and image not in candidates:
                candidates[image] = (0.0, f"pod {namespace_of(pod)}/{name_of(pod)} runs {image}")
    scored = []
    for image, (bonus, why) in candidates.items():
        similarity = difflib.SequenceMatcher(None, broken, image).ratio()
        if similarity >= 0.6 or bonus >= 0.25:
            scored.append((min(0.95, similarity * 0.7 + bonus), image, why, similarity))
    for confidence, image, why, similarity in sorted(scored, reverse=True):
        yield Fix(
            finding.code,
            finding.ref,
            f"set image of container {container} to {image}",
            "strategic",
            container_patch(finding.ref.kind, container, {"image": image}),
            f"pods pull {image}, which this cluster has pulled before, and start",
            "low" if similarity > 0.8 else "medium",
            _pod_risk(finding.ref),
            round(confidence, 2),
            (
                why,
                f"{broken!r} cannot be pulled; similarity to {image!r}: {similarity:.2f}",
                "no registry API is available: candidates are images this cluster already runs",
            ),
        )


def oom_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    container = str(finding.details.get("container") or "")
    limit = finding.details.get("limit")
    usage = finding.details.get("usage")
    observed = max(float(limit or 0), float(usage or 0))
    if not observed:
        return
    new = mebibytes(observed * OOM_HEADROOM)
    workload = _workload(finding, snapshot) or {}
    requests = (_template_container(workload, container).get("resources") or {}).get("requests")
    resources: Json = {"limits": {"memory": new}}
    if parse((requests or {}).get("memory")) is not None:
        resources["requests"] = {"memory": (requests or {}).get("memory")}
    yield Fix(
        finding.code,
        finding.ref,
        f"raise the memory limit of container {container} to {new}",
        "strategic",
        container_patch(finding.ref.kind, container, {"resources": resources}),
        f"the container gets {OOM_HEADROOM}x its observed peak ({observed / 2**20:.0f}Mi: it was "
        "killed at its limit) and stops being OOMKilled, unless it leaks without bound",
        "medium",
        f"{_pod_risk(finding.ref)}; each pod may use up to {new} of its node's memory. If usage "
        "keeps growing (a leak), this only delays the next kill: look at the application",
        0.8,
        (f"OOMKilled at limit {limit} bytes", f"metrics.k8s.io usage: {usage} bytes"),
    )


def missing_object_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    kind = str(finding.details.get("object_kind"))
    name = str(finding.details.get("object"))
    namespace = finding.ref.namespace
    keys = [str(k) for k in finding.details.get("keys") or []]
    target = ObjectRef(kind, name, namespace)
    data_field = "data" if kind == "ConfigMap" else "stringData"
    if finding.details.get("missing_key"):
        key = str(finding.details["missing_key"])
        yield Fix(
            finding.code,
            target,
            f"add key {key} to {kind} {name}",
            "merge",
            {data_field: {key: ""}},
            f"the container finds key {key} and starts (the value must be filled in by a person)",
            "low",
            "the empty value is a placeholder: fill it before applying",
            0.85,
            (f"the pod references key {key} of {kind} {name}",),
        )
        return
    manifest: Json = {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        data_field: {key: "" for key in keys},
    }
    yield Fix(
        finding.code,
        target,
        f"create {kind} {name} with the keys the pod references",
        "manifest",
        manifest,
        f"the kubelet finds {kind} {name} and creates the containers",
        "low",
        f"values are empty placeholders for a person to fill: {keys or 'no key named'}",
        0.85,
        (f"the pod's env/volumes reference {kind} {name} keys {keys}",),
    )


def selector_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    selector: dict[str, str] = dict(finding.details.get("selector") or {})
    namespace = finding.ref.namespace
    sources: dict[tuple[tuple[str, str], ...], str] = {}
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
            sources.setdefault(key, f"{kind} {name_of(obj)}'s pod template carries {dict(key)}")
    for pod in snapshot.pods_in(namespace):
        labels = (pod.get("metadata") or {}).get("labels") or {}
        key = tuple(
            sorted(
                (str(k), str(v))
                for k, v in labels.items()
                if k != "pod-template-hash" and k != "controller-revision-hash"
            )
        )
        if key:
            sources.setdefault(key, f"pod {name_of(pod)} carries {dict(key)}")
    for labels, why in sources.items():
        carried = dict(labels)
        new = {k: carried[k] for k in selector if k in carried}
        if not new:
            continue
        similarity = difflib.SequenceMatcher(
            None, str(sorted(selector.items())), str(sorted(new.items()))
        ).ratio()
        patch: Json = {"spec": {"selector": {**{k: None for k in selector if k not in new}, **new}}}
        yield Fix(
            finding.code,
            finding.ref,
            f"select the pods labelled {new}",
            "merge",
            patch,
            f"the Service selects the pods labelled {new} and gets their ready endpoints",
            "low",
            "traffic to the Service reaches these pods from now on",
            round(0.5 + 0.4 * similarity, 2),
            (why, f"old selector {selector} matches no pod"),
        )


def probe_port_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    if not finding.details.get("wrong_port") or finding.ref.kind == "Pod":
        return
    ports = finding.details.get("ports") or []
    container, probe = str(finding.details["container"]), str(finding.details["probe"])
    workload = _workload(finding, snapshot) or {}
    spec = dict(_template_container(workload, container).get(probe) or {})
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
        _pod_risk(finding.ref),
        0.85,
        (f"probe port {finding.details.get('port')} is not among container ports {ports}",),
    )


def storage_class_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    default = finding.details.get("default_class")
    claim = snapshot.by_name("persistentvolumeclaims", finding.ref.namespace, finding.ref.name)
    if not default or claim is None:
        return
    meta = claim.get("metadata") or {}
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "labels": meta.get("labels") or {},
        },
        "spec": {**(claim.get("spec") or {}), "storageClassName": default},
    }
    yield Fix(
        finding.code,
        finding.ref,
        f"recreate the claim with the default StorageClass {default}",
        "manifest",
        manifest,
        f"a volume is provisioned by {default} and the claim binds",
        "medium",
        "storageClassName is immutable: delete the Pending claim (it holds no data) "
        "and create this one",
        0.8,
        (
            f"StorageClass {finding.details.get('storage_class')} does not exist; "
            f"{default} is the cluster's default",
        ),
    )


def unschedulable_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    constraints = list(finding.details.get("constraints") or [])
    workload = _workload(finding, snapshot)
    if workload is None:
        return
    template = (workload.get("spec") or {}).get("template") or {}
    pod_spec = template.get("spec") if finding.ref.kind in _TEMPLATED else workload.get("spec")
    pod_spec = pod_spec or {}
    if "resources" in constraints:
        yield from _resource_fix(finding, snapshot, pod_spec)
    if "node-selector" in constraints and pod_spec.get("nodeSelector"):
        path = (
            {"template": {"spec": {"nodeSelector": None}}}
            if finding.ref.kind in _TEMPLATED
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
            (f"nodeSelector {pod_spec.get('nodeSelector')}: {finding.details.get('message')}",),
        )


def _resource_fix(finding: Finding, snapshot: Snapshot, pod_spec: Json) -> Iterator[Fix]:
    for resource in finding.details.get("resources") or []:
        biggest = max(
            (
                parse(((n.get("status") or {}).get("allocatable") or {}).get(resource)) or 0.0
                for n in snapshot.of("nodes")
            ),
            default=0.0,
        )
        for container in pod_spec.get("containers") or []:
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


def node_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    yield Fix(
        finding.code,
        finding.ref,
        f"cordon node {finding.ref.name}",
        "merge",
        {"spec": {"unschedulable": True}},
        "no new pod is scheduled onto the failing node; a drain can then move its pods",
        "low",
        "reduces capacity; existing pods stay until drained",
        0.7,
        (f"{finding.summary}",),
    )


PLAYBOOKS: dict[str, Playbook] = {
    "ImagePullBackOff": image_fix,
    "OOMKilled": oom_fix,
    "MissingConfigMap": missing_object_fix,
    "MissingSecret": missing_object_fix,
    "MissingConfigMapKey": missing_object_fix,
    "MissingSecretKey": missing_object_fix,
    "ServiceSelectorNoMatch": selector_fix,
    "ProbeFailing": probe_port_fix,
    "StorageClassNotFound": storage_class_fix,
    "Unschedulable": unschedulable_fix,
    "NodeNotReady": node_fix,
    "NodeConditionFailed": node_fix,
}
