"""One sandbox cluster's state and services, wired together: the object a server serves.

`Cluster` owns the store and everything that gives it Kubernetes meaning (registry, object
service, lifecycle, discovery, OpenAPI, authentication, RBAC, logs, metrics), the simulated world
(images, application profiles, node health) and the control plane that makes it live. It has no
HTTP: `sandbox.app` serves it and calls `tick()` on a timer; tests may hold it in-process and
drive it with a stopped clock (`cluster.control.run_for(...)`).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sandbox import admission, admission_policies, bootstrap, control
from sandbox.auth import Authenticator, UserInfo
from sandbox.clock import Clock
from sandbox.discovery import Discovery
from sandbox.faults import Faults
from sandbox.lifecycle import Lifecycle
from sandbox.logs import PodLogs
from sandbox.metrics import MetricsBook
from sandbox.objects import Objects
from sandbox.openapi import OpenAPI
from sandbox.openapi_v2 import OpenAPIV2
from sandbox.rbac import Authorizer
from sandbox.registry import Registry
from sandbox.store import Change, Obj, Store
from sandbox.traffic import Traffic
from sandbox.world import World

RBAC_KEYS = tuple(
    ("rbac.authorization.k8s.io", plural)
    for plural in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")
)


class RbacObjects:
    """The store as the authorizer reads it: with a version that moves only on RBAC changes,
    so the authorizer's compiled policy survives the writes of everything else."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def version(self) -> int:
        return sum(self._store.key_version(key) for key in RBAC_KEYS)

    def objects(self, group: str, plural: str, namespace: str | None = None) -> list[Obj]:
        return self._store.objects(group, plural, namespace)


CLOCK_KEY = "clock"  # the sandbox time last seen, in POSIX seconds, kept in the state file

ADMIN = UserInfo(username="kubecrew-admin", groups=("system:masters", "system:authenticated"))


class Cluster:
    def __init__(
        self,
        *,
        admin_token: str,
        signing_key: bytes,
        state: Path | None = None,
        nodes: int = 3,
        clock: Clock | None = None,
        history: int = 50_000,
        world: World | None = None,
    ) -> None:
        self.clock = clock or Clock()
        self.world = world or World()
        self.registry = Registry()
        self.store = Store(state, history=history)
        self._resume_clock()
        self.objects = Objects(store=self.store, registry=self.registry, clock=self.clock)
        admission.install(self.objects)
        admission_policies.install(self.objects)
        self.lifecycle = Lifecycle(self.objects)
        self.discovery = Discovery(self.registry)
        self.openapi = OpenAPI(self.registry)
        self.openapi_v2 = OpenAPIV2(self.openapi)
        self.authn = Authenticator(
            static_tokens={admin_token: ADMIN}, signing_key=signing_key, reader=self.store
        )
        self.authz = Authorizer(RbacObjects(self.store))
        self.logs = PodLogs(self.clock)
        self.metrics = MetricsBook(self.clock)
        self.traffic = Traffic(self.store, self.world.profiles, self.metrics)
        self.store.observe(self._on_change)
        bootstrap.seed(self.objects, nodes=nodes)
        self.control = control.start(
            control.Context(self.objects, self.lifecycle, self.logs, self.metrics, self.world)
        )
        self.faults = Faults(self)
        self.store.commit()

    def tick(self, *, budget: float = 0.05) -> int:
        """One beat of the simulated cluster: finish due deletions, run the controllers that
        have work (for about `budget` real seconds), and make it all durable and visible.
        Returns the reconciles run."""
        self.lifecycle.sweep()
        done = self.control.step(budget=budget)
        self.store.set_meta(CLOCK_KEY, int(self.clock.seconds()))
        self.store.commit()
        return done

    def _resume_clock(self) -> None:
        """A restarted sandbox never goes back in time: an accelerated clock runs ahead of real
        time, so it continues from the last moment its state file saw instead."""
        last = self.store.meta(CLOCK_KEY)
        if last is not None and last > self.clock.seconds():
            self.clock.advance(timedelta(seconds=last - self.clock.seconds()))

    def _on_change(self, change: Change) -> None:
        if change.type != "DELETED":
            return
        if change.key == admission.CRD_KEY:
            for key in admission.unregister_crd(self.objects, change.object):
                for obj in self.store.list(key):
                    meta = obj["metadata"]
                    self.store.remove(
                        key, meta.get("namespace", ""), meta["name"], self.store.stamp(obj)
                    )
        elif change.key == ("", "pods"):
            self.logs.forget(change.namespace, change.name)
            self.metrics.forget_pod(change.namespace, change.name)

    def close(self) -> None:
        self.store.close()
