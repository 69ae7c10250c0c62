"""How the Dev Team's tasks change a workload: decided by policy, carried by one pull request.

Deploying, right-sizing, hardening and adopting a drift all end the same way: ask the policy
store (the loop's `decide_proposal`), open the pull request or find the one an earlier ask
opened (`open_pr`), merge it once policy approved (`merge`; both are the loop's `mutation`,
shared with agents/runtime/changes), then sync and validate (the loop's own `sync_change` and
`validate`). A key (the branch name, carried in the proposal's rationale) ties the
three together, so asking again while a person decides reuses the proposal and the PR instead of
opening new ones.
"""

from __future__ import annotations

from typing import Any

from agents.dev_team.state import TargetRef
from agents.runtime.loop.mutation import merge, open_pr

__all__ = ["by_pr", "merge", "open_pr"]  # the PR steps are the runtime's, shared with changes/


def by_pr(ref: TargetRef, action: str) -> dict[str, Any]:
    """The `propose` arguments naming a change of `ref` carried by a pull request."""
    target = f"{ref['kind'].lower()}/{ref['name']}"
    return {"action": action, "target": target, "namespace": ref["namespace"], "risk": "low",
            "via": "pull-request"}  # fmt: skip
