"""The approvals waiting for a person, read from the policy store when Prometheus scrapes
(core.telemetry.approvals): a real SQLite store holding an escalated downscale; a store that
cannot be opened is a scrape saying so, never a failed scrape."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prometheus_client import CollectorRegistry

from core.errors import Unavailable
from core.policy.store import open_store
from core.policy.store.base import Store
from core.telemetry import watch_approvals
from tests.support.policies import escalated


def test_the_oldest_waiting_approval_and_its_age(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    request = escalated(store)
    registry = CollectorRegistry()
    later = request.requested_at + timedelta(minutes=5)  # scraped five minutes after it opened

    watch_approvals(lambda: open_store(str(store)), registry=registry, clock=lambda: later)

    assert registry.get_sample_value("kubecrew_approvals_waiting", {"action": "scale"}) == 1
    assert registry.get_sample_value("kubecrew_approvals_oldest_wait_seconds") == 300
    assert registry.get_sample_value("kubecrew_approvals_store_up") == 1


def test_a_store_that_cannot_be_read_is_a_scrape_that_says_so() -> None:
    def unreachable() -> Store:
        raise Unavailable("the policy store's cluster does not answer")

    registry = CollectorRegistry()
    watch_approvals(unreachable, registry=registry)
    assert registry.get_sample_value("kubecrew_approvals_store_up") == 0
    assert registry.get_sample_value("kubecrew_approvals_oldest_wait_seconds") is None
