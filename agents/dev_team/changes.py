"""How the Dev Team's tasks change a workload: decided by policy, carried by one pull request.

Deploying, right-sizing, hardening and adopting a drift all end the same way: ask the policy
store (the loop's `decide_proposal`), open the pull request or find the one an earlier ask
opened (`open_pr`), merge it once policy approved (`merge`), then sync and validate (the loop's own
`sync_change` and `validate`). A key (the branch name, carried in the proposal's rationale) ties the
three together, so asking again while a person decides reuses the proposal and the PR instead of
opening new ones.
"""

from __future__ import annotations

from typing import Any

from agents.dev_team.state import TargetRef
from agents.runtime.loop.mutation import Refused, find_pr
from agents.runtime.toolbox import Toolbox


def by_pr(ref: TargetRef, action: str) -> dict[str, Any]:
    """The `propose` arguments naming a change of `ref` carried by a pull request."""
    target = f"{ref['kind'].lower()}/{ref['name']}"
    return {"action": action, "target": target, "namespace": ref["namespace"], "risk": "low",
            "via": "pull-request"}  # fmt: skip


async def open_pr(toolbox: Toolbox, *, key: str, **change: Any) -> int:
    """The PR on branch `key`: the one already open (or merged), else a new one from `change`
    (`propose_change`'s arguments). A PR someone closed is a refusal, not reopened."""
    existing = await find_pr(toolbox, key)
    if existing is not None:
        if existing["state"] == "closed":
            raise Refused(f"PR #{existing['number']} on branch {key} was closed by someone")
        return int(existing["number"])
    opened = await toolbox.call("propose_change", branch=key, **change)
    return int(opened["number"])


async def merge(toolbox: Toolbox, number: int, proposal: str, *, agent: str) -> list[str]:
    """Merge PR `number` under the approved `proposal`: reviewed in the agent's name (saying
    why) unless a person approved it already. Notes of what happened."""
    detail = await toolbox.call("get_pr", number=number)
    if detail["pr"].get("state") == "merged":
        return [f"PR #{number} was already merged"]
    if not detail.get("approved"):
        await toolbox.call(
            "review_pr",
            number=number,
            verdict="approve",
            author=agent,
            body=f"Merged automatically: policy approved it (proposal {proposal}).",
        )
    await toolbox.call("merge_pr", number=number)
    return [f"merged PR #{number}"]
