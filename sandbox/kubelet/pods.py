"""The simulated kubelet's pod worker: runs the containers of every pod bound to a live node.

For each pod it walks every container through pull -> create -> start -> run -> exit -> restart
(`containers.Phase`), with the events, waiting reasons and backoffs a real kubelet and
containerd produce: Pulling/Pulled, ErrImagePull/ImagePullBackOff, CreateContainerConfigError,
FailedMount, Created/Started, CrashLoopBackOff, OOMKilled, probe failures (`Unhealthy`,
`Killing`), and graceful termination. Nothing polls: every phase knows when it ends, and the
reconcile asks for a timer at the earliest such moment, so a quiet pod costs nothing.

State lives in memory per pod (`PodRuntime`), as a kubelet keeps it, and is rebuilt from the
status when missing. Pods on a node whose kubelet is dead (`world.node(n).heartbeat` False) are
left exactly as they are. The container lifecycle itself is in `lifecycle.py`; this module
decides which pods to look at and writes their status.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.control.runtime import NODES, PODS, Context, Controller, Item
from sandbox.kubelet import config, podstatus
from sandbox.kubelet.containers import NEVER, PodRuntime, Run, rebuild
from sandbox.kubelet.layer import Layers
from sandbox.kubelet.network import PodNetwork
from sandbox.kubelet.runner import ContainerRunner
from sandbox.store import Change, Obj

CONFIG_KEYS = (("", "configmaps"), ("", "secrets"))
STOP_SECONDS = 2.0  # how long stopping containers takes, at most (within the grace period)
DEAD_NODE_RECHECK = None  # the node agent wakes frozen pods when their kubelet comes back


class PodKubelet(Controller):
    name = "kubelet"
    primary = PODS
    watches = (*CONFIG_KEYS, NODES)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.pods: dict[Item, PodRuntime] = {}
        self.network = PodNetwork()
        self.images: dict[str, set[str]] = {}  # node -> images present
        self.waiting_config: dict[str, set[str]] = {}  # namespace -> pods waiting for config
        self.written: dict[Item, dict[str, Any]] = {}  # the status last written, per pod
        self.frozen: dict[str, set[Item]] = {}  # node -> pods left alone while its kubelet is dead
        self.runner = ContainerRunner(self)
        self.layers = Layers()  # what execs wrote into each container start (`kubectl cp`)

    # -- what to look at -----------------------------------------------------------------------

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == PODS:
            if not self._own_echo(change):
                yield (change.namespace, change.name)
        elif change.key == NODES:
            if _node_ready(change.object) != _node_ready(change.old):
                yield from _items(self.ctx.index.pods_on(change.name))
        else:
            for name in sorted(self.waiting_config.get(change.namespace, ())):
                yield (change.namespace, name)

    # -- reconcile -----------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        item = (namespace, name)
        pod = self.get(PODS, namespace, name)
        runtime = self.pods.get(item)
        if pod is None or (runtime is not None and runtime.uid != pod["metadata"]["uid"]):
            self._forget(item)
            if pod is None:
                return None
            runtime = None
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or self.get(NODES, "", node) is None:
            return None  # unbound, or bound to a node no kubelet runs: it stays Pending
        if not self.ctx.world.node(node).heartbeat:
            self.frozen.setdefault(node, set()).add(item)
            return DEAD_NODE_RECHECK
        now = self.now()
        if pod["metadata"].get("deletionTimestamp"):
            return self._terminate(item, pod, runtime or self._runtime(item, pod, node), now)
        if runtime is None and (pod.get("status") or {}).get("phase") in podstatus.TERMINAL:
            return None  # finished before this kubelet (re)started: nothing left to run
        runtime = runtime or self._runtime(item, pod, node)
        due = self.runner.advance(pod, runtime, now)
        phase = podstatus.phase(pod["spec"], runtime)
        if phase in podstatus.TERMINAL:
            due = NEVER
            self.runner.stop_sidecars(pod, runtime, now)
            self.network.release(node, runtime.pod_ip)
        self._waiting_for_config(item, runtime)
        node_obj = self.get(NODES, "", node)
        status = podstatus.build(
            pod,
            runtime,
            phase_now=phase,
            host_ip=_host_ip(node_obj),
            node_ready=_node_ready(node_obj),
            now=now,
        )
        self.written[item] = status
        self.write_status(PODS, pod, status)
        return None if due == NEVER else max(due - now, 0.0)

    def _own_echo(self, change: Change) -> bool:
        """Whether a change is only the status this kubelet just wrote (nothing to do)."""
        new, old = change.object, change.old
        written = self.written.get((change.namespace, change.name))
        if old is None or written is None or change.type != "MODIFIED":
            return False
        meta, before = new["metadata"], old["metadata"]
        return (
            new.get("status") == written
            and meta.get("deletionTimestamp") == before.get("deletionTimestamp")
            and meta.get("labels") == before.get("labels")
            and meta.get("annotations") == before.get("annotations")
            and new.get("spec") == old.get("spec")
        )

    def _runtime(self, item: Item, pod: Obj, node: str) -> PodRuntime:
        runtime = rebuild(pod, node, self.now())
        if runtime.pod_ip:
            self.network.reserve(node, runtime.pod_ip)
        else:
            runtime.pod_ip = self.network.allocate(node, runtime.uid)
        present = self.images.setdefault(node, set())
        present.update(r.image for r in runtime.runs.values() if r.image_id)
        self.pods[item] = runtime
        return runtime

    def _forget(self, item: Item) -> None:
        self.written.pop(item, None)
        runtime = self.pods.pop(item, None)
        if runtime is not None:
            self.network.release(runtime.node, runtime.pod_ip)
            self.layers.forget(runtime.uid)
        self.waiting_config.get(item[0], set()).discard(item[1])

    def _waiting_for_config(self, item: Item, runtime: PodRuntime) -> None:
        waiting = not runtime.mounted or any(
            r.phase == "config-error" for r in runtime.runs.values()
        )
        names = self.waiting_config.setdefault(item[0], set())
        if waiting:
            names.add(item[1])
        else:
            names.discard(item[1])

    # -- termination ---------------------------------------------------------------------------

    def _terminate(self, item: Item, pod: Obj, runtime: PodRuntime, now: float) -> float | None:
        if runtime.killing_until is None:
            grace = float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
            runtime.killing_until = now + min(grace, STOP_SECONDS)
            for run in runtime.runs.values():
                if run.phase == "running":
                    self.pod_event(pod, run, "Killing", f"Stopping container {run.name}")
        if now + 1e-9 < runtime.killing_until:
            return runtime.killing_until - now
        self.delete(PODS, *item, grace=0)
        self._forget(item)
        return None

    # -- helpers the runner uses ---------------------------------------------------------------

    def pod_event(
        self, pod: Obj, run: Run | None, reason: str, message: str, *, warning: bool = False
    ) -> None:
        self.ctx.events.record(
            pod,
            reason=reason,
            message=message,
            component=self.name,
            warning=warning,
            host=str(pod["spec"].get("nodeName") or ""),
            field_path=run.field_path if run is not None else "",
        )

    def lookup(self, namespace: str) -> config.Lookup:
        def find(plural: str, name: str) -> dict[str, Any] | None:
            return self.get(("", plural), namespace, name)

        return find


def _items(pods: list[Obj]) -> Iterable[Item]:
    for pod in pods:
        yield (pod["metadata"]["namespace"], pod["metadata"]["name"])


def _node_ready(node: Obj | None) -> bool:
    for condition in ((node or {}).get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return node is not None


def _host_ip(node: Obj | None) -> str:
    for address in ((node or {}).get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return str(address.get("address") or "")
    return ""


CONTROLLERS: tuple[type[Controller], ...] = (PodKubelet,)
