"""Enforcement as the cluster has it: does the live NetworkPolicy exist and match the rendering?

Confirmation reads live state only (`get_resource`), never the PR or the sync's answer: a merged
PR that never synced, a sync that skipped an object, or a hand edit after delivery all show up
here as what they are. The verdict names what is wrong, field by field. In a fleet each cluster
is looked at with its own context: only that cluster's live object confirms its namespace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agents.platform.fleet import DEFAULT, at
from agents.platform.rendering import differences
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

State = Literal["matches", "differs", "missing"]


@dataclass(frozen=True)
class Live:
    state: State
    why: list[str]  # the differing fields, or why it is missing


async def look(toolbox: Toolbox, want: dict[str, Any], *, cluster: str = DEFAULT) -> Live:
    """The live NetworkPolicy `want` names, in `cluster` (the default one unless named)."""
    meta = want["metadata"]
    try:
        got = await toolbox.call(
            "get_resource", kind="networkpolicy", name=meta["name"],
            namespace=meta["namespace"], output="fields", fields=["spec"], **at(cluster),
        )  # fmt: skip
    except ToolFailed as exc:
        if "not found" not in exc.reason.lower():
            raise
        return Live("missing", [f"NetworkPolicy {meta['namespace']}/{meta['name']} is missing"])
    found = differences(want["spec"], got.get("spec") or {})
    return Live("differs" if found else "matches", found)
