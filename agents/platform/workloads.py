"""What the audit finds in one workload's pod spec, and whether a multi-replica one has a PDB.

Pure functions over objects as the kube read tools return them (`list_resources` rows with the
whole `spec`), so every finding carries its evidence: the object, the field path as kubectl
would address it, and the value found there ("absent" when the field is missing). Which
registries are allowed comes from the org's ImagePolicy documents, never from here.

A finding's `fix` says whether a manifest change fixes it by pull request (`pr`: a missing
PodDisruptionBudget, added as a new object next to the workload; missing requests or limits of a
controller's containers where the namespace's NamespaceBlueprint has a LimitRange, filled from
its defaults by `filled`) or it is only reported (`report`: probes, security contexts, digests
and registries, and requests and limits where no blueprint says what a container gets, need the
owners' judgement of values this agent cannot know).

Why a blueprint's LimitRange defaults are the right values: they are what the API server gives
every container in that namespace that sets none, at admission. Writing them into the pod
template changes nothing the pods get; it puts the values where the owners see and tune them,
and where the scheduler and the quota read them from the workload rather than from a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NotRequired, TypedDict

from pydantic import ValidationError

from core.policy.documents.blueprint import LimitRangeSpec, quantity
from core.policy.documents.images import ImageSpec, pinned, repository
from core.policy.documents.selectors import LabelSelector

Severity = Literal["critical", "high", "medium", "low"]
RESOURCE_CHECKS = ("no-requests", "no-limits")
RESOURCES = ("cpu", "memory")
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
    cluster: NotRequired[str]  # the kubeconfig context, in a fleet; absent for the one cluster


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


def filled(container: Json, limits: LimitRangeSpec) -> dict[str, tuple[str, str]]:
    """The requests and limits `container` lacks, as a LimitRange with `limits` would set them:
    "requests.cpu" -> (value, why). A request defaults to `defaultRequest`, else to the default
    limit (as Kubernetes does); a limit to `default`. A request is never set above the
    container's limit, nor a limit below its request: the API server refuses either."""
    resources = container.get("resources") or {}
    asked, capped = dict(resources.get("requests") or {}), dict(resources.get("limits") or {})
    made: dict[str, tuple[str, str]] = {}
    for resource in RESOURCES:
        if resource not in asked:
            value = limits.defaultRequest.get(resource) or limits.default.get(resource)
            why = "the blueprint's default request"
            if value is not None and resource in capped and _above(value, capped[resource]):
                why = f"its limit: the default request {value} is above it"
                value = str(capped[resource])
            if value is not None:
                asked[resource] = value
                made[f"requests.{resource}"] = (value, why)
        if resource not in capped and (value := limits.default.get(resource)) is not None:
            why = "the blueprint's default limit"
            if resource in asked and _above(asked[resource], value):
                why = f"its request: the default limit {value} is below it"
                value = str(asked[resource])
            made[f"limits.{resource}"] = (value, why)
    return made


def _above(one: object, other: object) -> bool:
    try:
        return quantity(one) > quantity(other)
    except ValueError:
        return False  # a value the API server would refuse anyway: leave the choice alone


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
    def key(f: Finding) -> tuple[int, str, str, str]:
        return SEVERITIES.index(f["severity"]), f.get("cluster", ""), f["object"], f["field"]

    return sorted(found, key=key)
