"""PodDisruptionBudget status (`disruption-controller`): how many selected pods are healthy, how
many must stay, and so how many voluntary disruptions are allowed right now.

The eviction subresource (sandbox/subresources.py) judges each eviction from the live pods, so
these numbers follow the same rules: pods being deleted do not count at all, a pod is healthy
when Ready, and a percentage is rounded up for both minAvailable and maxUnavailable. What this
adds is what `kubectl get pdb` and `describe` show: the numbers in status, the
DisruptionAllowed condition, and the `disruptedPods` an eviction left behind until their
deletion shows up (dropped after two minutes, as Kubernetes does).

Pods are found through the same `SelectorIndex` the endpoint controllers use, never by a scan of
the namespace per reconcile.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from sandbox.clock import parse_time
from sandbox.control.readiness import is_ready
from sandbox.control.runtime import PODS, Context, Controller, Item
from sandbox.control.selecting import SelectorIndex
from sandbox.selectors import LabelSelector
from sandbox.store import Change, Key, Obj

PDBS: Key = ("policy", "poddisruptionbudgets")
DISRUPTED_POD_TIMEOUT = 120.0  # seconds an eviction's entry waits for the pod's deletion


def budget_selector(pdb: Obj) -> LabelSelector:
    return LabelSelector.from_object((pdb.get("spec") or {}).get("selector"))


def scaled(value: Any, total: int) -> int:
    """An int-or-percent against `total`, percentages rounded up (as for both PDB fields)."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def desired_healthy(spec: dict[str, Any], expected: int) -> int:
    if spec.get("minAvailable") is not None:
        return scaled(spec["minAvailable"], expected)
    if spec.get("maxUnavailable") is not None:
        return max(expected - scaled(spec["maxUnavailable"], expected), 0)
    return expected


class DisruptionController(Controller):
    name = "disruption-controller"
    primary = PDBS
    watches = (PODS,)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.selecting = SelectorIndex(ctx.store, PDBS, budget_selector)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == PDBS:
            return [(change.namespace, change.name)]
        return [(change.namespace, n) for n in self.selecting.on_pod_change(change)]

    def reconcile(self, namespace: str, name: str) -> float | None:
        pdb = self.get(PDBS, namespace, name)
        if pdb is None:
            self.selecting.forget(namespace, name)
            return None
        spec = pdb.get("spec") or {}
        pods = [
            p
            for p in self.selecting.pods(namespace, name, budget_selector(pdb))
            if not p["metadata"].get("deletionTimestamp")
        ]
        old_status = pdb.get("status") or {}
        now = self.now()
        disrupted, recheck = self._disrupted(old_status.get("disruptedPods") or {}, pods, now)
        expected = len(pods)
        healthy = sum(1 for p in pods if is_ready(p) and p["metadata"]["name"] not in disrupted)
        desired = desired_healthy(spec, expected)
        allowed = max(healthy - desired, 0)
        status: dict[str, Any] = {
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "conditions": [self._condition(pdb, old_status, allowed)],
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        if status != old_status and expected == 0:
            self.event(pdb, "NoPods", "No matching pods found", warning=False)
        self.write_status(PDBS, pdb, status)
        return recheck

    def _disrupted(
        self, recorded: dict[str, str], pods: list[Obj], now: float
    ) -> tuple[dict[str, str], float | None]:
        """Entries an eviction wrote, kept while their pod is alive and not yet timed out."""
        alive = {p["metadata"]["name"] for p in pods}
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod_name, stamp in sorted(recorded.items()):
            left = parse_time(stamp).timestamp() + DISRUPTED_POD_TIMEOUT - now
            if pod_name in alive and left > 0:
                kept[pod_name] = stamp
                recheck = left if recheck is None else min(recheck, left)
        return kept, recheck

    def _condition(self, pdb: Obj, old_status: dict[str, Any], allowed: int) -> dict[str, Any]:
        status, reason = (
            ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
        )
        previous = next(
            (c for c in old_status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"),
            None,
        )
        since = self.ctx.clock.timestamp()
        if previous is not None and previous.get("status") == status:
            since = previous.get("lastTransitionTime", since)
        return {
            "type": "DisruptionAllowed",
            "status": status,
            "reason": reason,
            "message": "",
            "observedGeneration": pdb["metadata"].get("generation", 1),
            "lastTransitionTime": since,
        }


CONTROLLERS: tuple[type[Controller], ...] = (DisruptionController,)
