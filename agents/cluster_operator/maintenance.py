"""Planned maintenance, batched per node and run inside the maintenance window (the
`plan-maintenance` skill as tool calls).

A reason ("kernel upgrade", "firmware update", a GPU fault) is queued against a node in the
agent's store, so the queue outlives conversations and processes; reasons for one node share one
entry, so the node is disrupted once for all of them. Each patrol takes the queue in order:

- the window: `evaluate_action` (drain the node, at the cluster's time, `clock.cluster_now`)
  says whether a ChangePolicy maintenance window defers it and when it opens; outside it the
  entry waits, untouched, and the patrol says when it may start;
- the blast radius in nodes: at most `NODES_AT_ONCE` nodes are out for maintenance at once (a
  node is out from its cordon until someone uncordons it after the work); the next waits;
- then the node moves as any other (`migration.move_off`: cordon, plan, the eviction intent naming
  every reason, PDB-respecting evictions within the hourly eviction limit, training Jobs kept
  unless policy allows, validation). Drained, the entry stays `out` until the node is uncordoned
  (the work is done), then leaves the queue. A node moved says under which proposal and who
  approved its drain (`approved_by`: the policy store by policy, or the person who granted
  it): the eviction intent's, or, when no pod had to be evicted, the one that queued it (a
  consolidation's, named in its reason).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Literal, TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import pools
from agents.cluster_operator.capacity import approver
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.migration import Migration, move_off
from agents.runtime.toolbox import Toolbox

SPACE = ("cluster_operator", "maintenance")
NODES_AT_ONCE = 1
QUEUED_BY = re.compile(r"\((p-[0-9a-z]+)\)")  # the proposal a reason names: "consolidation (p-1)"
Status = Literal["queued", "waiting-for-window", "waiting-for-node", "moving", "out", "done"]


class Entry(TypedDict):
    node: str
    reasons: list[str]
    queued_at: str  # ISO, the agent's clock: orders the queue
    state: Literal["queued", "moving", "out"]


class Maintenance(TypedDict):
    node: str
    reasons: list[str]
    status: Status
    opens_at: str  # when the window opens, for waiting-for-window
    migration: Migration | None
    proposal: str  # the proposal its drain ran under ("" when none ran)
    approved_by: str  # who approved that proposal ("" when none ran, or none was approved)
    steps: list[str]


async def queue(store: BaseStore, node: str, reason: str, *, at: datetime) -> Entry:
    """Add a reason to the node's entry (one entry per node; a reason given twice counts once)."""
    kept = await store.aget(SPACE, node)
    entry: Entry = (
        Entry(**kept.value)  # type: ignore[typeddict-item]
        if kept is not None
        else Entry(node=node, reasons=[], queued_at=at.isoformat(), state="queued")
    )
    if reason.lower() not in (r.lower() for r in entry["reasons"]):
        entry["reasons"] = [*entry["reasons"], reason]
    await store.aput(SPACE, node, dict(entry))
    return entry


async def entries(store: BaseStore) -> list[Entry]:
    found = await store.asearch(SPACE, limit=1000)
    return sorted(
        (Entry(**item.value) for item in found),  # type: ignore[typeddict-item]
        key=lambda e: (e["queued_at"], e["node"]),
    )


async def reasons_for(store: BaseStore, node: str) -> list[str]:
    kept = await store.aget(SPACE, node)
    return list(kept.value["reasons"]) if kept is not None else []


async def window(toolbox: Toolbox, node: str, pods: int, *, at: datetime) -> str:
    """When the window for draining `node` opens, "" when it is open now."""
    judged = await toolbox.call(
        "evaluate_action", action="drain", target=f"node/{node}", pods=pods, now=at.isoformat()
    )
    opens = judged.get("not_before")
    return str(opens) if opens and datetime.fromisoformat(str(opens)) > at else ""


async def run(
    toolbox: Toolbox, store: BaseStore, *, migrated: Mapping[str, Migration] | None = None
) -> list[Maintenance]:
    """The queue taken as far as the window and the blast radius let it go now. `migrated`:
    the nodes this patrol already moved off for a fault, their queued reasons folded in."""
    done: list[Maintenance] = []
    queued = await entries(store)
    if not queued:
        return done
    at = await cluster_now(toolbox)
    out = [e["node"] for e in queued if e["state"] in ("moving", "out")]
    for entry in queued:
        node, reasons = entry["node"], entry["reasons"]
        said = "; ".join(reasons)
        shown = Maintenance(
            node=node, reasons=reasons, status="queued", opens_at="", migration=None,
            proposal="", approved_by="", steps=[],
        )  # fmt: skip
        fault = (migrated or {}).get(node)
        if fault is not None and entry["state"] != "out":
            state: Literal["moving", "out"] = "out" if fault["status"] == "drained" else "moving"
            await store.aput(SPACE, node, {**entry, "state": state})
            shown["steps"].append(f"{node} moved off for its fault, its maintenance with it")
            done.append({**shown, "status": state, "migration": fault})
            continue
        cordoned = await pools.cordoned(toolbox, node)
        if entry["state"] == "out" and not cordoned:
            await store.adelete(SPACE, node)
            out.remove(node)
            shown["steps"].append(f"node {node} is back in service (uncordoned): done ({said})")
            done.append({**shown, "status": "done"})
            continue
        if entry["state"] == "out":
            shown["steps"].append(f"node {node} is out for its maintenance ({said}): drained")
            done.append({**shown, "status": "out"})
            continue
        plan = await toolbox.call("drain_plan", node=node)
        pods = sum(1 for p in plan["pods"] if p["action"] == "evict")
        opens = await window(toolbox, node, pods, at=at)
        if opens:
            shown["steps"].append(
                f"maintenance of {node} ({said}) waits for its window: it opens at {opens} "
                f"(cluster time now {at.isoformat()}); nothing was touched"
            )
            done.append({**shown, "status": "waiting-for-window", "opens_at": opens})
            continue
        others = [n for n in out if n != node]
        if entry["state"] == "queued" and len(others) >= NODES_AT_ONCE:
            shown["steps"].append(
                f"maintenance of {node} ({said}) waits: {', '.join(others)} already out, and at "
                f"most {NODES_AT_ONCE} node(s) may be out at once"
            )
            done.append({**shown, "status": "waiting-for-node"})
            continue
        moved = await move_off(
            toolbox, store, node, cordoned=cordoned,
            because=f"of its planned maintenance ({said})",
            first=f"node {node} is due for maintenance, inside its window: {said}",
        )  # fmt: skip
        state = "out" if moved["status"] == "drained" else "moving"
        await store.aput(SPACE, node, {**entry, "state": state})
        if node not in out:
            out.append(node)
        queued_by = [m.group(1) for r in reasons if (m := QUEUED_BY.search(r))]
        proposal = moved["proposal"] or next(iter(queued_by), "")
        by = await approver(toolbox, proposal) if proposal else ""
        done.append(
            {**shown, "status": state, "migration": moved, "proposal": proposal,
             "approved_by": by}
        )  # fmt: skip
    return done
