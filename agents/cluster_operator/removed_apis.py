"""APIs an upgrade stops serving, and who still uses them: part of upgrade readiness (upgrades.py).

`REMOVED` is the data: each API version with the minor that stops serving it, its kinds, and what
to use instead, from the Kubernetes deprecation guide, plus the sandbox's own deprecated versions
(the facts of sandbox/deprecations.py, repeated here as data because agents never import the
sandbox: change both together). `uses` looks for them in three places, through the agent's read
tools only:

- the manifests git holds (`list_manifests`): an old apiVersion there breaks the next sync, so
  every removal up to the target counts, however old;
- live objects last applied in a version the target removes (their
  `kubectl.kubernetes.io/last-applied-configuration`, read from the kind's current version with
  `list_resources`): the API server keeps the object, stored in its current version and readable
  in any served one, so the object is not what breaks; its owner's next `kubectl apply` of the
  same manifest is, and the annotation is the trace it leaves. Only versions the target removes
  and the cluster still serves count (`current < removal <= target`);
- the API server's `apiserver_requested_deprecated_apis` gauge (`apiserver_metrics`), which
  names each deprecated group/version/resource requested since the API server started, whoever
  asked (a controller, a CI job, a script that leaves no annotation).

Git and live uses are blockers: each names the object, its namespace (whose team owns it) and the
version to move to. A requested version is a warning, never a blocker on its own: the gauge names
no client and stays set until the API server restarts, so it still shows a use that has since
moved to the current version; it is said as "requested since the API server started" for a
person to trace. Where a role lacks a tool, what was not read is said (`Evidence.unseen`).
"""

from __future__ import annotations

import json
from typing import Literal, TypedDict

from agents.runtime.errors import ToolFailed
from agents.runtime.questions.evidence import Evidence, Json

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
DEPRECATED_REQUESTS = "apiserver_requested_deprecated_apis"

# (minor that stops serving it, apiVersion, kinds, what to use instead)
Removal = tuple[int, str, tuple[str, ...], str]
REMOVED: tuple[Removal, ...] = (
    (16, "extensions/v1beta1", ("Deployment", "DaemonSet", "ReplicaSet"), "apps/v1"),
    (16, "extensions/v1beta1", ("NetworkPolicy",), "networking.k8s.io/v1"),
    (16, "apps/v1beta1", ("Deployment", "StatefulSet"), "apps/v1"),
    (16, "apps/v1beta2", ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"), "apps/v1"),
    (22, "extensions/v1beta1", ("Ingress",), "networking.k8s.io/v1"),
    (22, "networking.k8s.io/v1beta1", ("Ingress", "IngressClass"), "networking.k8s.io/v1"),
    (22, "apiextensions.k8s.io/v1beta1", ("CustomResourceDefinition",), "apiextensions.k8s.io/v1"),
    (
        22,
        "admissionregistration.k8s.io/v1beta1",
        ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
        "admissionregistration.k8s.io/v1",
    ),
    (22, "apiregistration.k8s.io/v1beta1", ("APIService",), "apiregistration.k8s.io/v1"),
    (22, "certificates.k8s.io/v1beta1", ("CertificateSigningRequest",), "certificates.k8s.io/v1"),
    (22, "coordination.k8s.io/v1beta1", ("Lease",), "coordination.k8s.io/v1"),
    (
        22,
        "rbac.authorization.k8s.io/v1beta1",
        ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
        "rbac.authorization.k8s.io/v1",
    ),
    (22, "scheduling.k8s.io/v1beta1", ("PriorityClass",), "scheduling.k8s.io/v1"),
    (
        22,
        "storage.k8s.io/v1beta1",
        ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
        "storage.k8s.io/v1",
    ),
    (25, "batch/v1beta1", ("CronJob",), "batch/v1"),
    (25, "discovery.k8s.io/v1beta1", ("EndpointSlice",), "discovery.k8s.io/v1"),
    (25, "events.k8s.io/v1beta1", ("Event",), "events.k8s.io/v1"),
    (25, "autoscaling/v2beta1", ("HorizontalPodAutoscaler",), "autoscaling/v2"),
    (25, "policy/v1beta1", ("PodDisruptionBudget",), "policy/v1"),
    (25, "policy/v1beta1", ("PodSecurityPolicy",), "Pod Security Admission"),
    (25, "node.k8s.io/v1beta1", ("RuntimeClass",), "node.k8s.io/v1"),
    (26, "autoscaling/v2beta2", ("HorizontalPodAutoscaler",), "autoscaling/v2"),
    (
        26,
        "flowcontrol.apiserver.k8s.io/v1beta1",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (27, "storage.k8s.io/v1beta1", ("CSIStorageCapacity",), "storage.k8s.io/v1"),
    (
        29,
        "flowcontrol.apiserver.k8s.io/v1beta2",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        32,
        "flowcontrol.apiserver.k8s.io/v1beta3",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    # The sandbox's own deprecated versions (sandbox/deprecations.py): Kubernetes never shipped
    # them; the sandbox serves them so that an upgrade from 1.37 meets a removal.
    (38, "batch/v1beta2", ("CronJob",), "batch/v1"),
    (39, "policy/v1beta2", ("PodDisruptionBudget",), "policy/v1"),
)

Source = Literal["git", "live", "requested"]


class RemovedUse(TypedDict):
    source: Source  # "requested" (the gauge) is told; "git" and "live" block
    what: str  # "CronJob shop/report in apps/report.yaml" (git), "CronJob shop/report" (live)
    namespace: str  # "" for a cluster-scoped object or a request
    why: str  # what stops being served when, and what to use instead


async def uses(
    evidence: Evidence, *, current: int, goal: int, git: bool = True
) -> list[RemovedUse]:
    """What uses an API version removed by minor `goal` (of a cluster at minor `current`);
    the manifests in git only where `git` (the cluster the crew's repository syncs to)."""
    return [
        *(await _in_git(evidence, goal) if git else []),
        *await _live(evidence, current, goal),
        *await _requested(evidence, current, goal),
    ]


async def serves(evidence: Evidence, kind: str) -> bool:
    """Whether the cluster serves `kind` (any answer but "no such resource type" says so)."""
    try:
        where = {"context": evidence.context} if evidence.context else {}
        await evidence.toolbox.call("list_resources", kind=kind, limit=1, **where)
    except ToolFailed as exc:
        if "has no resource type" in exc.reason:
            return False
        raise
    return True


async def _in_git(evidence: Evidence, goal: int) -> list[RemovedUse]:
    found: list[RemovedUse] = []
    for row in await _manifests(evidence):
        api_version, kind = str(row.get("apiVersion", "")), str(row.get("kind", ""))
        for minor, removed, kinds, use in REMOVED:
            if api_version == removed and kind in kinds and minor <= goal:
                namespace = str(row.get("namespace", ""))
                found.append(RemovedUse(
                    source="git",
                    what=f"{kind} {_named(namespace, str(row.get('name', '')))} "
                         f"in {row.get('file', '?')}",
                    namespace=namespace,
                    why=f"{api_version} {kind} is no longer served since v1.{minor}: "
                        f"use {use}",
                ))  # fmt: skip
    return found


async def _live(evidence: Evidence, current: int, goal: int) -> list[RemovedUse]:
    found: list[RemovedUse] = []
    for minor, removed, kinds, use in REMOVED:
        if not current < minor <= goal or "/" not in use:
            continue  # served by neither cluster, or replaced by no API version
        group = use.rpartition("/")[0]
        for kind in kinds:
            qualified = f"{kind}.{group}" if group else kind
            if not await serves(evidence, qualified):
                continue
            scan = await evidence.scan(qualified, f"{kind}s", namespace=None,
                                       fields=["metadata.annotations"])  # fmt: skip
            for row in scan.items if scan else []:
                if _last_applied_version(row) != removed:
                    continue
                namespace = str(row.get("namespace") or "")
                found.append(RemovedUse(
                    source="live",
                    what=f"{kind} {_named(namespace, str(row['name']))}",
                    namespace=namespace,
                    why=f"last applied as {removed} {kind}, which v1.{minor} no longer serves: "
                        f"the next apply of its manifest fails there; apply it as {use}",
                ))  # fmt: skip
    return found


async def _requested(evidence: Evidence, current: int, goal: int) -> list[RemovedUse]:
    what = "the API server's record of deprecated API requests"
    if not evidence.has("apiserver_metrics"):
        evidence.unseen.append(f"{what} (this agent has no `apiserver_metrics` tool)")
        return []
    answer = await evidence.call("apiserver_metrics", what, name=DEPRECATED_REQUESTS, limit=200)
    found: list[RemovedUse] = []
    for sample in (answer or {}).get("samples") or []:
        labels = sample.get("labels") or {}
        minor = _removal_minor(str(labels.get("removed_release") or ""))
        if minor is None or not current < minor <= goal or not sample.get("value"):
            continue
        group, version = str(labels.get("group") or ""), str(labels.get("version") or "")
        resource = str(labels.get("resource") or "")
        api_version = f"{group}/{version}" if group else version
        found.append(RemovedUse(
            source="requested",
            what=f"{api_version} {resource}",
            namespace="",
            why=f"requested since the API server started ({DEPRECATED_REQUESTS}; it names no "
                f"client and clears only on a restart), and no longer served from v1.{minor}: "
                f"find who still asks (CI jobs, controllers, scripts) and move them to "
                f"{_replacement(api_version, resource)}",
        ))  # fmt: skip
    return found


async def _manifests(evidence: Evidence) -> list[Json]:
    if not evidence.has("list_manifests"):  # allowed to the role: no GitOps repository is set
        evidence.unseen.append(
            "the manifests in git (no GitOps repository is set for the crew: give --repo, or "
            "a repo in the crew file)"
        )
        return []
    rows: list[Json] = []
    while True:
        page = await evidence.call("list_manifests", "the manifests in git",
                                   limit=200, offset=len(rows))  # fmt: skip
        objects = [o for o in (page or {}).get("objects") or [] if isinstance(o, dict)]
        rows += objects
        if not objects or len(rows) >= int((page or {}).get("total") or 0):
            return rows


def _last_applied_version(row: Json) -> str:
    annotations = row.get("metadata.annotations") or {}
    try:
        applied = json.loads(str(annotations.get(LAST_APPLIED) or "{}"))
    except ValueError:
        return ""
    return str(applied.get("apiVersion") or "") if isinstance(applied, dict) else ""


def _removal_minor(release: str) -> int | None:
    major, _, minor = release.partition(".")
    return int(minor) if major == "1" and minor.isdigit() else None


def _replacement(api_version: str, resource: str) -> str:
    for _, removed, kinds, use in REMOVED:
        if removed == api_version and resource in {_plural(kind) for kind in kinds}:
            return use
    return "the version the Kubernetes deprecation guide names"


def _plural(kind: str) -> str:
    """The resource of a kind of `REMOVED`, by the rule their names follow."""
    lower = kind.lower()
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith("s") else "s")


def _named(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name
