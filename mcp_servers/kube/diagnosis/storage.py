"""Storage analyzers: PersistentVolumeClaims that stay Pending, and why.

A claim naming a StorageClass that does not exist (with the default class, for the playbook),
a claim whose provisioning failed (ProvisioningFailed events), and any other claim Pending with
the events the persistent volume controller wrote about it.

It knows claims, classes and their events; nothing of fixes or MCP.
"""

from __future__ import annotations

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


def default_class(snapshot: Snapshot) -> str | None:
    for sc in snapshot.of("storageclasses"):
        annotations = (sc.get("metadata") or {}).get("annotations") or {}
        if annotations.get(DEFAULT_CLASS) == "true":
            return name_of(sc)
    return None


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    classes = {name_of(sc) for sc in snapshot.of("storageclasses")}
    for claim in snapshot.of("persistentvolumeclaims"):
        if (claim.get("status") or {}).get("phase") != "Pending":
            continue
        finding = _pending(snapshot, claim, classes)
        if finding is not None:
            found.append(finding)
    return found


def _pending(snapshot: Snapshot, claim: Json, classes: set[str]) -> Finding | None:
    namespace, name = namespace_of(claim), name_of(claim)
    ref = ObjectRef("PersistentVolumeClaim", name, namespace)
    wanted = (claim.get("spec") or {}).get("storageClassName")
    events = snapshot.events_for("PersistentVolumeClaim", namespace, name)
    evidence = tuple(
        Evidence("event", f"event {e.get('reason')} on {ref}", str(e.get("message")))
        for e in events[-3:]
    )
    mounting = [
        p
        for p in snapshot.pods_in(namespace)
        if any(
            (v.get("persistentVolumeClaim") or {}).get("claimName") == name
            for v in (p.get("spec") or {}).get("volumes") or []
        )
    ]
    users = tuple(ObjectRef("Pod", name_of(p), namespace) for p in mounting)
    # the workloads too: asked about its Deployment, a person hears about the claim it waits for
    users += tuple(
        dict.fromkeys(
            ObjectRef(kind, owner, namespace)
            for kind, owner in (workload_of(snapshot, p) for p in mounting)
            if kind != "Pod"
        )
    )
    details = {"storage_class": wanted, "default_class": default_class(snapshot)}
    if wanted and snapshot.of("storageclasses") and wanted not in classes:
        return Finding(
            "StorageClassNotFound",
            ref,
            "high",
            f"claim asks for StorageClass {wanted!r}, which does not exist "
            f"(classes: {sorted(classes)})",
            (Evidence("spec", str(ref), f"spec.storageClassName: {wanted}"), *evidence),
            0.95,
            users,
            details,
        )
    if any(e.get("reason") == "ProvisioningFailed" for e in events):
        return Finding(
            "ProvisioningFailed",
            ref,
            "high",
            "volume provisioning failed",
            evidence,
            0.9,
            users,
            details,
        )
    if users and evidence:
        return Finding(
            "PersistentVolumeClaimPending",
            ref,
            "medium",
            "claim is Pending while pods wait for it",
            evidence,
            0.6,
            users,
            details,
        )
    return None
