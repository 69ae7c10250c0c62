"""How much CPU and memory a running container uses, as a pure function of time.

Usage follows the container's profile: steady CPU with a little noise or spiky CPU (seeded by
the container and a 15-second window, so every reader at the same moment sees the same number),
memory that settles at the profile's level and grows by `memory_growth` per second of running
(a leak), capped CPU at the container's limit. Because nothing here keeps state, the metrics
book, the Prometheus exposition and the HPA can all ask `pod_usage(world, pod, now)` and agree.
`oom_at` solves when a leak crosses the memory limit, so the kubelet sets one timer for it.

A container run by a plain command (`sleep 3600`, a shell loop) is not the image's own program
and uses next to nothing. This module knows profiles, commands and quantities; not the API.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from sandbox.clock import parse_time
from sandbox.kubelet.commands import Plan, interpret
from sandbox.kubelet.profiles import Profile
from sandbox.quantity import millicores, units
from sandbox.store import Obj
from sandbox.world import World

WINDOW = 15.0  # seconds one CPU sample stands for (the metrics resolution)
SCRIPT_CPU = 0.0
SCRIPT_MEMORY = 700 * 1024.0
SYSTEM_CPU = 120.0  # millicores the node's own daemons use (kubelet, containerd, ...)
SYSTEM_MEMORY = 900 * 1024 * 1024.0


def memory_at(profile: Profile, plan: Plan, age: float) -> float:
    if not plan.own_process:
        return SCRIPT_MEMORY
    return profile.memory_bytes + profile.memory_growth * max(age, 0.0)


def oom_at(profile: Profile, plan: Plan, started: float, limit: float | None) -> float | None:
    """When the container's memory crosses `limit` (None: it never does)."""
    if limit is None or limit <= 0:
        return None
    base = memory_at(profile, plan, 0.0)
    if base >= limit:
        # the process allocates its working set while starting up and dies doing so
        return started + min(max(profile.startup_seconds, 0.2), 1.0)
    if not plan.own_process or profile.memory_growth <= 0:
        return None
    return started + (limit - base) / profile.memory_growth


def cpu_at(profile: Profile, plan: Plan, age: float, now: float, key: str) -> float:
    if not plan.own_process:
        return SCRIPT_CPU
    noise = _noise(key, int(now // WINDOW))
    spiky = profile.cpu_pattern == "spiky"
    factor = 0.3 + 2.2 * noise**2 if spiky else 0.9 + 0.2 * noise
    if age < profile.startup_seconds:
        factor *= 2.0  # starting up is the busiest moment of a process
    return profile.cpu_millis * factor


def limits(container: dict[str, Any]) -> tuple[float | None, float | None]:
    """(CPU millicores, memory bytes) limits of a container, if set."""
    declared = (container.get("resources") or {}).get("limits") or {}
    cpu = float(millicores(declared["cpu"])) if "cpu" in declared else None
    memory = float(units(declared["memory"])) if "memory" in declared else None
    return cpu, memory


def container_usage(
    profile: Profile, container: dict[str, Any], started: float, now: float, key: str
) -> tuple[float, float]:
    plan = interpret(container)
    age = now - started
    cpu_limit, memory_limit = limits(container)
    cpu = cpu_at(profile, plan, age, now, key)
    memory = memory_at(profile, plan, age)
    if cpu_limit is not None:
        cpu = min(cpu, cpu_limit)
    if memory_limit is not None:
        memory = min(memory, memory_limit)
    return cpu, memory


def pod_usage(world: World, pod: Obj, now: float) -> dict[str, tuple[float, float]]:
    """Current (CPU millicores, memory bytes) of each running container of `pod`."""
    spec = pod.get("spec") or {}
    specs = {c["name"]: c for c in [*(spec.get("initContainers") or ()), *spec["containers"]]}
    uid = pod["metadata"].get("uid", "")
    usage: dict[str, tuple[float, float]] = {}
    status = pod.get("status") or {}
    for entry in [
        *(status.get("initContainerStatuses") or ()),
        *(status.get("containerStatuses") or ()),
    ]:
        running = (entry.get("state") or {}).get("running")
        container = specs.get(entry.get("name"))
        if running is None or container is None or not running.get("startedAt"):
            continue
        started = _epoch(running["startedAt"])
        profile = world.profiles.profile_for(pod, container)
        key = f"{world.seed}:{uid}:{container['name']}:{entry.get('restartCount', 0)}"
        usage[container["name"]] = container_usage(profile, container, started, now, key)
    return usage


@functools.lru_cache(maxsize=2**16)
def _epoch(stamp: str) -> float:
    """A container's start, as seconds (each running one is asked every round)."""
    return parse_time(stamp).timestamp()


def _noise(key: str, window: int) -> float:
    digest = hashlib.blake2b(f"{key}:{window}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 0xFFFFFFFF
