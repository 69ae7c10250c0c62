"""The simulated control plane: one small module per controller, run by `runtime.Manager`.

    runtime.py      Controller base, Manager (queues, timers on the sandbox clock), Index
    events.py       EventRecorder (core/v1 Events, folded by count like the event correlator)
    scheduler.py    binds pending pods to nodes, or says why not (FailedScheduling)
    nodes.py        node lifecycle: Lease staleness -> NotReady/Unknown -> taints -> evictions
    deployments.py  ReplicaSets per template hash, rolling update, Recreate, revisions, conditions
    replicasets.py  pods for a ReplicaSet, status from its pods
    statefulsets.py ordered pods with stable names, volumeClaimTemplates
    daemonsets.py   one pod per eligible node
    jobs.py         completions, parallelism, backoffLimit
    cronjobs.py     Jobs on a schedule of the sandbox clock
    endpoints.py    Endpoints and EndpointSlices from Service selectors and pod readiness
    disruption.py   PodDisruptionBudget status
    autoscaling.py  HorizontalPodAutoscaler v2 on simulated utilization
    volumes.py      PV/PVC binding, dynamic provisioning, expansion

The kubelet side (sandbox/kubelet/) plugs into the same Manager: `pods.py` runs containers,
`heartbeat.py` renews node Leases and posts node status.
"""

from __future__ import annotations

from sandbox.control import (
    autoscaling,
    cronjobs,
    daemonsets,
    deployments,
    disruption,
    endpoints,
    jobs,
    nodes,
    replicasets,
    scheduler,
    statefulsets,
    volumes,
)
from sandbox.control.runtime import Context, Controller, Manager
from sandbox.kubelet import heartbeat, pods

MODULES = (
    deployments,
    replicasets,
    statefulsets,
    daemonsets,
    jobs,
    cronjobs,
    volumes,
    scheduler,
    pods,
    heartbeat,
    nodes,
    endpoints,
    disruption,
    autoscaling,
)

__all__ = ["Context", "Controller", "Manager", "start"]


def start(ctx: Context) -> Manager:
    """A Manager running every controller of the sandbox, each primed with a resync."""
    manager = Manager(ctx)
    for module in MODULES:
        for controller in module.CONTROLLERS:
            manager.add(controller(ctx))
    return manager
