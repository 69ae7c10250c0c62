"""Node Declared Features (KEP-5328): what a kubelet publishes in `status.declaredFeatures`, and
which of those features a pod needs of the node it runs on.

In Kubernetes one library (`k8s.io/component-helpers/nodedeclaredfeatures`) is shared by the
kubelet, which declares the features its gates and runtime enable, and by the scheduler's
`NodeDeclaredFeatures` plugin, which infers from a pod's spec the features it requires and keeps
it off nodes that do not declare them all. This module is that library for the sandbox: the
kubelets (`heartbeat.py`) and node registration (`sandbox/control/joining.py`,
`sandbox/scenario.py`) declare from it, the scheduler (`sandbox/control/scheduling`) infers
from it. A sandbox kubelet runs with its version's default gates, so what it declares depends
only on `status.nodeInfo.kubeletVersion`; after an upgrade wave the new nodes declare more.

The registry is data: each entry names a feature, the first minor whose kubelets declare it by
default, and what in a pod spec requires it at scheduling time. The list is the sandbox's: a
few real entries of Kubernetes' registry, two that kubelets declare with their default gates
and one the sandbox turns on, each tied to pod fields the sandbox's 1.37 API serves (the real
registry holds more, such as UserNamespacesHostNetworkSupport, alpha and off by default):
- `InPlacePodLevelResourcesVerticalScaling`: its gate went beta, on by default, in 1.36. Real
  inference asks for it only when a bound pod's pod-level resources are resized, never for
  scheduling, so here it is declared and never required.
- `RestartAllContainersOnContainerExits`: alpha in 1.35, beta and on by default in 1.36; a pod
  requires it when a container or init container has a `restartPolicyRules` entry whose action
  is `RestartAllContainers`.
- `VolumeBindMountOptions`: new in 1.37 (`volumeMounts[].bindMountOptions`), alpha there, and
  declared by a real kubelet only with the gate on and a runtime that honours mount options.
  Those two conditions are the sandbox's choice: its 1.37 kubelets meet them, as its API serves
  every 1.37 field without gates. A pod requires it when any container, init container or
  ephemeral container mounts a volume with `bindMountOptions`.
Kubelets before 1.36 declare nothing and publish no field (the NodeDeclaredFeatures gate was
alpha, off by default, in 1.35), so they can take no pod that requires a feature. None of these
features has reached the `MaxVersion` after which Kubernetes stops declaring and requiring it.

Plain functions of API objects; nothing here knows the store, the clock or the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.store import Obj
from sandbox.version import is_version, release

FIELD = "declaredFeatures"  # in Node status: a sorted list of feature names
Spec = Mapping[str, Any]


@dataclass(frozen=True)
class DeclaredFeature:
    """One entry of the registry: who declares the feature, and which pods require it."""

    name: str
    since: tuple[int, int]  # (major, minor) of the first kubelet that declares it by default
    required_by: Callable[[Spec], bool]  # does a pod with this spec need it to be scheduled?


def _containers(spec: Spec) -> Iterator[Mapping[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or ()


def _never(spec: Spec) -> bool:
    return False


def _restarts_all_containers(spec: Spec) -> bool:
    return any(
        rule.get("action") == "RestartAllContainers"
        for key in ("initContainers", "containers")
        for container in spec.get(key) or ()
        for rule in container.get("restartPolicyRules") or ()
    )


def _sets_bind_mount_options(spec: Spec) -> bool:
    return any(
        mount.get("bindMountOptions")
        for container in _containers(spec)
        for mount in container.get("volumeMounts") or ()
    )


FEATURES: tuple[DeclaredFeature, ...] = (
    DeclaredFeature("InPlacePodLevelResourcesVerticalScaling", (1, 36), _never),
    DeclaredFeature("RestartAllContainersOnContainerExits", (1, 36), _restarts_all_containers),
    DeclaredFeature("VolumeBindMountOptions", (1, 37), _sets_bind_mount_options),
)


def declared_by(kubelet_version: str) -> list[str] | None:
    """The sorted names a kubelet of this version declares; None when it publishes no field
    (before 1.36, or a version that is not a Kubernetes release)."""
    if not is_version(kubelet_version):
        return None
    minor = release(kubelet_version)[:2]
    if minor < min(f.since for f in FEATURES):
        return None
    return sorted(f.name for f in FEATURES if f.since <= minor)


def required_by(spec: Spec) -> tuple[str, ...]:
    """The sorted names a pod with this spec requires of its node to be scheduled there."""
    return tuple(sorted(f.name for f in FEATURES if f.required_by(spec)))


def declared(node: Obj) -> frozenset[str]:
    """What a Node's status declares (nothing when the field is absent)."""
    return frozenset(str(n) for n in (node.get("status") or {}).get(FIELD) or ())


def with_declared(status: Mapping[str, Any]) -> dict[str, Any]:
    """`status` with the declaredFeatures its `nodeInfo.kubeletVersion` declares, the field
    left out when that kubelet declares none."""
    version = str((status.get("nodeInfo") or {}).get("kubeletVersion") or "")
    names = declared_by(version)
    rest = {k: v for k, v in status.items() if k != FIELD}
    return rest if names is None else {**rest, FIELD: names}
