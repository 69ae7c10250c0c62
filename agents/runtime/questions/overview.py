"""The cluster at a glance: the API server's version, the nodes and how much of them the pods
request, and what is not healthy, from the kube server's `overview` read tool.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from agents.runtime.questions.asked import Answered, Overview
from agents.runtime.questions.evidence import Evidence, Json, cite, finish, more, unanswered

NODES_SHOWN = 10  # the fullest nodes listed; the others are counted


async def answer(evidence: Evidence, question: Overview) -> Answered:
    seen = await evidence.call("overview", "the cluster overview")
    if seen is None:
        return unanswered(evidence, "overview", "how the cluster stands")
    nodes = [n for n in seen.get("nodes") or [] if isinstance(n, dict)]
    node_count = int(seen.get("node_count") or len(nodes))
    not_ready = [n for n in nodes if not str(n.get("status") or "").startswith("Ready")]
    cordoned = [n for n in nodes if "SchedulingDisabled" in str(n.get("status") or "")]
    deployments: list[Json] = list(seen.get("unhealthy_deployments") or [])
    pods: list[Json] = list(seen.get("unhealthy_pods") or [])
    version = str(seen.get("server_version") or "unknown")
    head = (
        f"Kubernetes {version}: {node_count} node{'s' if node_count != 1 else ''} "
        f"({node_count - len(not_ready)} Ready), {_pods(seen.get('pod_count'))}, "
        f"{_count(seen.get('deployment_count'), 'Deployment')}."
    )
    lines: list[str] = []
    for node in not_ready:
        lines.append(f"- {cite('Node', str(node.get('name')))} is {node.get('status')}")
    for node in cordoned:
        if node not in not_ready:
            lines.append(f"- {cite('Node', str(node.get('name')))} is cordoned")
    fullest = sorted(nodes, key=lambda n: -(n.get("cpu_requested_percent") or 0))[:NODES_SHOWN]
    if fullest:
        lines.append(
            "Requested of allocatable, fullest first"
            f"{more(len(fullest), len(nodes), 'nodes')}: "
            + ", ".join(
                f"{n.get('name')} cpu {_percent(n.get('cpu_requested_percent'))} "
                f"memory {_percent(n.get('memory_requested_percent'))} ({_pods(n.get('pods'))})"
                for n in fullest
            )
        )
    if deployments:
        lines.append("Deployments not fully available:")
        lines += [
            f"- {cite('Deployment', str(d.get('name')), str(d.get('namespace') or ''))} "
            f"ready {d.get('ready', '?')}"
            for d in deployments
        ]
    if pods:
        lines.append("Pods not running or not ready:")
        lines += [
            f"- {cite('Pod', str(p.get('name')), str(p.get('namespace') or ''))} "
            f"{p.get('status', '')} ready {p.get('ready', '?')}"
            for p in pods
        ]
    if not (not_ready or deployments or pods):
        lines.append("Every node is Ready, and every Deployment and pod is healthy.")
    if seen.get("note"):
        lines.append(f"({seen['note']})")
    return finish(
        evidence,
        "overview",
        head,
        lines,
        "read the nodes, Deployments and pods of the whole cluster",
        rows=nodes,
        total=node_count,
        unhealthy_deployments=deployments,
        unhealthy_pods=pods,
        server_version=version,
    )


def _percent(value: object) -> str:
    return f"{value}%" if isinstance(value, int) else "?"


def _pods(count: object) -> str:
    return _count(count, "pod")


def _count(count: object, noun: str) -> str:
    return f"1 {noun}" if count == 1 else f"{count or 0} {noun}s"
