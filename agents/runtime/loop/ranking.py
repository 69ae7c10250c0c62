"""Ranking fixes: the server's confidence, moved by what happened to the same fix for the same
fingerprint before, and whether the fix can be applied on this object's channel at all.

Memory holds one `memory.Incident` per attempt (its `fix` and `outcome`: "fixed" or "failed").
A fix that failed here before loses FAILED_WEIGHT per failure, one that held gains HELD_WEIGHT
per success: past outcomes on this very object outweigh the playbook's general confidence, so
the loop does not try first what it saw fail. The reason is kept in words for the answer.

A git-managed object changes by pull request, so a fix of it must be a patch of the object git
defines (it becomes field edits of the manifest); a rollout undo there would only drift from
git until the next sync rolls it forward again. A fix of another object (the claim a workload
waits for) is written directly only when git does not define that object either (`elsewhere`
names those it does). An object not in git changes by the fix's own write-tool steps, each of
which must be in the agent's allow-list; the loop deletes nothing but a claim that never bound
(agents/runtime/loop/direct.py).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from langgraph.store.base import BaseStore

from agents.runtime import memory
from agents.runtime.loop import direct
from agents.runtime.loop.state import RankedFix, Target

FAILED_WEIGHT = 0.5
HELD_WEIGHT = 0.2


async def past_outcomes(
    store: BaseStore | None, agent: str, fingerprint: str
) -> list[memory.Incident]:
    if store is None:
        return []
    items = await store.asearch(
        (agent, "incidents"), filter={"fingerprint": fingerprint}, limit=200
    )
    found = [
        memory.Incident(
            **{k: str(v) for k, v in i.value.items() if k in memory.Incident.__dataclass_fields__}
        )
        for i in items
    ]
    return [i for i in found if i.outcome in ("fixed", "failed") and i.fix]


def rank(
    fixes: list[dict[str, Any]],
    past: list[memory.Incident],
    *,
    target: Target,
    managed: bool,
    tools: Collection[str],
    elsewhere: Collection[str] = (),
) -> list[RankedFix]:
    ranked: list[RankedFix] = []
    for fix in fixes:
        failed = sum(1 for p in past if p.fix == fix["title"] and p.outcome == "failed")
        held = sum(1 for p in past if p.fix == fix["title"] and p.outcome == "fixed")
        confidence = float(fix.get("confidence") or 0)
        score = round(confidence - FAILED_WEIGHT * failed + HELD_WEIGHT * held, 2)
        why = [f"confidence {confidence:.2f}"]
        if failed:
            why.append(
                f"failed {failed} time(s) before for this fingerprint "
                f"(-{FAILED_WEIGHT * failed:.1f})"
            )
        if held:
            why.append(
                f"held {held} time(s) before for this fingerprint (+{HELD_WEIGHT * held:.1f})"
            )
        blocker = _blocker(fix, target=target, managed=managed, tools=tools, elsewhere=elsewhere)
        if blocker:
            why.append(blocker)
        ranked.append(RankedFix(fix=fix, score=score, reason="; ".join(why), usable=not blocker))
    return sorted(ranked, key=lambda r: (not r["usable"], -r["score"]))


def key(ref: dict[str, Any]) -> str:
    """An object as one string: `Kind/namespace/name`."""
    return f"{ref.get('kind', '')}/{ref.get('namespace', '')}/{ref.get('name', '')}"


def _blocker(
    fix: dict[str, Any],
    *,
    target: Target,
    managed: bool,
    tools: Collection[str],
    elsewhere: Collection[str],
) -> str:
    """Why the fix cannot be applied here, or empty."""
    if fix.get("placeholders"):
        return "not applicable: its values are placeholders a person must fill in first"
    own = fix.get("target") == target
    if managed and own:
        if fix.get("patch_type") not in ("strategic", "merge"):
            return (
                "not applicable: the object is managed from git, and this fix is not a "
                "change of its manifest"
            )
        return ""
    if not own and key(fix.get("target") or {}) in elsewhere:
        shown = fix.get("target") or {}
        return (
            f"not applicable: git defines {shown.get('kind')} {shown.get('name')} too, and "
            "this fix would write it behind git's back"
        )
    steps = list(fix.get("steps") or [])
    deletes = direct.loop_may_delete(steps)
    if deletes:
        return deletes
    missing = sorted({s["tool"] for s in steps} - set(tools))
    if missing and set(missing) <= direct.own_tools():
        return (
            f"not applicable here: needs {', '.join(missing)}, which the loop uses only in a heal "
            "run of its own (`kubecrew heal`, the watcher's), never in a conversation"
        )
    if missing:
        return f"not applicable: needs {', '.join(missing)}, outside this agent's allow-list"
    return "" if steps else "not applicable: the fix has no steps"
