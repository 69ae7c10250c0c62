"""Cluster API's admission webhooks, run as one admission hook of the sandbox: defaults, then
validation, on every write of the Cluster API kinds (clients' and controllers' alike).

A management cluster runs Cluster API's defaulting and validating webhooks on these kinds; the
sandbox applies the same rules so `kubectl get -o yaml` shows what a real cluster stores, and a
bad write fails with 422 and a message saying what to write instead.

Defaults:
- MachineDeployment, MachineSet, Machine: label `cluster.x-k8s.io/cluster-name` from
  `clusterName`; a version without its `v` gets one; `infrastructureRef.namespace` is the
  object's namespace.
- MachineDeployment: replicas 1, minReadySeconds 0, revisionHistoryLimit 1,
  progressDeadlineSeconds 600, strategy RollingUpdate with maxSurge 1 and maxUnavailable 0; its
  selector and template labels carry the cluster and deployment names; the template's
  `clusterName` is the deployment's.
- MachineSet: replicas 1, deletePolicy Random; selector and template labels carry the cluster.
- SandboxMachineTemplate: the node a default sandbox node is (4 CPUs, 16Gi), no GPUs, joining
  60 s after its Machine is created.
- KubeadmControlPlane: replicas 1, a version gets its `v`, rolloutStrategy RollingUpdate with
  maxSurge 1, `machineTemplate.infrastructureRef.namespace` is the object's namespace.

Validation: versions look like v1.37.2; a selector matches its template's labels; maxSurge and
maxUnavailable are not both 0; `clusterName` never changes; template cpu and memory are
quantities; a SandboxMachineTemplate's `spec.template.spec` never changes (make a new template
and point the MachineDeployment at it, as with any Cluster API infrastructure template). A
KubeadmControlPlane keeps an odd, positive number of replicas (etcd is stacked unless
`kubeadmConfigSpec.clusterConfiguration.etcd.external` says otherwise), a maxSurge of 0 or 1,
and a changed `spec.version` neither skips a minor release nor goes back from the version the
control plane runs (`status.version`, else the old spec's): kubeadm upgrades one minor at a
time and never downgrades. Its `sandbox.kubecrew.io/upgrade-seconds` is a number of seconds.
Shapes (types, required fields, replicas >= 0) are the schemas' job (`schemas.py`); the hook
leaves a malformed object as it is for them to reject.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandbox import bootstrap
from sandbox.clusterapi.vocabulary import (
    CLUSTER_NAME,
    CONTROL_PLANE_GROUP,
    DEPLOYMENT_NAME,
    GROUP,
    INFRASTRUCTURE_GROUP,
    UPGRADE_SECONDS,
)
from sandbox.errors import ApiError, Cause, invalid
from sandbox.jsoncopy import deep_copy
from sandbox.objects import Objects
from sandbox.quantity import parse_quantity
from sandbox.registry import ResourceType
from sandbox.selectors import LabelSelector
from sandbox.store import Obj
from sandbox.validation.causes import IMMUTABLE, forbidden
from sandbox.validation.causes import invalid as invalid_value
from sandbox.version import HINT, is_version, precedes, release, skips_a_minor

DEFAULT_PROVISION_SECONDS = 60
TEMPLATE_DEFAULTS: dict[str, Any] = {
    "cpu": bootstrap.NODE_CAPACITY["cpu"],
    "memory": bootstrap.NODE_CAPACITY["memory"],
    "gpus": 0,
    "kernelVersion": "6.1.0-sandbox",
    "osImage": "kubecrew sandbox",
    "containerRuntimeVersion": "containerd://2.1.0",
    "provisionSeconds": DEFAULT_PROVISION_SECONDS,
}


def admit(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    """The admission hook: Cluster API kinds get their defaults and are validated."""
    rules = _RULES.get(rt.kind) if rt.custom and rt.group in _GROUPS else None
    if rules is None:
        return obj
    default, validate = rules
    obj = deep_copy(obj)
    default(obj)
    causes = validate(obj, old)
    if causes:
        raise invalid(rt.kind, rt.group, obj["metadata"].get("name", ""), causes)
    return obj


# -- reading a body that may be malformed ---------------------------------------------------------


def _map(parent: Any, key: str) -> dict[str, Any] | None:
    """`parent[key]` when both are maps; a missing key becomes an empty map in `parent`."""
    if not isinstance(parent, dict):
        return None
    if parent.get(key) is None:
        parent[key] = {}
    found = parent[key]
    return found if isinstance(found, dict) else None


def _path(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


# -- defaults ----------------------------------------------------------------------------------


def _label_cluster(obj: Obj, spec: dict[str, Any]) -> None:
    cluster = spec.get("clusterName")
    if not isinstance(cluster, str) or not cluster:
        return
    labels = _map(obj["metadata"], "labels")
    if labels is not None:
        labels[CLUSTER_NAME] = cluster


def _machine_spec(spec: dict[str, Any] | None, namespace: str) -> None:
    if spec is None:
        return
    version = spec.get("version")
    if isinstance(version, str) and version and not version.startswith("v"):
        spec["version"] = f"v{version}"
    ref = spec.get("infrastructureRef")
    if isinstance(ref, dict) and not ref.get("namespace"):
        ref["namespace"] = namespace


def _set_labels(obj: Obj, spec: dict[str, Any], extra: dict[str, str]) -> None:
    """The selector and the template labels carry `extra` (cluster, deployment)."""
    selector = _map(spec, "selector")
    template = _map(spec, "template")
    matching = _map(selector, "matchLabels")
    labels = _map(_map(template, "metadata"), "labels")
    for target in (matching, labels):
        if target is not None:
            target.update(extra)
    template_spec = _map(template, "spec")
    cluster = spec.get("clusterName")
    if template_spec is not None and not template_spec.get("clusterName") and cluster:
        template_spec["clusterName"] = cluster
    _machine_spec(template_spec, obj["metadata"].get("namespace", ""))


def _owned_labels(obj: Obj, spec: dict[str, Any], *, deployment: bool) -> dict[str, str]:
    extra: dict[str, str] = {}
    if isinstance(spec.get("clusterName"), str) and spec["clusterName"]:
        extra[CLUSTER_NAME] = spec["clusterName"]
    if deployment:
        extra[DEPLOYMENT_NAME] = obj["metadata"].get("name", "")
    return extra


def _default_deployment(obj: Obj) -> None:
    spec = _map(obj, "spec")
    if spec is None:
        return
    _label_cluster(obj, spec)
    for key, value in (
        ("replicas", 1),
        ("minReadySeconds", 0),
        ("revisionHistoryLimit", 1),
        ("progressDeadlineSeconds", 600),
    ):
        spec.setdefault(key, value)
    strategy = _map(spec, "strategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        rolling = _map(strategy, "rollingUpdate")
        if rolling is not None:
            rolling.setdefault("maxSurge", 1)
            rolling.setdefault("maxUnavailable", 0)
    _set_labels(obj, spec, _owned_labels(obj, spec, deployment=True))


def _default_set(obj: Obj) -> None:
    spec = _map(obj, "spec")
    if spec is None:
        return
    _label_cluster(obj, spec)
    spec.setdefault("replicas", 1)
    spec.setdefault("deletePolicy", "Random")
    _set_labels(obj, spec, _owned_labels(obj, spec, deployment=False))


def _default_machine(obj: Obj) -> None:
    spec = _map(obj, "spec")
    if spec is not None:
        _label_cluster(obj, spec)
        _machine_spec(spec, obj["metadata"].get("namespace", ""))


def _default_template(obj: Obj) -> None:
    spec = _map(_map(_map(obj, "spec"), "template"), "spec")
    if spec is not None:
        for key, value in TEMPLATE_DEFAULTS.items():
            spec.setdefault(key, value)


def _default_control_plane(obj: Obj) -> None:
    spec = _map(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    namespace = obj["metadata"].get("namespace", "")
    _machine_spec(spec, namespace)  # the version's `v`
    template = spec.get("machineTemplate")
    _machine_spec(template if isinstance(template, dict) else None, namespace)
    strategy = _map(spec, "rolloutStrategy")
    if strategy is not None:
        strategy.setdefault("type", "RollingUpdate")
        rolling = _map(strategy, "rollingUpdate")
        if rolling is not None:
            rolling.setdefault("maxSurge", 1)


# -- validation --------------------------------------------------------------------------------


def _version(obj: Obj, path: tuple[str, ...]) -> list[Cause]:
    version = _path(obj, *path)
    if version is None or is_version(version):
        return []
    return [invalid_value(".".join(path), version, HINT)]


def _cluster_kept(obj: Obj, old: Obj | None) -> list[Cause]:
    if old is None:
        return []
    before, after = _path(old, "spec", "clusterName"), _path(obj, "spec", "clusterName")
    return [] if before == after else [invalid_value("spec.clusterName", after, IMMUTABLE)]


def _selector_matches(obj: Obj) -> list[Cause]:
    selector = _path(obj, "spec", "selector")
    labels = _path(obj, "spec", "template", "metadata", "labels")
    if not isinstance(selector, dict) or not isinstance(labels, dict):
        return []
    try:
        matches = LabelSelector.from_object(selector).matches(labels)
    except ApiError:
        return []  # a malformed selector: the schema says what is wrong with it
    if matches:
        return []
    return [invalid_value("spec.selector", selector, "selector does not match template labels")]


def _validate_deployment(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = _cluster_kept(obj, old) + _selector_matches(obj)
    causes += _version(obj, ("spec", "template", "spec", "version"))
    rolling = _path(obj, "spec", "strategy", "rollingUpdate")
    if isinstance(rolling, dict) and all(
        str(rolling.get(key)) in ("0", "0%") for key in ("maxSurge", "maxUnavailable")
    ):
        causes.append(
            invalid_value(
                "spec.strategy.rollingUpdate",
                rolling,
                "maxSurge and maxUnavailable cannot both be 0: the rollout could never start",
            )
        )
    return causes


def _validate_set(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = _cluster_kept(obj, old) + _selector_matches(obj)
    return causes + _version(obj, ("spec", "template", "spec", "version"))


def _validate_machine(obj: Obj, old: Obj | None) -> list[Cause]:
    return _cluster_kept(obj, old) + _version(obj, ("spec", "version"))


def _validate_template(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = []
    spec = _path(obj, "spec", "template", "spec")
    for key in ("cpu", "memory"):
        value = _path(spec, key)
        try:
            parse_quantity(value)
        except (ValueError, TypeError, AttributeError):
            where = f"spec.template.spec.{key}"
            causes.append(invalid_value(where, value, "must be a quantity such as 4 or 16Gi"))
    if old is not None and spec != _path(old, "spec", "template", "spec"):
        causes.append(
            invalid_value(
                "spec.template.spec",
                spec,
                "SandboxMachineTemplate spec.template.spec field is immutable. "
                "Please create a new resource instead.",
            )
        )
    return causes


def _validate_control_plane(obj: Obj, old: Obj | None) -> list[Cause]:
    causes = _version(obj, ("spec", "version")) + _upgrade_seconds(obj)
    replicas = _path(obj, "spec", "replicas")
    external = _path(obj, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "external")
    if isinstance(replicas, int) and replicas <= 0:
        causes.append(forbidden("spec.replicas", "replicas cannot be less than or equal to 0"))
    elif isinstance(replicas, int) and replicas % 2 == 0 and not external:
        detail = "replicas cannot be an even number when etcd is stacked: etcd needs a majority"
        causes.append(forbidden("spec.replicas", detail))
    surge = _path(obj, "spec", "rolloutStrategy", "rollingUpdate", "maxSurge")
    if surge is not None and str(surge) not in ("0", "1"):
        where = "spec.rolloutStrategy.rollingUpdate.maxSurge"
        causes.append(invalid_value(where, surge, "value must be 1 or 0"))
    return causes + _version_step(obj, old)


def _upgrade_seconds(obj: Obj) -> list[Cause]:
    value = (obj["metadata"].get("annotations") or {}).get(UPGRADE_SECONDS)
    if value is None:
        return []
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if 0 <= seconds < float("inf"):
        return []
    where = f"metadata.annotations[{UPGRADE_SECONDS}]"
    return [invalid_value(where, value, "must be a number of seconds, such as 120")]


def _version_step(obj: Obj, old: Obj | None) -> list[Cause]:
    """A changed spec.version may go one minor up from what the control plane runs, not two,
    and not down: kubeadm upgrades one minor release at a time and cannot downgrade."""
    wanted = _path(obj, "spec", "version")
    if old is None or wanted == _path(old, "spec", "version") or not is_version(wanted):
        return []
    current = _path(old, "status", "version")
    if not is_version(current):
        current = _path(old, "spec", "version")
    if not is_version(current):
        return []
    change = f"cannot update Kubernetes version from {current} to {wanted}"
    if precedes(wanted, current):
        detail = f"{change}: a control plane cannot be downgraded; keep {current} or go up"
        return [forbidden("spec.version", detail)]
    if skips_a_minor(current, wanted):
        major, minor, _ = release(current)
        detail = (
            f"{change}: upgrade one minor version at a time, to v{major}.{minor + 1}.x first, "
            f"then to {wanted} once status.version shows the first step done"
        )
        return [forbidden("spec.version", detail)]
    return []


Defaulter = Callable[[Obj], None]
Validator = Callable[[Obj, Obj | None], list[Cause]]

_GROUPS = frozenset({GROUP, INFRASTRUCTURE_GROUP, CONTROL_PLANE_GROUP})
_RULES: dict[str, tuple[Defaulter, Validator]] = {
    "MachineDeployment": (_default_deployment, _validate_deployment),
    "MachineSet": (_default_set, _validate_set),
    "Machine": (_default_machine, _validate_machine),
    "SandboxMachineTemplate": (_default_template, _validate_template),
    "KubeadmControlPlane": (_default_control_plane, _validate_control_plane),
}
