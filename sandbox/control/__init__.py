"""The simulated control plane: one small module per controller, run by `runtime.Manager`.

    runtime.py        Controller base, Manager (queues, timers on the sandbox clock), Index
    events.py         EventRecorder (core/v1 Events, folded by count like the event correlator)
    selecting.py      SelectorIndex: the pods each Service or PDB selects, kept from pod changes
    readiness.py      when a pod is ready, since when, and when it becomes available
    scheduler.py      binds pending pods to nodes, or says why not (FailedScheduling)
    scheduling/       the scheduler's parts: requests, cache, affinity, volume binding, filters,
                      scoring
    nodes.py          node lifecycle: Lease staleness -> NotReady/Unknown -> taints -> evictions
    rollout.py        what Deployments and ReplicaSets share: template hashes, revisions, conditions
    rollingupdate.py  maxSurge/maxUnavailable arithmetic, proportional scaling mid-rollout
    progress.py       Deployment status: Available, Progressing (deadline), ReplicaFailure
    deployments.py    ReplicaSets per template hash, rolling update, Recreate, revisions, conditions
    replicasets.py    pods for a ReplicaSet, status from its pods
    statefulsets.py   ordered pods with stable names, volumeClaimTemplates
    daemonsets.py     one pod per eligible node
    jobs.py           Job controller: pod ownership, finalizer-based counting, TTL after finish
    jobruns.py        one pass over an unfinished Job: backoff, deadline, suspend, pods to start
    jobstatus.py      what a Job's status and its pods say: finished, completed indexes
    cron.py           cron schedules (the five-field syntax, time zones)
    cronjobs.py       Jobs on a schedule of the sandbox clock
    services.py       what both endpoint controllers share: Services, selected pods, target ports
    endpoints.py      core/v1 Endpoints from Service selectors and pod readiness
    endpointslices.py discovery.k8s.io/v1 EndpointSlices, one per port set, 100 endpoints each
    disruption.py     PodDisruptionBudget status
    autoscaling.py    HorizontalPodAutoscaler v2 on simulated utilization
    claims.py         PVC binding and dynamic provisioning (the PV controller's claim worker)
    expansion.py      PVC expansion in stages: Resizing, FileSystemResizePending
    volumes.py        PV phases and reclaim (the volume worker); storage keys and annotations
    clusters.py       Cluster API Clusters: provisioned at once (the sandbox is the cluster)
    controlplanes.py  KubeadmControlPlanes: the sandbox's API server, upgraded on the clock
    machinedeployments.py  MachineSets per machine template, rolled like a Deployment
    machinesets.py    Machines for a MachineSet, deleted unhealthy-first; status from their Nodes
    machines.py       the infrastructure provider: provisioning, Nodes joining, drain, deletion
    joining.py        the Node a Machine becomes
    draining.py       cordon and evict with PodDisruptionBudgets, before a Machine's Node goes

The kubelet side (sandbox/kubelet/) plugs into the same Manager: `pods.py` runs containers,
`agent.py` records each node's usage and logs, `heartbeat.py` renews node Leases and posts node
status.
"""

from __future__ import annotations

from sandbox.control import (
    autoscaling,
    claims,
    clusters,
    controlplanes,
    cronjobs,
    daemonsets,
    deployments,
    disruption,
    endpoints,
    endpointslices,
    jobs,
    machinedeployments,
    machines,
    machinesets,
    nodes,
    replicasets,
    scheduler,
    statefulsets,
    volumes,
)
from sandbox.control.runtime import Context, Controller, Manager
from sandbox.kubelet import agent, heartbeat, pods

# The order controllers are added in is the order the Manager serves their queues.
MODULES = (
    deployments,
    replicasets,
    statefulsets,
    daemonsets,
    jobs,
    cronjobs,
    claims,
    volumes,
    scheduler,
    pods,
    agent,
    heartbeat,
    nodes,
    endpoints,
    endpointslices,
    disruption,
    autoscaling,
    clusters,
    controlplanes,
    machinedeployments,
    machinesets,
    machines,
)

__all__ = ["Context", "Controller", "Manager", "start"]


def start(ctx: Context) -> Manager:
    """A Manager running every controller of the sandbox, each primed with a resync."""
    manager = Manager(ctx)
    for module in MODULES:
        for controller in module.CONTROLLERS:
            manager.add(controller(ctx))
    return manager
