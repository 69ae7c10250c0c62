"""Pod templates as the playbooks change them: which object holds the pod spec, a strategic merge
patch to one container, the workload a Finding names, and what rolling it out risks.

Only what several playbook modules need about pod specs lives here.
"""

from __future__ import annotations

from mcp_servers.kube.diagnosis.findings import Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot

TEMPLATED = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}
PLURALS = {
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "ReplicaSet": "replicasets",
    "Job": "jobs",
    "Pod": "pods",
}


def container_patch(kind: str, container: str, change: Json) -> Json:
    """A strategic merge patch changing one container (merged by name) of a pod or template."""
    return pod_spec_patch(kind, {"containers": [{"name": container, **change}]})


def pod_spec_patch(kind: str, change: Json) -> Json:
    """A patch of the pod spec, placed where `kind` keeps it (a template, or the pod itself)."""
    return {"spec": {"template": {"spec": change}}} if kind in TEMPLATED else {"spec": change}


def workload(snapshot: Snapshot, ref: ObjectRef) -> Json | None:
    plural = PLURALS.get(ref.kind)
    if plural is None:
        return None
    return snapshot.by_name(plural, ref.namespace, ref.name)


def finding_workload(finding: Finding, snapshot: Snapshot) -> Json | None:
    return workload(snapshot, finding.ref)


def pod_spec(kind: str, obj: Json) -> Json:
    spec = obj.get("spec") or {}
    return dict(((spec.get("template") or {}).get("spec") or {}) if kind in TEMPLATED else spec)


def template_container(obj: Json, name: str) -> Json:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or obj.get("spec") or {}
    for container in spec.get("containers") or []:
        if container.get("name") == name:
            return dict(container)
    return {}


def pod_risk(ref: ObjectRef) -> str:
    if ref.kind == "Pod":
        return "a bare pod's containers are mostly immutable: recreate the pod with this change"
    return f"rolls out new pods of {ref}; old pods are replaced per its update strategy"
