"""The kubelet's per-node housekeeping every 15 seconds: usage metrics and application logs.

Once per node and period (not per pod) it records each running pod's usage for
metrics.k8s.io (`kubectl top`) and the node's total plus the system daemons' share, and appends
what running containers printed since the last round (profile log lines, shell loop output;
a serving app a fault makes fail or slow prints its requests as they go, `access.py`).
It also notices what the store cannot show: the node's kubelet coming back to life and the
application profiles changing (a fault), and then asks the pod worker to look at the node's pods.

It is a controller of its own, added right after the pod worker (`pods.PodKubelet`) whose
containers it reads and whose pods it wakes: this module knows the worker, the worker knows
nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandbox.control.runtime import NODES, Context, Controller, Item
from sandbox.kubelet import access
from sandbox.kubelet.commands import interpret
from sandbox.kubelet.pods import PodKubelet
from sandbox.kubelet.usage import SYSTEM_CPU, SYSTEM_MEMORY, pod_usage
from sandbox.metrics import Usage
from sandbox.quantity import format_cpu, format_memory
from sandbox.store import Change, Obj

PERIOD = 15.0
LOG_LINES_PER_ROUND = 2
LOG_EVERY = 2  # application logs are appended every other round (30 s): cheap, still lively


class NodeAgent(Controller):
    name = "kubelet"
    primary = NODES

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._next: dict[str, float] = {}
        self._alive: dict[str, bool] = {}
        self._profiles_seen: dict[str, int] = {}
        self._log_round: dict[str, int] = {}

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.type == "ADDED":
            yield ("", change.name)

    def reconcile(self, namespace: str, name: str) -> float | None:
        if namespace or self.get(NODES, "", name) is None:
            return None
        now = self.now()
        due = self._next.get(name, 0.0)
        if now + 1e-9 < due:
            return due - now
        self._next[name] = now + PERIOD
        alive = self.ctx.world.node(name).heartbeat
        was_alive = self._alive.get(name, True)
        self._alive[name] = alive
        if not alive:
            return PERIOD
        pods = self.ctx.index.pods_on(name)
        version = self.ctx.world.profiles.version
        kubelet = self._kubelet()
        if not was_alive or self._profiles_seen.get(name, 0) != version:
            self._profiles_seen[name] = version
            for pod in pods:
                kubelet.after(0.0, (pod["metadata"]["namespace"], pod["metadata"]["name"]))
        for item in sorted(kubelet.frozen.pop(name, ())):
            kubelet.after(0.0, item)
        self._record(name, pods, now)
        return PERIOD

    def _record(self, node: str, pods: list[Obj], now: float) -> None:
        metrics, world = self.ctx.metrics, self.ctx.world
        total_cpu, total_memory = SYSTEM_CPU, SYSTEM_MEMORY
        kubelet = self._kubelet()
        for pod in pods:
            meta = pod["metadata"]
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            usage = pod_usage(world, pod, now)
            if not usage:
                continue
            containers = {
                name: Usage(format_cpu(cpu), format_memory(memory))
                for name, (cpu, memory) in usage.items()
            }
            metrics.record_pod(meta["namespace"], meta["name"], containers, meta.get("labels"))
            total_cpu += sum(cpu for cpu, _ in usage.values())
            total_memory += sum(memory for _, memory in usage.values())
            if self._log_round.get(node, 0) % LOG_EVERY == 0:
                self._log(kubelet, pod, set(usage))
        metrics.record_node(node, Usage(format_cpu(total_cpu), format_memory(total_memory)))
        self._log_round[node] = self._log_round.get(node, 0) + 1

    def _log(self, kubelet: PodKubelet, pod: Obj, running: set[str]) -> None:
        meta = pod["metadata"]
        runtime = kubelet.pods.get((meta["namespace"], meta["name"]))
        if runtime is None:
            return
        specs = {c["name"]: c for c in pod["spec"]["containers"]}
        for name in sorted(running):
            run, container = runtime.runs.get(name), specs.get(name)
            if run is None or container is None or run.phase != "running":
                continue
            plan = run.plan if run.plan is not None else interpret(container)
            if not plan.own_process:
                kubelet.runner.write_script_output(pod, run, plan, self.now() - run.started_at)
                continue
            book = self.ctx.world.profiles
            profile = book.profile_for(pod, container)
            usual = book.usual_latency(profile)
            for line in access.lines(profile, usual, run.log_seq, LOG_LINES_PER_ROUND):
                run.log_seq += 1
                self.ctx.logs.append(meta["namespace"], meta["name"], name, line)

    def _kubelet(self) -> PodKubelet:
        assert self.manager is not None
        return next(c for c in self.manager.controllers if isinstance(c, PodKubelet))


CONTROLLERS: tuple[type[Controller], ...] = (NodeAgent,)
