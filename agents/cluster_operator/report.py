"""What the Cluster Operator says: the patrol, a drain preview and the savings, in words, built
only from what the tools answered (the steps each procedure recorded as it went)."""

from __future__ import annotations

from typing import Any

from agents.cluster_operator.capacity import Saving
from agents.cluster_operator.migration import Migration
from agents.cluster_operator.nodes import NodeIssue

STATUS = {
    "drained": "drained: its workloads run elsewhere",
    "waiting-for-approval": "waiting for a person to approve the drain",
    "waiting-for-checkpoint": "waiting for a training Job to checkpoint",
    "rejected": "not drained: the owners rejected it",
    "paused": "paused: the blast radius allows no more evictions this hour",
    "blocked": "partly drained: a PodDisruptionBudget holds pods; the node stays cordoned",
}


def patrol(issues: list[NodeIssue], moved: list[Migration]) -> str:
    if not issues:
        return "Every node is healthy."
    lines = [f"{len(issues)} node(s) unhealthy:"]
    lines += [f"- {i['node']}: {'; '.join(i['conditions'])}" for i in issues]
    for m in moved:
        lines += ["", f"Node {m['node']}: {STATUS[m['status']]}."]
        lines += [f"  {n}. {step}" for n, step in enumerate(m["steps"], 1)]
        if m["proposal"]:
            lines.append(f"  The transcript: get_proposal {m['proposal']} on the policy server.")
    return "\n".join(lines)


def drain_preview(plan: dict[str, Any]) -> str:
    evict = [p for p in plan["pods"] if p["action"] == "evict"]
    lines = [f"Draining node {plan['node']} would evict {len(evict)} pod(s), changing nothing now:"]
    for p in plan["pods"]:
        wave = f" (wave {p['wave']})" if p.get("wave") else ""
        lines.append(f"- {p['pod']}: {p['action']}{wave}: {p['reason']}")
    for b in plan.get("budgets", []):
        holds = " - blocks now" if b["blocks"] else ""
        lines.append(f"Budget {b['pdb']} allows {b['disruptions_allowed']} disruption(s){holds}")
    for d in plan.get("disruption", []):
        lines.append(
            f"{d['workload']}: {d['moving']} pod(s) move, at most {d['unavailable_at_once']} "
            f"unavailable at once"
        )
    return "\n".join(lines)


def savings(found: list[Saving], *, proposed: bool) -> str:
    if not found:
        return "I found no underused workload: every one uses a fair share of what it requests."
    total = sum(s["savings_per_month"] for s in found)
    lines = [f"{len(found)} underused workload(s), about ${total:.2f} a month to save:"]
    for s in found:
        lines.append(
            f"- {s['workload']}: {s['utilization']:.0%} of its CPU requests used; "
            f"{s['replicas']} -> {s['proposed']} replicas saves about "
            f"${s['savings_per_month']:.2f}/month"
        )
        lines += [f"  {step}" for step in s["steps"]]
    if not proposed:
        lines.append("Nothing was proposed or changed; a capacity review proposes these.")
    return "\n".join(lines)
