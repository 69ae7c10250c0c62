"""The pod worker as its parts see it: what the container runner, the prober and the cluster
network may ask of the kubelet that drives them.

`pods.PodKubelet` owns a `runner.ContainerRunner`, which owns a `prober.Prober` and hands each
container a `dialing.ClusterNetwork`; all three talk back to the worker (events, lookups, the
pods it keeps in memory). `PodWorker` is that back channel as a Protocol, so those parts depend
on this small module and not on `pods.py`, which imports them. It holds no state and no logic;
a new need of a part is a new member here, which `PodKubelet` already has or must grow.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from sandbox.control.runtime import Context, Item
from sandbox.kubelet import config
from sandbox.kubelet.containers import PodRuntime, Run
from sandbox.store import Key, Obj


class PodWorker(Protocol):
    name: ClassVar[str]  # the component of its events
    ctx: Context
    pods: dict[Item, PodRuntime]  # the containers of each pod it runs, as it keeps them
    images: dict[str, set[str]]  # node -> images present

    def get(self, key: Key, namespace: str, name: str) -> Obj | None: ...

    def list(self, key: Key, namespace: str | None = None) -> list[Obj]: ...

    def now(self) -> float: ...

    def pod_event(
        self, pod: Obj, run: Run | None, reason: str, message: str, *, warning: bool = False
    ) -> None: ...

    def lookup(self, namespace: str) -> config.Lookup: ...
