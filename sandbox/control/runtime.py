"""How the simulated control plane runs: controllers, their work queues, timers and indexes.

A `Controller` reconciles one kind of object (its `primary` key) by name. It never polls: the
store's observer turns every committed change into work items (`items_for`), and a controller
that must look again later (a backoff, a probe period, a progress deadline) asks for it with
`after(seconds, item)` on the *sandbox* clock. The `Manager` drains the queues in rounds until
the world is quiet or the step's time budget is spent, then the caller commits the store.

Everything runs on the server's one event-loop thread, so there is no locking: a controller reads
the latest state from the store, decides, and writes through `Objects.write` (the same admission
and validation every client write gets). Items are processed in sorted order and randomness
comes from `Controller.random(...)`, seeded per object, so a run with a stopped clock driven by
`run_for` is fully deterministic.

This module knows the API only through `Objects`, `Lifecycle` and `Store`; it knows no HTTP.
"""

from __future__ import annotations

import heapq
import logging
import random
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar

from sandbox.clock import Clock
from sandbox.control.events import EventRecorder
from sandbox.errors import ApiError
from sandbox.lifecycle import DeleteOptions, Lifecycle
from sandbox.logs import PodLogs
from sandbox.metrics import MetricsBook
from sandbox.objects import Objects, WriteOptions
from sandbox.registry import ResourceType
from sandbox.store import Change, Key, Obj, Store
from sandbox.world import World

log = logging.getLogger("sandbox.control")

# (namespace, name) of the object a controller reconciles; namespace "" if cluster-scoped
Item = tuple[str, str]

PODS: Key = ("", "pods")
NODES: Key = ("", "nodes")
MAX_BACKOFF = 300.0  # sandbox seconds between retries of an item whose reconcile keeps failing


@dataclass
class Context:
    """Everything a controller may touch, handed over as one object (no globals)."""

    objects: Objects
    lifecycle: Lifecycle
    logs: PodLogs
    metrics: MetricsBook
    world: World
    events: EventRecorder = field(init=False)
    index: Index = field(init=False)

    def __post_init__(self) -> None:
        self.events = EventRecorder(self.objects)
        self.index = Index(self.objects.store)

    @property
    def store(self) -> Store:
        return self.objects.store

    @property
    def clock(self) -> Clock:
        return self.objects.clock


class Index:
    """Lookups the controllers need on every pass: dependents by owner uid, pods by node."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._owned: dict[tuple[Key, str], dict[Item, None]] = defaultdict(dict)
        self._on_node: dict[str, dict[Item, None]] = defaultdict(dict)
        for key in store.resource_keys():
            for obj in store.list(key):
                self._add(key, obj)
        store.observe(self._on_change)

    def owned(self, key: Key, owner_uid: str) -> list[Obj]:
        """Objects of `key` with an owner reference to `owner_uid`, sorted by name."""
        found = []
        for namespace, name in sorted(self._owned.get((key, owner_uid), ())):
            obj = self._store.get(key, namespace, name)
            if obj is not None:
                found.append(obj)
        return found

    def pods_on(self, node: str) -> list[Obj]:
        found = []
        for namespace, name in sorted(self._on_node.get(node, ())):
            obj = self._store.get(PODS, namespace, name)
            if obj is not None:
                found.append(obj)
        return found

    def _on_change(self, change: Change) -> None:
        if change.old is not None:
            self._drop(change.key, change.old)
        if change.type != "DELETED":
            self._add(change.key, change.object)

    def _add(self, key: Key, obj: Obj) -> None:
        meta = obj["metadata"]
        item = (meta.get("namespace", ""), meta["name"])
        for ref in meta.get("ownerReferences") or ():
            self._owned[(key, ref["uid"])][item] = None
        if key == PODS and (node := (obj.get("spec") or {}).get("nodeName")):
            self._on_node[node][item] = None

    def _drop(self, key: Key, obj: Obj) -> None:
        meta = obj["metadata"]
        item = (meta.get("namespace", ""), meta["name"])
        for ref in meta.get("ownerReferences") or ():
            bucket = self._owned.get((key, ref["uid"]))
            if bucket is not None:
                bucket.pop(item, None)
                if not bucket:
                    del self._owned[(key, ref["uid"])]
        if key == PODS and (node := (obj.get("spec") or {}).get("nodeName")):
            bucket = self._on_node.get(node)
            if bucket is not None:
                bucket.pop(item, None)


class Controller(ABC):
    """One control loop. Subclasses set `name`, `primary` and `watches`, and write `reconcile`.

    `name` is the field manager of its writes and the source component of its events
    (e.g. "deployment-controller", "default-scheduler", "kubelet").
    """

    name: ClassVar[str]
    primary: ClassVar[Key]
    watches: ClassVar[tuple[Key, ...]] = ()  # other keys whose changes may concern a primary

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.manager: Manager | None = None  # set by Manager.add

    # -- what to do --------------------------------------------------------------------------

    @abstractmethod
    def reconcile(self, namespace: str, name: str) -> float | None:
        """Bring one primary object closer to what it asks for; return seconds until the next
        look (sandbox time), or None when only a change should wake it again."""

    def items_for(self, change: Change) -> Iterable[Item]:
        """Primaries a change concerns: the object itself, or its controlling owner."""
        if change.key == self.primary:
            yield (change.namespace, change.name)
            return
        owner_kind = self.ctx.objects.registry.for_group(*self.primary)
        for obj in (change.object, change.old):
            for ref in (obj or {}).get("metadata", {}).get("ownerReferences") or ():
                if owner_kind is not None and ref.get("kind") == owner_kind.kind:
                    yield (change.namespace, ref["name"])

    def resync(self) -> Iterable[Item]:
        """Every primary, looked at once when the control plane starts."""
        for obj in self.ctx.store.list(self.primary):
            meta = obj["metadata"]
            yield (meta.get("namespace", ""), meta["name"])

    # -- helpers for reconcile ---------------------------------------------------------------

    def rt(self, key: Key) -> ResourceType:
        found = self.ctx.objects.registry.for_group(*key)
        assert found is not None, f"{key} is a built-in resource"
        return found

    def get(self, key: Key, namespace: str, name: str) -> Obj | None:
        return self.ctx.store.get(key, namespace, name)

    def list(self, key: Key, namespace: str | None = None) -> list[Obj]:
        return self.ctx.store.list(key, namespace)

    def create(self, key: Key, obj: Obj) -> Obj:
        """Create through the full API path (generateName, uid, defaults, validation)."""
        rt = self.rt(key)
        namespace = obj["metadata"].get("namespace", "") if rt.namespaced else ""
        opts = WriteOptions(field_manager=self.name, system=True)
        return self.ctx.objects.create(rt, obj, namespace=namespace, opts=opts)

    def write(self, key: Key, new: Obj, old: Obj) -> Obj:
        """Replace `old` with `new` (a no-op when nothing changed)."""
        return self.ctx.objects.write(self.rt(key), new, old, manager=self.name)

    def write_status(self, key: Key, old: Obj, status: dict[str, Any]) -> Obj:
        if old.get("status") == status:
            return old
        return self.write(key, {**old, "status": status}, old)

    def delete(self, key: Key, namespace: str, name: str, *, grace: int | None = None) -> None:
        """Delete as a client would (graceful for bound pods); a missing object is fine."""
        if self.get(key, namespace, name) is None:
            return
        options = DeleteOptions(grace_period=grace)
        self.ctx.lifecycle.delete(self.rt(key), namespace, name, options)

    def event(self, obj: Obj, reason: str, message: str, *, warning: bool = False) -> None:
        self.ctx.events.record(
            obj, reason=reason, message=message, warning=warning, component=self.name
        )

    def now(self) -> float:
        return self.ctx.clock.seconds()

    def after(self, seconds: float, item: Item) -> None:
        assert self.manager is not None
        self.manager.after(self, item, seconds)

    def random(self, *parts: object) -> random.Random:
        """A generator seeded by the world's seed and `parts` (e.g. a pod uid and a purpose)."""
        return random.Random(f"{self.ctx.world.seed}:" + ":".join(map(str, parts)))


@dataclass(order=True)
class _Timer:
    due: float
    seq: int
    controller: int = field(compare=False)
    item: Item = field(compare=False)


class Manager:
    """Runs the controllers: change-driven queues plus timers on the sandbox clock."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.controllers: list[Controller] = []
        self._by_key: dict[Key, list[int]] = defaultdict(list)
        self._queues: list[dict[Item, None]] = []
        # The round a controller is working through, sorted, last item first; an item in it is
        # not queued again (it will be looked at, and a reconcile reads the state it finds).
        self._batches: list[list[Item]] = []
        self._batched: list[set[Item]] = []
        self._timers: list[_Timer] = []
        self._due: dict[tuple[int, Item], float] = {}
        self._failures: dict[tuple[int, Item], int] = {}
        self._seq = 0
        self.reconciles = 0  # work done so far, for benchmarks and tests
        self.cpu_seconds = 0.0  # CPU the controllers and kubelets used (thread time)
        ctx.store.observe(self._on_change)

    def add(self, controller: Controller) -> None:
        index = len(self.controllers)
        controller.manager = self
        self.controllers.append(controller)
        self._queues.append({})
        self._batches.append([])
        self._batched.append(set())
        for key in (controller.primary, *controller.watches):
            self._by_key[key].append(index)
        for item in controller.resync():
            self._queues[index][item] = None

    def controller(self, name: str) -> Controller:
        return next(c for c in self.controllers if c.name == name)

    def enqueue(self, name: str, item: Item) -> None:
        """Make every controller called `name` look at `item` on the next step (faults use this
        after changing the world, which the store cannot see)."""
        for index, controller in enumerate(self.controllers):
            if controller.name == name:
                self._want(index, item)

    def after(self, controller: Controller, item: Item, seconds: float) -> None:
        index = self.controllers.index(controller)
        due = self.ctx.clock.seconds() + max(seconds, 0.0)
        known = self._due.get((index, item))
        if known is not None and known <= due:
            return
        self._due[(index, item)] = due
        self._seq += 1
        heapq.heappush(self._timers, _Timer(due, self._seq, index, item))

    def pending(self) -> int:
        return sum(len(q) for q in self._queues) + sum(len(b) for b in self._batches)

    def _want(self, index: int, item: Item) -> None:
        if item not in self._batched[index]:
            self._queues[index][item] = None

    def next_due(self) -> float | None:
        """The sandbox time of the earliest timer, if any."""
        return self._timers[0].due if self._timers else None

    # -- running -------------------------------------------------------------------------------

    def step(self, *, budget: float = 0.05, max_rounds: int = 50) -> int:
        """Fire due timers, then drain queues in rounds until quiet, `max_rounds` or `budget`
        real seconds are spent (what is left stays queued for the next step). Returns the number
        of reconciles run."""
        cpu = time.thread_time()
        try:
            return self._step(budget, max_rounds)
        finally:
            self.cpu_seconds += time.thread_time() - cpu

    def _step(self, budget: float, max_rounds: int) -> int:
        self._fire_timers()
        started, done = time.monotonic(), 0
        for _ in range(max_rounds):
            if not self.pending():
                break
            for index, controller in enumerate(self.controllers):
                batch, batched = self._batches[index], self._batched[index]
                if not batch:
                    queue = self._queues[index]
                    if not queue:
                        continue
                    batch.extend(sorted(queue, reverse=True))  # sorted once per round, not step
                    batched.update(queue)
                    queue.clear()
                while batch:
                    if done and time.monotonic() - started > budget:
                        return done
                    item = batch.pop()
                    batched.discard(item)
                    self._run(index, controller, item)
                    done += 1
        return done

    def settle(self, *, max_steps: int = 1000) -> int:
        """Step until no work is queued (timers still pending are left for later)."""
        total = 0
        for _ in range(max_steps):
            total += self.step(budget=float("inf"))
            self.ctx.store.commit()
            if not self.pending():
                return total
        raise RuntimeError(f"the control plane did not settle in {max_steps} steps")

    def run_for(self, seconds: float, *, tick: float = 1.0) -> None:
        """Move a stopped clock forward `seconds`, `tick` at a time, settling after each tick
        (how deterministic tests and evals drive the simulation)."""
        self.settle()
        elapsed = 0.0
        while elapsed < seconds - 1e-9:
            delta = min(tick, seconds - elapsed)
            self.ctx.clock.advance(timedelta(seconds=delta))
            elapsed += delta
            self.ctx.lifecycle.sweep()
            self.settle()

    def _fire_timers(self) -> None:
        now = self.ctx.clock.seconds()
        while self._timers and self._timers[0].due <= now:
            timer = heapq.heappop(self._timers)
            key = (timer.controller, timer.item)
            if self._due.get(key) != timer.due:
                continue  # superseded by an earlier timer for the same item
            del self._due[key]
            self._want(timer.controller, timer.item)

    def _run(self, index: int, controller: Controller, item: Item) -> None:
        self.reconciles += 1
        try:
            again = controller.reconcile(*item)
        except ApiError as exc:
            again = self._failed(index, controller, item, exc, traceback=False)
        except Exception as exc:  # one broken object must not stop the cluster
            again = self._failed(index, controller, item, exc, traceback=True)
        else:
            self._failures.pop((index, item), None)
        if again is not None:
            self.after(controller, item, again)

    def _failed(
        self, index: int, controller: Controller, item: Item, exc: Exception, *, traceback: bool
    ) -> float:
        failures = self._failures.get((index, item), 0) + 1
        self._failures[(index, item)] = failures
        message = "%s: reconciling %s/%s failed (attempt %d): %s"
        if traceback:
            log.exception(message, controller.name, *item, failures, exc)
        else:
            log.warning(message, controller.name, *item, failures, exc)
        return float(min(MAX_BACKOFF, 2 ** min(failures, 9)))

    def _on_change(self, change: Change) -> None:
        for index in self._by_key.get(change.key, ()):
            for item in self.controllers[index].items_for(change):
                self._want(index, item)


def items(objs: Iterable[Obj]) -> Iterator[Item]:
    for obj in objs:
        meta = obj["metadata"]
        yield (meta.get("namespace", ""), meta["name"])
