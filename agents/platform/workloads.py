"""What the audit finds in one workload's pod spec, and whether a multi-replica one has a PDB.

Pure functions over objects as the kube read tools return them (`list_resources` rows with the
whole `spec`), so every finding carries its evidence: the object, the field path as kubectl
would address it, and the value found there ("absent" when the field is missing). Which
registries are allowed comes from the org's ImagePolicy documents, never from here.

A finding's `fix` says whether a manifest change fixes it by pull request (`pr`: a missing
PodDisruptionBudget, added as a new object next to the workload) or it is only reported
(`report`: probes, security contexts, requests and limits, digests and registries need the
owners' judgement of values this agent cannot know).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict

from pydantic import ValidationError

from mcp_servers.policy.documents.images import ImageSpec, pinned, repository
from mcp_servers.policy.documents.selectors import LabelSelector

Severity = Literal["critical", "high", "medium", "low"]
SEVERITIES: tuple[Severity, ...] = ("critical", "high", "medium", "low")
Json = dict[str, Any]


class Finding(TypedDict):
    check: str  # what was checked, e.g. no-pdb, privileged, rbac-cluster-admin
    severity: Severity
    object: str  # "Deployment team-a/web", "ClusterRoleBinding ops-admin"
    field: str  # where, as a path in the object: spec.template.spec.containers[0].resources
    value: str  # the evidence: what that field holds ("absent" when missing)
    message: str
    fix: Literal["pr", "report"]


def finding(
    check: str, severity: Severity, obj: str, field: str, value: object, message: str,
    *, fix: Literal["pr", "report"] = "report",
) -> Finding:  # fmt: skip
    shown = (
        "absent" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )
    return Finding(check=check, severity=severity, object=obj, field=field, value=shown,
                   message=message, fix=fix)  # fmt: skip


def pod_spec(ref: str, spec: Json, base: str, *, images: Sequence[ImageSpec] = ()) -> list[Finding]:
    """Findings of one pod spec at path `base` (`spec` for a Pod, `spec.template.spec`)."""
    found: list[Finding] = []
    for flag, check in (("hostNetwork", "host-network"), ("hostPID", "host-pid")):
        if spec.get(flag) is True:
            found.append(finding(check, "high", ref, f"{base}.{flag}", True,
                                 f"{flag} shares the node's namespace with the pod"))  # fmt: skip
    pod_non_root = (spec.get("securityContext") or {}).get("runAsNonRoot") is True
    for group in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(group) or []):
            at = f"{base}.{group}[{index}]"
            found += _security(ref, container, at, pod_non_root=pod_non_root)
            found += _image(ref, str(container.get("image", "")), f"{at}.image", images)
            if group == "containers":
                found += _resources_and_probes(ref, container, at)
    return found


def _security(ref: str, container: Json, at: str, *, pod_non_root: bool) -> list[Finding]:
    context = container.get("securityContext") or {}
    name = container.get("name", "?")
    found: list[Finding] = []
    if context.get("privileged") is True:
        found.append(finding(
            "privileged", "critical", ref, f"{at}.securityContext.privileged", True,
            f"container {name} is privileged: root on the node",
        ))  # fmt: skip
    escalation = context.get("allowPrivilegeEscalation")
    if escalation is not False:
        found.append(finding(
            "privilege-escalation", "medium", ref, f"{at}.securityContext.allowPrivilegeEscalation",
            escalation, f"container {name} may gain more privileges than it starts with "
            "(set allowPrivilegeEscalation: false)",
        ))  # fmt: skip
    if context.get("runAsNonRoot") is not True and not pod_non_root:
        found.append(finding(
            "run-as-root", "medium", ref, f"{at}.securityContext.runAsNonRoot",
            context.get("runAsNonRoot"),
            f"container {name} may run as root (set runAsNonRoot: true)",
        ))  # fmt: skip
    return found


def _resources_and_probes(ref: str, container: Json, at: str) -> list[Finding]:
    name = container.get("name", "?")
    resources = container.get("resources") or {}
    found: list[Finding] = []
    for part, check in (("requests", "no-requests"), ("limits", "no-limits")):
        have = resources.get(part) or {}
        if not {"cpu", "memory"} <= set(have):
            found.append(finding(
                check, "medium", ref, f"{at}.resources.{part}", have or None,
                f"container {name} does not set both cpu and memory {part}",
            ))  # fmt: skip
    for probe, check in (("readinessProbe", "no-readiness-probe"),
                         ("livenessProbe", "no-liveness-probe")):  # fmt: skip
        if not container.get(probe):
            found.append(finding(check, "low", ref, f"{at}.{probe}", None,
                                 f"container {name} has no {probe}"))  # fmt: skip
    return found


def _image(ref: str, image: str, at: str, images: Sequence[ImageSpec]) -> list[Finding]:
    found: list[Finding] = []
    if images and not any(spec.allows(image) for spec in images):
        allowed = sorted({r for spec in images for r in spec.allowedRegistries})
        found.append(finding(
            "image-registry", "high", ref, at, image, f"{repository(image)} is outside the "
            f"allowed registries ({', '.join(allowed)})",
        ))  # fmt: skip
    if not pinned(image):
        strict = any(spec.requireDigest for spec in images)
        found.append(finding(
            "image-digest", "medium" if strict else "low", ref, at, image,
            "the image is not pinned by digest (@sha256:...): a re-tag changes what runs",
        ))  # fmt: skip
    return found


def needs_pdb(ref: str, kind: str, spec: Json, pdbs: Sequence[Json]) -> Finding | None:
    """A Deployment or StatefulSet of 2+ replicas no PodDisruptionBudget of its namespace
    covers (a PDB covers it when its selector matches the pod template's labels)."""
    replicas = spec.get("replicas", 1)
    if kind not in ("Deployment", "StatefulSet") or not isinstance(replicas, int) or replicas < 2:
        return None
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if any(_selects(pdb.get("spec.selector"), labels) for pdb in pdbs):
        return None
    return finding(
        "no-pdb", "medium", ref, "spec.replicas", replicas,
        f"{replicas} replicas and no PodDisruptionBudget: a node drain may take them all at once",
        fix="pr",
    )  # fmt: skip


def _selects(selector: object, labels: dict[str, str]) -> bool:
    if not isinstance(selector, dict):
        return False
    try:
        return LabelSelector.model_validate(selector).matches(labels)
    except ValidationError:
        return False


def ranked(found: list[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (SEVERITIES.index(f["severity"]), f["object"], f["field"]))
