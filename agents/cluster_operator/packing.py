"""Waiting pods packed onto the node pools' room: which pool grows, by how many nodes, and the
pods no pool can take, with why (the provisioning review's arithmetic, no tool calls).

A pod goes to the cheapest pool whose new node it fits (`placement.Shape.cost`: no GPUs, then
the fewest CPUs, then the least memory) and that still has room, so a CPU pod never grows the
GPU pool while another pool holds it. Largest first (GPUs, then CPU, then memory), each pod
takes the first room that holds it, first fit: the room left on nodes already coming for earlier
scale-ups (`coming`), then the new nodes opened in this packing, then one more new node while
the pool's max size allows. A pod no pool's node could ever hold is said by the resource it
lacks ("no pool has a node with 4 GPUs"), else pool by pool (a taint, labels, affinity).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.cluster_operator.placement import GPU, Pod, Pool, Resources, Shape, amount_of, fits
from agents.cluster_operator.placement import misfit as misfit_of


@dataclass
class Room:
    """One pool's room for the pods of one review: on nodes coming, and on new ones."""

    pool: Pool
    shape: Shape
    coming: list[Resources] = field(default_factory=list)  # what is free on each coming node
    new: list[Resources] = field(default_factory=list)  # what is free on each new node
    pods: list[str] = field(default_factory=list)  # the pods that need the new nodes

    def take(self, pod: Pod) -> bool:
        """Place the pod in this room (a new node when the others are full), if it may."""
        for free in self.coming:
            if fits(pod, self.shape, free):
                _use(free, pod)
                return True
        for free in self.new:
            if fits(pod, self.shape, free):
                _use(free, pod)
                self.pods.append(pod.key)
                return True
        limit = self.pool.room()
        if limit is not None and len(self.new) >= limit:
            return False
        self.new.append(dict(self.shape.allocatable))
        _use(self.new[-1], pod)
        self.pods.append(pod.key)
        return True


def pack(pods: list[Pod], rooms: list[Room], *, pools: list[Pool]) -> list[tuple[str, str]]:
    """Each pod into the cheapest room that holds it, largest first; the pods none takes, each
    with why (`pools`: every pool, shaped or not, for the words)."""
    left = []
    by_cost = sorted(rooms, key=lambda r: r.shape.cost())
    for pod in sorted(pods, key=_size, reverse=True):
        fitting = [r for r in by_cost if fits(pod, r.shape)]
        if not fitting:
            left.append((pod.key, misfit(pod, pools)))
        elif not any(room.take(pod) for room in fitting):
            full = ", ".join(f"{r.pool.key} ({r.pool.max_size})" for r in fitting)
            left.append((pod.key, f"the pools it fits are at their max size: {full}"))
    return left


def coming(pool: Pool, shape: Shape, nodes: int, pods: list[Pod]) -> list[Resources]:
    """The room left on `nodes` coming nodes of the pool once `pods`, made for them, are in."""
    room = Room(pool, shape, coming=[dict(shape.allocatable) for _ in range(nodes)])
    for pod in sorted(pods, key=_size, reverse=True):
        room.take(pod)
    return room.coming


def misfit(pod: Pod, pools: list[Pool]) -> str:
    """Why no pool's new node can hold the pod."""
    shaped = [(p, p.shape) for p in pools if p.shape is not None]
    if not pools:
        return "there is no node pool (Cluster API MachineDeployment) to grow"
    if not shaped:
        return "no pool says what its nodes offer (no node, no scale-from-zero annotations)"
    for name, value in pod.requests.items():
        most, shape = max(shaped, key=lambda p: p[1].allocatable.get(name, 0.0))
        offered = shape.allocatable.get(name, 0.0)
        if value > offered:
            biggest = f"{amount_of(name, offered)}, pool {most.key}" if offered else "none has any"
            return f"no pool has a node with {amount_of(name, value)} (the most: {biggest})"
    return "; ".join(f"pool {p.key}: {misfit_of(pod, shape)}" for p, shape in shaped)


def _use(free: Resources, pod: Pod) -> None:
    for name, value in pod.requests.items():
        free[name] = free.get(name, 0.0) - value


def _size(pod: Pod) -> tuple[float, float, float]:
    return pod.requests.get(GPU, 0.0), pod.requests.get("cpu", 0.0), pod.requests.get("memory", 0.0)
