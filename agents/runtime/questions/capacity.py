"""Capacity answers: how full the nodes are, how much is free, which are under pressure, and
nodes ranked by pods, CPU or memory.

"Full" has two meanings and answers give both when they can: what pods *request* of each
node's allocatable CPU, memory and pod slots (what the scheduler fills up), and what is *in use*
now (`top`, one sample of metrics.k8s.io). A node is under pressure when its conditions say so
(Ready not True, a *Pressure or NetworkUnavailable condition True, any other condition in a
bad state such as a health check False) or when it is cordoned. Requests are summed from the
pods of every namespace this agent may read; pods it cannot see are not counted, and the
answer says so.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.runtime.questions.asked import Answered, Capacity
from agents.runtime.questions.evidence import Evidence, Json, finish, unanswered
from core import quantity

GiB = 2**30
_NODE_FIELDS = ["status.allocatable", "status.conditions", "spec.unschedulable"]
_POD_FIELDS = ["spec.nodeName", "status.phase", "spec.containers[*].resources.requests"]
_GOOD_WHEN_FALSE = ("Pressure", "NetworkUnavailable")


@dataclass
class _Node:
    name: str
    allocatable: dict[str, float]
    conditions: list[Json]
    cordoned: bool
    requested: dict[str, float] = field(default_factory=lambda: {"cpu": 0.0, "memory": 0.0})
    pods: int = 0
    usage: Json = field(default_factory=dict)  # top's row: cpu_m, memory_mi, *_percent

    def percent(self, what: str) -> int | None:
        total = self.allocatable.get(what, 0.0)
        used = self.pods if what == "pods" else self.requested[what]
        return round(100 * used / total) if total else None

    def free(self, what: str) -> float:
        used = self.pods if what == "pods" else self.requested[what]
        return max(0.0, self.allocatable.get(what, 0.0) - used)

    def troubles(self) -> list[str]:
        found = [
            f"{c['type']}={c.get('status')}" + (f" ({c['reason']})" if c.get("reason") else "")
            for c in self.conditions
            if _bad(c)
        ]
        return found + (["cordoned (SchedulingDisabled)"] if self.cordoned else [])


def _bad(condition: Json) -> bool:
    kind, status = str(condition.get("type", "")), condition.get("status")
    if kind == "Ready":
        return status != "True"
    if kind.endswith(_GOOD_WHEN_FALSE):
        return status == "True"
    return status not in ("True", "False") or (
        status == "False" and kind.endswith(("Ready", "Healthy"))
    )


async def answer(evidence: Evidence, question: Capacity) -> Answered:
    nodes = await _nodes(evidence)
    if nodes is None:
        return unanswered(evidence, "capacity", "the nodes' state")
    if question.topic == "pressure":
        return _pressure(evidence, nodes)
    await _requests(evidence, nodes)
    if question.topic == "fullness" or (question.topic == "rank" and question.metric != "pods"):
        await _usage(evidence, nodes)
    if question.topic == "rank":
        return _rank(evidence, nodes, question)
    if question.topic == "free":
        return _free(evidence, nodes, question)
    return _fullness(evidence, nodes)


async def _nodes(evidence: Evidence) -> list[_Node] | None:
    scan = await evidence.scan("nodes", "the nodes", namespace=None, fields=_NODE_FIELDS)
    if scan is None:
        return None
    return [
        _Node(
            str(n["name"]),
            {
                k: quantity.amount(v)
                for k, v in (n.get("status.allocatable") or {}).items()
                if k in ("cpu", "memory", "pods")
            },
            [c for c in n.get("status.conditions") or [] if isinstance(c, dict)],
            bool(n.get("spec.unschedulable")),
        )
        for n in scan.items
    ]


async def _requests(evidence: Evidence, nodes: list[_Node]) -> None:
    by_name = {n.name: n for n in nodes}
    scan = await evidence.scan(
        "pods", "the pods' requests", namespace=None, fields=_POD_FIELDS, cap=10_000
    )
    for pod in scan.items if scan else []:
        node = by_name.get(str(pod.get("spec.nodeName") or ""))
        if node is None or pod.get("status.phase") in ("Succeeded", "Failed"):
            continue
        node.pods += 1
        for requests in pod.get("spec.containers[*].resources.requests") or []:
            for what in ("cpu", "memory"):
                node.requested[what] += quantity.amount((requests or {}).get(what))


async def _usage(evidence: Evidence, nodes: list[_Node]) -> None:
    top = await evidence.call("top", "the nodes' use now (metrics)", what="nodes", limit=500)
    rows = {str(r.get("name")): r for r in (top or {}).get("items") or []}
    for node in nodes:
        node.usage = rows.get(node.name, {})


def _pressure(evidence: Evidence, nodes: list[_Node]) -> Answered:
    troubled = [(n, t) for n in nodes if (t := n.troubles())]
    rows = [{"node": n.name, "troubles": t} for n, t in troubled]
    head = (
        f"{len(troubled)} of {len(nodes)} nodes are under pressure or not ready:"
        if troubled
        else f"None of the {len(nodes)} nodes is under pressure: all Ready, no "
        "pressure condition, none cordoned."
    )
    lines = [f"- Node {r['node']}: {', '.join(r['troubles'])}" for r in rows]
    return finish(
        evidence,
        "capacity",
        head,
        lines,
        f"read the conditions of {len(nodes)} nodes",
        rows=rows,
        total=len(troubled),
        topic="pressure",
    )


def _fullness(evidence: Evidence, nodes: list[_Node]) -> Answered:
    total = {w: sum(n.allocatable.get(w, 0.0) for n in nodes) for w in ("cpu", "memory", "pods")}
    asked = {
        "cpu": sum(n.requested["cpu"] for n in nodes),
        "memory": sum(n.requested["memory"] for n in nodes),
        "pods": float(sum(n.pods for n in nodes)),
    }
    share = {w: round(100 * asked[w] / total[w]) if total[w] else 0 for w in total}
    head = (
        f"{len(nodes)} nodes; pods request {share['cpu']}% of the CPU "
        f"({asked['cpu']:.1f} of {total['cpu']:.1f} cores), {share['memory']}% of the memory "
        f"({asked['memory'] / GiB:.1f} of {total['memory'] / GiB:.1f} GiB) and "
        f"{int(asked['pods'])} of {int(total['pods'])} pod slots."
    )
    rows = [_node_row(n) for n in sorted(nodes, key=lambda n: -(n.percent("cpu") or 0))]
    lines = [f"- Node {r['node']}: {_said(r)}" for r in rows[:10]]
    used = [n.usage for n in nodes if n.usage]
    if used:
        cpu = sum(float(u.get("cpu_m") or 0) for u in used) / 1000
        memory = sum(float(u.get("memory_mi") or 0) for u in used) / 1024
        lines.insert(0, f"In use now: {cpu:.1f} cores and {memory:.1f} GiB (one sample).")
    return finish(
        evidence,
        "capacity",
        head,
        lines,
        f"summed the requests on {len(nodes)} nodes",
        rows=rows,
        total=len(nodes),
        topic="fullness",
        cluster=share,
    )


def _free(evidence: Evidence, nodes: list[_Node], question: Capacity) -> Answered:
    wanted = (
        [question.metric] if question.metric in ("cpu", "memory") else ["cpu", "memory", "pods"]
    )
    free = {w: sum(n.free(w) for n in nodes) for w in wanted}
    said = {
        "cpu": f"{free.get('cpu', 0):.1f} cores of CPU",
        "memory": f"{free.get('memory', 0) / GiB:.1f} GiB of memory",
        "pods": f"{int(free.get('pods', 0))} pod slots",
    }
    head = (
        f"Free to request across {len(nodes)} nodes: "
        + ", ".join(said[w] for w in wanted)
        + " (allocatable minus what pods request)."
    )
    order = wanted[0]
    rows = [
        {"node": n.name, **{f"free_{w}": _amount(w, n.free(w)) for w in wanted}}
        for n in sorted(nodes, key=lambda n: -n.free(order))
    ]
    lines = [
        f"- Node {r['node']}: " + ", ".join(f"{k[5:]} {v}" for k, v in r.items() if k != "node")
        for r in rows[:10]
    ]
    return finish(
        evidence,
        "capacity",
        head,
        lines,
        f"summed the requests on {len(nodes)} nodes",
        rows=rows,
        total=len(nodes),
        topic="free",
        free=free,
    )


def _rank(evidence: Evidence, nodes: list[_Node], question: Capacity) -> Answered:
    metric = question.metric or "pods"
    measured = (
        "pods" if metric == "pods" else ("use" if any(n.usage for n in nodes) else "requests")
    )

    def value(node: _Node) -> float:
        if metric == "pods":
            return node.pods
        if measured == "use":
            return float(node.usage.get("cpu_m" if metric == "cpu" else "memory_mi") or 0)
        return node.requested[metric]

    ranked = sorted(nodes, key=value, reverse=question.most)[: question.count]
    rows = [_node_row(n) for n in ranked]
    which = "most" if question.most else "fewest" if metric == "pods" else "least"
    by = {"pods": "pods", "use": f"{metric} in use now", "requests": f"{metric} requested"}[
        measured
    ]
    head = f"Nodes with the {which} {by}:"
    lines = [f"- Node {r['node']}: {_said(r)}" for r in rows]
    return finish(
        evidence,
        "capacity",
        head,
        lines,
        f"read {len(nodes)} nodes and their pods",
        rows=rows,
        total=len(nodes),
        topic="rank",
        metric=metric,
    )


def _node_row(node: _Node) -> Json:
    row: Json = {
        "node": node.name,
        "pods": node.pods,
        "cpu_requested_percent": node.percent("cpu"),
        "memory_requested_percent": node.percent("memory"),
        "pod_slots_percent": node.percent("pods"),
    }
    if node.usage:
        row["cpu_in_use_percent"] = node.usage.get("cpu_percent")
        row["memory_in_use_percent"] = node.usage.get("memory_percent")
    if node.troubles():
        row["troubles"] = node.troubles()
    return row


def _said(row: Json) -> str:
    parts = [
        f"{row['pods']} pod{'s' if row['pods'] != 1 else ''}",
        f"CPU {row['cpu_requested_percent']}% requested",
        f"memory {row['memory_requested_percent']}% requested",
    ]
    if row.get("cpu_in_use_percent") is not None:
        parts.append(
            f"in use {row['cpu_in_use_percent']}% CPU, {row.get('memory_in_use_percent')}% memory"
        )
    if row.get("troubles"):
        parts.append(", ".join(row["troubles"]))
    return ", ".join(parts)


def _amount(what: str, value: float) -> str:
    if what == "cpu":
        return f"{value:.2f} cores"
    if what == "memory":
        return f"{value / GiB:.1f} GiB"
    return f"{int(value)} slots"
