"""What the Cluster Operator says: the patrol, a drain preview, the savings (fewer replicas, and
right-sized requests), node readiness, the maintenance queue and the fleet, in words, built only
from what the tools answered (the steps each procedure recorded as it went). A saving says where
its use was read ("mean over 1h from Prometheus", "one sample from metrics.k8s.io"), since a
number from one sample and one from an hour do not carry the same weight.

`changes` lists every change a procedure made or scheduled, from its result (never from its
words): the target, the values from -> to, how (the pull request, or the gated write), the
proposal, who approved it and when it runs; `change_line` says one in a line, nothing cut, so
a scheduled job's summary (`kubecrew run`) names each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from agents.cluster_operator.capacity import Saving
from agents.cluster_operator.fleet import ClusterHealth, Move
from agents.cluster_operator.maintenance import Entry, Maintenance
from agents.cluster_operator.migration import Migration
from agents.cluster_operator.nodes import NodeIssue
from agents.cluster_operator.provisioning import Provisioning
from agents.cluster_operator.readiness import Readiness
from agents.cluster_operator.removal import Removal
from agents.cluster_operator.rightsizing import Resize
from core.policy.proposals import APPROVED

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
            f"- {s['workload']}: {s['utilization']:.0%} of its CPU requests used "
            f"({s['source']}); "
            f"{s['replicas']} -> {s['proposed']} replicas saves about "
            f"${s['savings_per_month']:.2f}/month"
        )
        lines += [f"  {step}" for step in s["steps"]]
    if not proposed:
        lines.append("Nothing was proposed or changed; a capacity review proposes these.")
    return "\n".join(lines)


def rightsizing(found: list[Resize], *, proposed: bool) -> str:
    """The oversized requests of workloads that keep their replicas, with the numbers."""
    if not found:
        return ""
    total = sum(r["savings_per_month"] for r in found)
    lines = [f"{len(found)} oversized CPU request(s), about ${total:.2f} a month to save:"]
    for r in found:
        lines.append(
            f"- {r['workload']} container {r['container']}: uses about {r['used_m']:.0f}m of "
            f"its {r['cpu_from']} CPU request per replica ({r['utilization']:.0%}, "
            f"{r['source']}); "
            f"{r['cpu_from']} -> {r['cpu_to']} over {r['replicas']} replica(s) saves about "
            f"${r['savings_per_month']:.2f}/month"
        )
        lines += [f"  {step}" for step in r["steps"]]
    if not proposed:
        lines.append("Nothing was proposed or changed; a capacity review proposes these.")
    return "\n".join(lines)


PROVISIONED = {
    "validated": "the new nodes joined Ready and its pods run there",
    "waiting-for-nodes": "scaled; the new nodes are still coming",
    "waiting-for-approval": "waiting for a person to approve the scale-up",
    "rejected": "not scaled: rejected",
    "timed-out": "scaled, but the nodes did not serve its pods in time",
    "failed": "not scaled: the scale failed",
    "not-needed": "not scaled: its pods no longer wait",
}


def provisioning(found: Provisioning) -> str:
    """The pods waiting for a node, each pool's scale-up with its steps, and the pods no pool
    can take with why; "" when nothing was scaled, is under way or is explained."""
    if not found["scale_ups"] and not found["unfit"]:
        return ""
    lines = [f"Provisioning: {len(found['waiting'])} pod(s) wait for a node."]
    for s in found["scale_ups"]:
        grown = f"{s['replicas_from']} -> {s['applied'] or s['replicas_to']}"
        lines.append(
            f"- pool {s['pool']} {grown} machine(s) for {len(s['pods'])} pod(s) "
            f"({', '.join(s['pods'])}): {PROVISIONED[s['status']]}"
        )
        lines += [f"    {step}" for step in s["steps"]]
    for u in found["unfit"]:
        lines.append(f"- {u['pod']} waits and no pool was grown for it: {u['why']}")
    return "\n".join(lines)


def pool_removals(found: list[Removal]) -> str:
    """The pool nodes drained for consolidation: removed through their pool, or kept, and why."""
    lines = []
    for r in found:
        done = "removed from its pool" if r["removed"] else "kept, drained and cordoned"
        lines.append(f"Node {r['node']} (pool {r['pool']}, machine {r['machine']}): {done}")
        lines += [f"  {step}" for step in r["steps"]]
    return "\n".join(lines)


READINESS = {
    "removed-taint": "ready to serve: every rule holds; removed the taint",
    "added-taint": "NOT ready: a rule broke; put the taint back",
    "kept-taint": "NOT ready: the taint stays",
    "ready": "ready to serve: every rule holds",
    "not-ready": "NOT ready, and not tainted: the next patrol taints it",
}


def readiness(found: list[Readiness], *, applied: bool) -> str:
    """Each gated node's verdict, with the rules that failed and what was seen."""
    if not found:
        return "" if applied else "No NodeReadinessPolicy selects any node: nothing is gated."
    lines = ["Node readiness:"]
    for r in found:
        lines.append(f"- {r['node']} ({r['policy']}, taint {r['taint']}): {READINESS[r['action']]}")
        failed = [c for c in r["checks"] if not c["passed"]]
        for check in failed if failed else r["checks"]:
            mark = "failed" if not check["passed"] else "holds"
            lines.append(f"    {check['rule']} {mark}: {check['evidence']}")
    return "\n".join(lines)


def queued(entry: Entry, pods: int, opens: str) -> str:
    reasons = entry["reasons"]
    lines = [
        f"Queued maintenance of {entry['node']}: {'; '.join(reasons)} ({len(reasons)} reason(s), "
        f"one disruption for all). Draining it would evict {pods} pod(s) now.",
        f"The maintenance window opens at {opens}; the patrol drains it then."
        if opens
        else "Its maintenance window is open: the next patrol drains it, one node at a time.",
    ]
    return "\n".join(lines)


def maintenance(queue: list[Maintenance]) -> str:
    if not queue:
        return ""
    lines = ["Maintenance queue:"]
    for m in queue:
        lines.append(f"- {m['node']} ({'; '.join(m['reasons'])}): {m['status']}")
        lines += [f"    {step}" for step in m["steps"]]
        if m["migration"] is not None:
            lines += [f"    {n}. {step}" for n, step in enumerate(m["migration"]["steps"], 1)]
    return "\n".join(lines)


def fleet(health: list[ClusterHealth], moves: list[Move]) -> str:
    lines = [f"{len(health)} cluster(s):"]
    for h in health:
        sick = f"; unhealthy: {', '.join(h['unhealthy'])}" if h["unhealthy"] else ""
        lines.append(
            f"- {h['cluster'] or 'current context'}: {h['nodes']} node(s), CPU requests at "
            f"{h['load']:.0%} of {h['cpu_offered_m'] / 1000:g} cores offered, "
            f"{h['pending']} pod(s) pending{sick}"
        )
    for m in moves:
        head = (
            f"Imbalance: proposed moving {m['moving']} replica(s) of {m['workload']} from "
            f"{m['source']} to {m['target']} as {m['proposal']} ({m['outcome']})"
        )
        lines.append(head + {
            "done": f"; moved: {m['target']} scaled up and validated first, then {m['source']} "
                    "scaled down and validated.",
            "scaled-up": f"; {m['target']} is scaled up, {m['source']} not yet down.",
            "rejected": "; rejected: nothing was changed.",
            "no-target": "; nothing was changed: the target cannot take it yet (below).",
        }.get(m.get("state", ""), _undone(m)))  # fmt: skip
        lines += [f"  - {step}" for step in m.get("steps", [])]
    return "\n".join(lines)


def _undone(move: Move) -> str:
    """Why a proposed move changed nothing yet: its decision, or what its steps say stops it."""
    if move["outcome"] in APPROVED and move.get("steps"):
        return "; nothing was changed yet (below)."
    return "; nothing was changed yet: the owners decide."


class Change(TypedDict):
    target: str  # "Deployment shop/web", "Node node-3"
    field: str  # what changed: "replicas", "cpu request of container web", "drain"
    before: str
    after: str
    how: str  # "PR #2, merged and synced", "gated write (scale)", "the patrol, from the ..."
    proposal: str  # the policy proposal it was made under ("" when none was needed)
    approved_by: str  # the policy store by policy, a person, or the policy that required it
    when: str  # "done", or when a scheduled change runs ("runs in the maintenance window ...")


def changes(result: Mapping[str, Any]) -> list[Change]:
    """Every change in a Cluster Operator procedure's result, in the order it was made."""
    found: list[Change] = []
    for s in result.get("savings") or []:
        if s.get("applied") is not None:
            found.append(_change(s["workload"], "replicas", s["replicas"], s["applied"], s))
    for r in result.get("rightsizing") or []:
        if r.get("applied"):
            what = f"cpu request of container {r['container']}"
            found.append(_change(r["workload"], what, r["cpu_from"], r["applied"], r))
    for c in result.get("consolidation") or []:
        if c.get("queued"):
            opens = c.get("runs") or ""
            found.append(
                Change(
                    target=f"Node {c['node']}", field="drain (consolidation)",
                    before="in service", after=f"drained, {len(c['pods'])} pod(s) moved",
                    how="the patrol, from the maintenance queue (nothing cordoned yet)",
                    proposal=c["proposal"], approved_by=c.get("approved_by") or "",
                    when=f"runs in the maintenance window opening at {opens}" if opens
                    else "runs at the next patrol (its maintenance window is open)",
                )
            )  # fmt: skip
    moved = {m["node"]: m for m in [*(result.get("migrations") or []),
                                    *(result.get("restart_migrations") or [])]}  # fmt: skip
    queue = result.get("maintenance") or []
    moved |= {m["node"]: m["migration"] for m in queue if m.get("migration")}  # once per node
    under = {m["node"]: (m.get("proposal", ""), m.get("approved_by", "")) for m in queue}
    found += [_moved(m, *under.get(n, ("", ""))) for n, m in moved.items() if _touched(m)]
    for r in result.get("readiness") or []:
        if r["action"] in ("removed-taint", "added-taint"):
            added = r["action"] == "added-taint"
            found.append(
                Change(
                    target=f"Node {r['node']}", field=f"taint {r['taint']}",
                    before="absent" if added else "present",
                    after="added" if added else "removed", how="gated write (taint)",
                    proposal="", approved_by=f"policy (NodeReadinessPolicy {r['policy']})",
                    when="done",
                )
            )  # fmt: skip
    found += _fleet_changes(result.get("moves") or [])
    for up in (result.get("provisioning") or {}).get("scale_ups") or []:
        if up.get("applied") is not None and up["applied"] != up["replicas_from"]:
            found.append(
                Change(
                    target=f"MachineDeployment {up['pool']}", field="replicas",
                    before=str(up["replicas_from"]), after=str(up["applied"]),
                    how="gated write (scale), for pods no node could hold",
                    proposal=up["proposal"], approved_by=up.get("approved_by") or "",
                    when="done",
                )
            )  # fmt: skip
    return found


def _fleet_changes(moves: list[Mapping[str, Any]]) -> list[Change]:
    """The scales a fleet run made: each side of a move, told by the run that scaled it."""
    found: list[Change] = []
    for move in moves:
        workload = move["workload"].split("/", 1)[1]
        sides = [(move["target"], *(move.get("target_replicas") or ["?", "?"]),
                  move.get("target_proposal", "")),
                 (move["source"], move["replicas"], move["replicas"] - move["moving"],
                  move["proposal"])]  # fmt: skip
        found += [
            Change(
                target=f"Deployment {workload} in cluster {cluster}", field="replicas",
                before=str(before), after=str(after),
                how=f"{(move.get('ways') or {}).get(cluster, 'gated write (scale)')}, a fleet move",
                proposal=proposal, approved_by="", when="done",
            )
            for cluster, before, after, proposal in sides
            if any(step.startswith(f"cluster {cluster}: ") for step in move.get("steps", []))
        ]  # fmt: skip
    return found


def change_line(change: Change) -> str:
    """One change, whole: target, from -> to, how, proposal, approver, when."""
    under = f", proposal {change['proposal']}" if change["proposal"] else ""
    approved = f"; approved by {change['approved_by']}" if change["approved_by"] else ""
    return (
        f"{change['target']}: {change['field']} {change['before']} -> {change['after']} by "
        f"{change['how']}{under}{approved}; {change['when']}"
    )


def _change(workload: str, field: str, before: Any, after: Any, done: Mapping[str, Any]) -> Change:
    kind, namespace, name = workload.split("/", 2)
    return Change(
        target=f"{kind} {namespace}/{name}", field=field, before=str(before), after=str(after),
        how=str(done.get("how") or ""), proposal=str(done.get("proposal") or ""),
        approved_by=str(done.get("approved_by") or ""), when="done",
    )  # fmt: skip


def _touched(moved: Migration) -> bool:
    return bool(moved["evicted"]) or any(s.startswith("cordoned ") for s in moved["steps"])


def _moved(moved: Migration, proposal: str, approved_by: str) -> Change:
    return Change(
        target=f"Node {moved['node']}", field="scheduling and pods",
        before="schedulable",
        after=f"cordoned, {len(moved['evicted'])} pod(s) evicted ({moved['status']})",
        how="gated writes (cordon, drain)", proposal=moved["proposal"] or proposal,
        approved_by=approved_by, when="done",
    )  # fmt: skip
