"""Pods for the kubelet tests, bound by hand (the scheduler is not these tests' business)."""

from __future__ import annotations

from typing import Any

from sandbox.logs import LogQuery
from tests.support import playing
from tests.support.simulation import Simulation


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A pod already bound to node-1; each container dict needs at least an image."""
    return playing.pod(name, *containers, node="node-1", **spec)


def status(sim: Simulation, name: str, namespace: str = "default") -> dict[str, Any]:
    found = sim.get("pods", namespace, name)
    assert found is not None, f"pod {name} is gone"
    return dict(found.get("status") or {})


def container(sim: Simulation, name: str, index: int = 0, *, init: bool = False) -> dict[str, Any]:
    key = "initContainerStatuses" if init else "containerStatuses"
    return dict(status(sim, name)[key][index])


def reasons(sim: Simulation, name: str) -> list[str]:
    """Event reasons about the pod, in the order they first happened."""
    found = sim.get("pods", "default", name)
    assert found is not None
    events = sorted(
        sim.events_for(found), key=lambda e: (e["firstTimestamp"], e["metadata"]["name"])
    )
    return [e["reason"] for e in events]


def messages(sim: Simulation, name: str, reason: str) -> list[str]:
    found = sim.get("pods", "default", name)
    assert found is not None
    return [e["message"] for e in sim.events_for(found, reason=reason)]


def event_count(sim: Simulation, name: str, reason: str) -> int:
    found = sim.get("pods", "default", name)
    assert found is not None
    return sum(int(e.get("count") or 1) for e in sim.events_for(found, reason=reason))


def logs(sim: Simulation, name: str, container_name: str, *, previous: bool = False) -> str:
    return sim.cluster.logs.read(("default", name, container_name), LogQuery(previous=previous))


def waiting_reason(sim: Simulation, name: str, index: int = 0) -> str | None:
    state = container(sim, name, index).get("state") or {}
    return (state.get("waiting") or {}).get("reason")
