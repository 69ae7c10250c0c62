"""The names Cluster API objects are read and written with, and what every controller agrees on.

Storage keys of the six kinds; the labels and annotations Cluster API (v1beta1) puts on
MachineDeployments, MachineSets, Machines and the Nodes they become; the Machine finalizer,
phases and deletion hooks; the KubeadmControlPlane's condition types; and the plain functions
of objects several controllers must agree on: when a Machine counts as ready (its `NodeHealthy`
condition mirrors the Ready condition of its Node) and when as available (ready for
`minReadySeconds`), which deletion hooks hold a Machine, and how a CAPI condition is spelled
(with `severity` when it is False).

One label is the sandbox's own, documented here because agents select nodes by it: the provider
labels each Node `node.cluster.x-k8s.io/pool=<MachineDeployment name>`. It lies in the domain
Cluster API syncs from Machines to Nodes, so a real management cluster gives Nodes the same label
when the MachineDeployment template carries it. One annotation is the sandbox's own too:
`sandbox.kubecrew.io/upgrade-seconds` on a KubeadmControlPlane says how long (sandbox seconds)
rolling its control plane to a new version takes.

No store, no clock: plain data and functions of API objects.
"""

from __future__ import annotations

from typing import Any, Literal

from sandbox.clock import parse_time
from sandbox.store import Key, Obj

GROUP = "cluster.x-k8s.io"
INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"

CLUSTERS: Key = (GROUP, "clusters")
MACHINE_DEPLOYMENTS: Key = (GROUP, "machinedeployments")
MACHINE_SETS: Key = (GROUP, "machinesets")
MACHINES: Key = (GROUP, "machines")
MACHINE_TEMPLATES: Key = (INFRASTRUCTURE_GROUP, "sandboxmachinetemplates")
TEMPLATE_KIND = "SandboxMachineTemplate"
CONTROL_PLANES: Key = (CONTROL_PLANE_GROUP, "kubeadmcontrolplanes")
CONTROL_PLANE_KIND = "KubeadmControlPlane"

# Labels on MachineDeployments, MachineSets and Machines.
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
DEPLOYMENT_NAME = "cluster.x-k8s.io/deployment-name"
SET_NAME = "cluster.x-k8s.io/set-name"
TEMPLATE_HASH = "machine-template-hash"
# Annotations a person (or an agent) puts on a Machine.
DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"  # delete this one first on scale-down
EXCLUDE_NODE_DRAINING = "machine.cluster.x-k8s.io/exclude-node-draining"
MACHINE_FINALIZER = "machine.cluster.x-k8s.io"
# Deletion hooks: a deleted Machine waits while it carries an annotation whose key starts with
# one of these (`pre-drain.delete.hook.machine.cluster.x-k8s.io/<hook name>: <owner>`), before
# its Node is drained, and then before its Node and instance go.
PRE_DRAIN_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PRE_TERMINATE_HOOK = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"
# The sandbox's own, on a KubeadmControlPlane: how long a version roll takes (default 120 s).
UPGRADE_SECONDS = "sandbox.kubecrew.io/upgrade-seconds"
DEFAULT_UPGRADE_SECONDS = 120.0

# What the provider writes on a Node: CAPI's annotations naming its Machine, and the pool label.
NODE_CLUSTER_NAMESPACE = "cluster.x-k8s.io/cluster-namespace"
NODE_MACHINE = "cluster.x-k8s.io/machine"
NODE_OWNER_KIND = "cluster.x-k8s.io/owner-kind"
NODE_OWNER_NAME = "cluster.x-k8s.io/owner-name"
POOL_LABEL = "node.cluster.x-k8s.io/pool"
# Machine label domains Cluster API copies onto the Node.
SYNCED_LABEL_DOMAINS = (
    "node.cluster.x-k8s.io",
    "node-role.kubernetes.io",
    "node-restriction.kubernetes.io",
)

# The phases the provider moves a Machine through (Cluster API's "Provisioned", between the
# instance and its Node, never shows: a sandbox instance registers its Node as it comes up).
MachinePhase = Literal["Pending", "Provisioning", "Running", "Deleting", "Failed"]
Severity = Literal["", "Info", "Warning", "Error"]

# Condition types on Machines (v1beta1).
READY = "Ready"
INFRASTRUCTURE_READY = "InfrastructureReady"
NODE_HEALTHY = "NodeHealthy"
DRAINING_SUCCEEDED = "DrainingSucceeded"
PRE_DRAIN_HOOK_SUCCEEDED = "PreDrainDeleteHookSucceeded"
PRE_TERMINATE_HOOK_SUCCEEDED = "PreTerminateDeleteHookSucceeded"
WAITING_EXTERNAL_HOOK = "WaitingExternalHook"  # their reason while a hook annotation remains
# Condition types and reasons on KubeadmControlPlanes (v1beta1).
AVAILABLE = "Available"
MACHINES_SPEC_UP_TO_DATE = "MachinesSpecUpToDate"
ROLLING_UPDATE_IN_PROGRESS = "RollingUpdateInProgress"


def labels_of(obj: Obj) -> dict[str, str]:
    found: dict[str, str] = obj["metadata"].get("labels") or {}
    return found


def hooks_of(obj: Obj, prefix: str) -> list[str]:
    """The annotations of `obj` whose key starts with `prefix` (a deletion hook's), sorted."""
    annotations = obj["metadata"].get("annotations") or {}
    return sorted(key for key in annotations if key.startswith(prefix))


def pool_of(machine: Obj) -> str:
    """The MachineDeployment a Machine belongs to, else its MachineSet ("" for neither)."""
    labels = labels_of(machine)
    return labels.get(DEPLOYMENT_NAME) or labels.get(SET_NAME) or ""


def phase_of(machine: Obj) -> str:
    return str((machine.get("status") or {}).get("phase") or "")


def condition(
    kind: str,
    status: str,
    *,
    stamp: str,
    reason: str = "",
    message: str = "",
    severity: Severity = "",
) -> dict[str, Any]:
    """A Cluster API condition: reason, severity and message only when it is not True."""
    found: dict[str, Any] = {"type": kind, "status": status, "lastTransitionTime": stamp}
    if reason:
        found["reason"] = reason
    if severity and status == "False":
        found["severity"] = severity
    if message:
        found["message"] = message
    return found


def find_condition(obj: Obj, kind: str) -> dict[str, Any] | None:
    for found in (obj.get("status") or {}).get("conditions") or ():
        if found.get("type") == kind:
            return dict(found)
    return None


def ready_since(machine: Obj) -> float | None:
    """When the Machine's Node last became Ready (POSIX seconds); None if it is not Ready."""
    if machine["metadata"].get("deletionTimestamp") or phase_of(machine) == "Failed":
        return None
    healthy = find_condition(machine, NODE_HEALTHY)
    if healthy is None or healthy.get("status") != "True":
        return None
    stamp = healthy.get("lastTransitionTime")
    return parse_time(stamp).timestamp() if stamp else 0.0


def available_in(machine: Obj, *, min_ready: int, now: float) -> float | None:
    """Seconds until a ready Machine counts as available (0: now); None if it is not ready."""
    since = ready_since(machine)
    if since is None:
        return None
    return max(0.0, since + min_ready - now)
