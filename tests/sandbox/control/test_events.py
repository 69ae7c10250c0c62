"""Events fold repeats into a count and expire an hour after their last occurrence."""

from __future__ import annotations

from sandbox.control.events import TTL
from tests.support.simulation import Simulation


def test_repeats_fold_into_a_count_and_the_event_expires_after_its_last_occurrence() -> None:
    sim = Simulation(only=())
    node = sim.get("nodes", "", "node-1")
    assert node is not None
    events = sim.cluster.control.ctx.events

    def record() -> dict[str, object]:
        written = events.record(node, reason="Probe", message="hello", component="test")
        assert written is not None
        return written

    first = record()
    again = record()
    assert again["metadata"]["name"] == first["metadata"]["name"] and again["count"] == 2
    sim.run_for(TTL - 60, tick=600)
    assert sim.get("events", "default", first["metadata"]["name"]) is not None
    sim.run_for(120, tick=60)
    fresh = record()  # expiry happens as events are recorded: the old one goes, a new one starts
    assert sim.get("events", "default", first["metadata"]["name"]) is None
    assert fresh["count"] == 1 and fresh["metadata"]["name"] != first["metadata"]["name"]
