"""Objects a workload needs that are missing or unusable: a ConfigMap or Secret (or one key of
it) a pod references, a claim asking for a StorageClass that does not exist.

A claim's class is immutable, so its fix is two steps: delete the claim, then create it again
on the cluster's default class, the rest of its spec kept. It is offered only for a claim that
never bound (no volume, never bind-completed): deleting it loses nothing. Pods waiting for it
never were scheduled, and pvc-protection only holds a claim a scheduled pod uses, so the delete
goes through at once and those pods start once the new claim binds.

The manifests carry names and keys only: values are empty placeholders a person fills in, since
no playbook can know (or may read) what a Secret should hold; such a fix is marked so and never
applied unattended. When the reference came with the latest rollout, going back to the revision
before is offered too (`rollback`): it ran without the missing object.
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Finding, Fix, ObjectRef, Step, patch_step
from mcp_servers.kube.diagnosis.playbooks.rollbacks import rollback
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot


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
            placeholders=True,
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
        placeholders=True,
    )
    yield from rollback(  # the reference came with a rollout: the revision before ran without
        finding,
        snapshot,
        confidence=0.6,
        why=(f"{kind} {name} does not exist, and the revision before did not need it",),
    )


def storage_class_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    default = finding.details.get("default_class")
    claim = snapshot.by_name("persistentvolumeclaims", finding.ref.namespace, finding.ref.name)
    if not default or claim is None:
        return
    meta = claim.get("metadata") or {}
    if (claim.get("spec") or {}).get("volumeName") or (meta.get("annotations") or {}).get(
        "pv.kubernetes.io/bind-completed"
    ):
        return  # it bound once: it may hold data, and recreating it is a person's call
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "labels": meta.get("labels") or {},
        },
        "spec": {
            k: v
            for k, v in {**(claim.get("spec") or {}), "storageClassName": default}.items()
            if k not in ("volumeName",)
        },
    }
    ref = finding.ref
    yield Fix(
        finding.code,
        ref,
        f"recreate the claim with the default StorageClass {default}",
        "manifest",
        manifest,
        f"a volume is provisioned by {default} and the claim binds",
        "medium",
        "storageClassName is immutable: the Pending claim, which never bound and holds no data, "
        "is deleted, then this one created; the pods waiting for it were never scheduled, so "
        "pvc-protection does not hold it, and they start once the new claim binds",
        0.8,
        (
            f"StorageClass {finding.details.get('storage_class')} does not exist; "
            f"{default} is the cluster's default",
        ),
        (
            Step("delete", {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace}),
            patch_step(ref, "manifest", manifest),
        ),
    )
