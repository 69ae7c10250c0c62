"""An in-process sandbox cluster on a stopped clock, for fast deterministic controller tests.

    sim = Simulation(nodes=3)
    sim.apply(DEPLOYMENT_YAML)          # create through the API's write path (admission, defaults)
    sim.run_for(30)                     # advance the sandbox clock 30 s, settling every second
    pod = sim.get("pods", "default", "web-abc")
    assert sim.events_for(pod, reason="Scheduled")

Nothing runs in the background: time moves only when a test says so, so every run of a test sees
the same sequence of states. Tests that need HTTP or kubectl use the `sandbox` fixture instead
(there the clock runs in real time or faster).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import yaml

from sandbox import control
from sandbox.clock import Clock
from sandbox.cluster import Cluster
from sandbox.lifecycle import DeleteOptions
from sandbox.objects import WriteOptions
from sandbox.registry import ResourceType
from sandbox.store import Obj
from sandbox.world import World

PLURALS = {  # short names tests use -> (group, plural)
    "pods": ("", "pods"),
    "nodes": ("", "nodes"),
    "services": ("", "services"),
    "endpoints": ("", "endpoints"),
    "events": ("", "events"),
    "configmaps": ("", "configmaps"),
    "secrets": ("", "secrets"),
    "namespaces": ("", "namespaces"),
    "persistentvolumes": ("", "persistentvolumes"),
    "persistentvolumeclaims": ("", "persistentvolumeclaims"),
    "deployments": ("apps", "deployments"),
    "replicasets": ("apps", "replicasets"),
    "statefulsets": ("apps", "statefulsets"),
    "daemonsets": ("apps", "daemonsets"),
    "jobs": ("batch", "jobs"),
    "cronjobs": ("batch", "cronjobs"),
    "poddisruptionbudgets": ("policy", "poddisruptionbudgets"),
    "horizontalpodautoscalers": ("autoscaling", "horizontalpodautoscalers"),
    "endpointslices": ("discovery.k8s.io", "endpointslices"),
    "leases": ("coordination.k8s.io", "leases"),
    "storageclasses": ("storage.k8s.io", "storageclasses"),
    "clusters": ("cluster.x-k8s.io", "clusters"),
    "machinedeployments": ("cluster.x-k8s.io", "machinedeployments"),
    "machinesets": ("cluster.x-k8s.io", "machinesets"),
    "machines": ("cluster.x-k8s.io", "machines"),
    "sandboxmachinetemplates": ("infrastructure.cluster.x-k8s.io", "sandboxmachinetemplates"),
}


# Every simulation starts at the same moment (a few seconds past a minute, so schedules never
# fire at time zero), so a test sees the same timestamps and the same cron runs on every run.
START = datetime(2026, 6, 1, 12, 0, 7, tzinfo=UTC)


class Simulation:
    """`only` names the controllers that run (e.g. `only=("job-controller",)`); the test then
    plays every other part itself (binding pods, writing their status) without interference."""

    def __init__(
        self,
        *,
        nodes: int = 3,
        seed: int = 0,
        world: World | None = None,
        only: Iterable[str] | None = None,
    ) -> None:
        self.cluster = Cluster(
            admin_token="test-admin-token",
            signing_key=b"k" * 32,
            nodes=nodes,
            clock=Clock(START, rate=0),
            world=world or World(seed=seed),
        )
        if only is not None:
            wanted = set(only)
            manager = control.Manager(self.cluster.control.ctx)
            for module in control.MODULES:
                for kind in module.CONTROLLERS:
                    if kind.name in wanted:
                        manager.add(kind(manager.ctx))
            unknown = wanted - {c.name for c in manager.controllers}
            assert not unknown, f"no such controllers: {sorted(unknown)}"
            self.cluster.control = manager
        self.objects = self.cluster.objects
        self.world = self.cluster.world
        self.settle()

    # -- driving -------------------------------------------------------------------------------

    def settle(self) -> None:
        self.cluster.lifecycle.sweep()
        self.cluster.control.settle()

    def run_for(self, seconds: float, *, tick: float = 1.0) -> None:
        self.cluster.control.run_for(seconds, tick=tick)

    def run_until(
        self, check: Any, *, timeout: float = 600, tick: float = 1.0, what: str = ""
    ) -> float:
        """Advance until `check()` is truthy; returns the sandbox seconds it took."""
        self.settle()
        waited = 0.0
        while not check():
            if waited >= timeout:
                raise AssertionError(f"not reached after {timeout} sandbox seconds: {what}")
            self.run_for(tick, tick=tick)
            waited += tick
        return waited

    # -- writing -------------------------------------------------------------------------------

    def rt(self, plural: str) -> ResourceType:
        rt = self.cluster.registry.for_group(*PLURALS.get(plural, ("", plural)))
        assert rt is not None, plural
        return rt

    def apply(
        self, manifests: str | Obj | Iterable[Obj], *, namespace: str = "default"
    ) -> list[Obj]:
        """Create each object (YAML text, one dict or several) as a client would, then settle."""
        if isinstance(manifests, str):
            docs = [d for d in yaml.safe_load_all(manifests) if d]
        elif isinstance(manifests, dict):
            docs = [manifests]
        else:
            docs = list(manifests)
        created = []
        for doc in docs:
            rt = self.cluster.registry.by_kind(doc["apiVersion"], doc["kind"])
            assert rt is not None, f"unknown kind {doc['apiVersion']}/{doc['kind']}"
            ns = (doc["metadata"].get("namespace") or namespace) if rt.namespaced else ""
            opts = WriteOptions(field_manager="test")
            created.append(self.objects.create(rt, doc, namespace=ns, opts=opts))
        self.cluster.store.commit()
        self.settle()
        return created

    def patch(self, plural: str, namespace: str, name: str, patch: Obj) -> Obj:
        """A strategic merge patch, as `kubectl patch` sends by default."""
        obj, _ = self.objects.patch(
            self.rt(plural),
            namespace=namespace,
            name=name,
            patch_type="strategic",
            patch=patch,
            opts=WriteOptions(field_manager="test"),
        )
        self.cluster.store.commit()
        self.settle()
        return obj

    def write(self, plural: str, new: Obj, old: Obj, *, manager: str = "test") -> Obj:
        """Write a whole object as a controller or the kubelet does (status included), then
        settle; for what a client may not change through a patch."""
        written = self.objects.write(self.rt(plural), new, old, manager=manager)
        self.cluster.store.commit()
        self.settle()
        return written

    def delete(self, plural: str, namespace: str, name: str, **options: Any) -> None:
        self.cluster.lifecycle.delete(self.rt(plural), namespace, name, DeleteOptions(**options))
        self.cluster.store.commit()
        self.settle()

    # -- reading -------------------------------------------------------------------------------

    def get(self, plural: str, namespace: str, name: str) -> Obj | None:
        rt = self.rt(plural)
        return self.cluster.store.get(rt.key, namespace if rt.namespaced else "", name)

    def list(self, plural: str, namespace: str | None = None) -> list[Obj]:
        return self.cluster.store.list(self.rt(plural).key, namespace)

    def pods(self, namespace: str = "default", **labels: str) -> builtins.list[Obj]:
        return [
            p
            for p in self.list("pods", namespace)
            if all(p["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
        ]

    def events_for(self, obj: Obj, *, reason: str | None = None) -> builtins.list[Obj]:
        uid = obj["metadata"]["uid"]
        return [
            e
            for e in self.list("events")
            if e["involvedObject"].get("uid") == uid and (reason is None or e["reason"] == reason)
        ]


def ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def condition(obj: Obj, kind: str) -> dict[str, Any] | None:
    for found in (obj.get("status") or {}).get("conditions") or []:
        if found["type"] == kind:
            return dict(found)
    return None
