"""Tests that run only some controllers play the other parts of the cluster with these.

A test built on `Simulation(only=...)` has no scheduler, kubelet or workload controller unless it
names them, so it writes what they would: a pod bound to a node, a pod Running and Ready, a
deletion finished. The writes carry the fields the real components set and nothing more, so the
controller under test sees what it would see in a whole cluster. What only one test file plays
(a Job finishing, a claim bound by hand) stays in that file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sandbox.store import Obj
from tests.support.simulation import Simulation, condition


def pod(
    name: str,
    *containers: dict[str, Any],
    node: str | None = None,
    metadata: dict[str, Any] | None = None,
    **spec: Any,
) -> Obj:
    """A Pod manifest, bound to `node` if given (as if scheduled). Containers without a name are
    called c0, c1...; with none given, one nginx container called web."""
    named = [{"name": f"c{i}", **c} if "name" not in c else c for i, c in enumerate(containers)]
    body: dict[str, Any] = {"containers": named or [{"name": "web", "image": "nginx:1.27"}]}
    if node is not None:
        body["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **(metadata or {})},
        "spec": {**body, **spec},
    }


def reported(
    pod: Obj, now: str, *, ready: bool = True, node: str | None = None, ip: str | None = None
) -> Obj:
    """`pod` as its kubelet reports it: Running with a Ready condition (and `ip`), bound to
    `node` if given."""
    status = {
        **pod.get("status", {}),
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": now}
        ],
    }
    if ip is not None:
        status |= {"podIP": ip, "podIPs": [{"ip": ip}]}
    spec = pod["spec"] if node is None else {**pod["spec"], "nodeName": node}
    return {**pod, "spec": spec, "status": status}


def run_pod(
    sim: Simulation,
    name: str,
    *,
    ready: bool = True,
    node: str = "node-1",
    ip: str | None = None,
    namespace: str = "default",
) -> Obj:
    """Play scheduler and kubelet for one pod: bind it to `node`, report it Running (Ready or
    not, with `ip`)."""
    old = sim.get("pods", namespace, name)
    assert old is not None, f"pod {name} is gone"
    now = sim.objects.clock.timestamp()
    return sim.write(
        "pods", reported(old, now, ready=ready, node=node, ip=ip), old, manager="kubelet"
    )


def set_ready(sim: Simulation, pods: Iterable[Obj] | None = None, *, ready: bool = True) -> None:
    """Play the kubelet for pods nobody binds: `pods` (all by default) Running with a Ready
    condition. Terminating pods are left alone; the condition's time moves only on change."""
    now = sim.objects.clock.timestamp()
    for pod in sim.list("pods") if pods is None else pods:
        current = sim.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        if current is None or current["metadata"].get("deletionTimestamp"):
            continue
        found = condition(current, "Ready")
        if found is not None and found["status"] == ("True" if ready else "False"):
            continue
        sim.objects.write(
            sim.rt("pods"), reported(current, now, ready=ready), current, manager="kubelet"
        )
    sim.cluster.store.commit()
    sim.settle()


def play_kubelet(
    sim: Simulation, *, ready: bool = True, place: Callable[[Obj], str] | None = None
) -> None:
    """Play scheduler and kubelet for every pod: finish graceful deletions (as if containers
    stopped at once), bind each new pod where `place` says (its own node, else node-1) and
    report it Running and Ready (or not). A pod that has a Ready condition is left as it is."""
    now = sim.objects.clock.timestamp()
    for pod in sim.list("pods"):
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            sim.delete("pods", meta["namespace"], meta["name"], grace_period=0)
            continue
        if condition(pod, "Ready") is not None:
            continue
        node = place(pod) if place else pod["spec"].get("nodeName") or "node-1"
        sim.objects.write(
            sim.rt("pods"), reported(pod, now, ready=ready, node=node), pod, manager="kubelet"
        )
    sim.cluster.store.commit()
    sim.settle()
