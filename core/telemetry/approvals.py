"""The approvals waiting for a person, read from the policy store when Prometheus scrapes.

    kubecrew_approvals_waiting{action}            pending approval requests, by policy action
    kubecrew_approvals_oldest_wait_seconds        how long the oldest of them has waited (0: none)
    kubecrew_approvals_store_up                   1 when the store answered this scrape, else 0

The store is the truth about approvals, whichever channel opened or answered them (a heal, a
negotiation, `kubecrew approvals`, Slack, a PR review, another replica), so the numbers are read
from it at scrape time rather than counted where requests open and end: a gauge kept in one
process would miss every answer given elsewhere. A store that cannot be read makes the scrape
say `..._store_up 0`, never fail. One part of the crew registers the collector (`watch`: the
part that resumes heals once their approvals are answered), so the series are not repeated by
every replica of every part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from core.telemetry.metrics import REGISTRY

if TYPE_CHECKING:  # a type only: reading the metrics must not load a store backend
    from core.policy.store.base import Store

OpenStore = Callable[[], "Store"]
Clock = Callable[[], datetime]


class WaitingApprovals(Collector):
    def __init__(self, open_store: OpenStore, *, clock: Clock = lambda: datetime.now(UTC)):
        self._open = open_store
        self._clock = clock

    def describe(self) -> Iterator[Metric]:
        """The families without reading the store (registering must not open it)."""
        return iter(_families())

    def collect(self) -> Iterator[Metric]:
        waiting, oldest, up = _families()
        try:
            store = self._open()
            try:
                pending = store.approvals(state="pending")
            finally:
                store.close()
        except Exception:  # an unreadable store is a scrape that says so, not a failed scrape
            up.add_metric([], 0)
            yield up
            return
        now = self._clock()
        for action, count in sorted(Counter(r.action.type for r in pending).items()):
            waiting.add_metric([action], count)
        ages = [(now - r.requested_at).total_seconds() for r in pending]
        oldest.add_metric([], max(ages, default=0.0))
        up.add_metric([], 1)
        yield from (waiting, oldest, up)


def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily, GaugeMetricFamily]:
    return (
        GaugeMetricFamily(
            "kubecrew_approvals_waiting",
            "Approval requests waiting for a person in the policy store, by policy action.",
            labels=["action"],
        ),
        GaugeMetricFamily(
            "kubecrew_approvals_oldest_wait_seconds",
            "Seconds the oldest pending approval request has waited (0 when none waits).",
        ),
        GaugeMetricFamily(
            "kubecrew_approvals_store_up",
            "1 when the policy store answered the last scrape's read of its approvals, else 0.",
        ),
    )


_registered: WeakKeyDictionary[CollectorRegistry, WaitingApprovals] = WeakKeyDictionary()


def watch_approvals(
    open_store: OpenStore,
    *,
    registry: CollectorRegistry = REGISTRY,
    clock: Clock = lambda: datetime.now(UTC),
) -> WaitingApprovals:
    """Expose the store's waiting approvals on `registry` (the crew's), replacing a collector
    registered there before (a command run twice in one process)."""
    previous = _registered.pop(registry, None)
    if previous is not None:
        registry.unregister(previous)
    collector = WaitingApprovals(open_store, clock=clock)
    registry.register(collector)
    _registered[registry] = collector
    return collector
