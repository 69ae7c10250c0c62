"""Delivering one rendered NetworkPolicy: the notice to its owners, then a PR or a gated apply.

The notice and the permission are one record: a `propose` (type apply, the rendered object as
`live_object`) on the policy server. Its stakeholders are the namespace's owners from Ownership,
so the Dev Team agent (and its people) are told what is coming and why, and the store's own
rules (allowed-destinations, direct-patches, approvals) judge the very object delivered.

- Git-managed namespace: the manifest goes to the team's repository (`propose_change`, one file
  per object under `platform/egress/<namespace>/`); only an approved decision lets the Platform
  approve and merge its own PR, then the repository is synced. An escalated decision leaves the
  PR open with the approval request's marker, so an approver's review answers it. A branch
  named for the change (git's text before and after) keys the PR, so a rerun reuses it
  instead of opening a second one.
- Otherwise: the kube server's gated `apply` carrying the approved proposal (force: the Platform
  owns these fields; a hand edit is taken back). A refusal is reported with the gate's words.

Nothing here decides compliance: the caller confirms from live state afterwards.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import find_pr, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.toolbox import Toolbox

AGENT = "platform"
LABEL = "kubecrew-platform"
APPROVED = ("approved", "approved-as-countered")
Status = Literal["merged", "applied", "pr-open", "refused", "no-repo"]


@dataclass
class Delivery:
    status: Status
    proposal: str = ""
    pr: int = 0
    why: str = ""  # for refused, pr-open and no-repo: the reason in words
    steps: list[str] = field(default_factory=list)


def manifest_path(want: dict[str, Any]) -> str:
    meta = want["metadata"]
    return f"platform/egress/{meta['namespace']}/{meta['name']}.yaml"


def manifest_text(want: dict[str, Any], policy: str) -> str:
    head = (
        f"# Rendered by the kubecrew Platform agent from EgressPolicy {policy}.\n"
        "# Change the EgressPolicy, not this file: the Platform puts it back.\n"
    )
    return head + yaml.safe_dump(want, sort_keys=False)


async def notify(
    toolbox: Toolbox, want: dict[str, Any], *, via: str, rationale: str
) -> dict[str, Any]:
    """The notice to the owners, and the store's decision on it."""
    meta = want["metadata"]
    return await toolbox.call(
        "propose", action="apply", target=f"networkpolicy/{meta['name']}",
        namespace=meta["namespace"], via=via, live_object=want, rationale=rationale,
        risk="medium",
    )  # fmt: skip


def _decision(record: dict[str, Any]) -> tuple[str, str, str]:
    """The outcome ("escalated" while a person decides), the approval request id, and why."""
    decision = record.get("decision") or {}
    approval = record.get("approval") or {}
    if approval.get("state") == "pending":
        return "escalated", str(approval["id"]), str(record.get("next", "a person decides"))
    reasons = "; ".join(decision.get("reasons") or []) or str(record.get("next", ""))
    return str(decision.get("outcome", "")), "", reasons


async def by_pull_request(
    toolbox: Toolbox, repo: Toolbox, want: dict[str, Any], *, policy: str, rationale: str
) -> Delivery:
    record = await notify(toolbox, want, via="pull-request", rationale=rationale)
    outcome, request, why = _decision(record)
    done = Delivery("refused", proposal=str(record["proposal"]))
    done.steps.append(f"told the owners: proposal {done.proposal} ({outcome or 'undecided'})")
    if outcome not in APPROVED and outcome != "escalated":
        done.why = f"policy did not approve the PR ({outcome}): {why}"
        return done
    path, text = manifest_path(want), manifest_text(want, policy)
    now = await read(repo, path)
    if now != text:
        # Keyed by what git says now and what it should say: a rerun finds its own PR, while
        # a later hand edit in git is a new change with a new PR.
        key = hashlib.sha256(f"{now}\0{text}".encode()).hexdigest()[:12]
        branch = f"platform/egress-{key}"
        pr = await find_pr(repo, branch)
        if pr is None:
            opened = await repo.call(
                "propose_change", title=f"Egress policy {policy} for namespace "
                f"{want['metadata']['namespace']}", path=path, content=text,
                body=f"{rationale}\n\nPolicy: proposal {done.proposal}.", labels=[LABEL],
                branch=branch, approval=request,
            )  # fmt: skip
            pr = {"number": opened["number"], "state": "open"}
            done.steps.append(f"opened PR #{pr['number']} writing {path}")
        done.pr = int(pr["number"])
        if outcome == "escalated":
            return Delivery("pr-open", done.proposal, done.pr, f"PR not merged: {why}", done.steps)
        if pr["state"] == "open":
            await repo.call(
                "review_pr", number=done.pr, verdict="approve", author=AGENT,
                body=f"Merged by the Platform: policy approved it (proposal {done.proposal}).",
            )  # fmt: skip
            await repo.call("merge_pr", number=done.pr)
            done.steps.append(f"merged PR #{done.pr} (policy: proposal {done.proposal})")
        elif pr["state"] != "merged":
            done.why = f"PR #{done.pr} is {pr['state']}: someone closed it; reopen or merge it"
            return done
    else:
        done.steps.append(f"{path} already says this in git: syncing it again")
    target = Target(kind="NetworkPolicy", name=want["metadata"]["name"], namespace="")
    done.steps += await sync_change(repo, target)
    done.status = "merged"
    return done


async def directly(toolbox: Toolbox, want: dict[str, Any], *, rationale: str) -> Delivery:
    record = await notify(toolbox, want, via="direct", rationale=rationale)
    outcome, _, why = _decision(record)
    done = Delivery("refused", proposal=str(record["proposal"]))
    done.steps.append(f"told the owners: proposal {done.proposal} ({outcome or 'undecided'})")
    if outcome not in APPROVED:
        done.why = f"policy did not approve the apply ({outcome}): {why}"
        return done
    via = ((record.get("decision") or {}).get("action") or {}).get("via", "direct")
    if via != "direct":  # countered: only through a PR, and no repository manages it
        done.why = (
            f"apply refused by policy: it allows this change only via {via} ({why}), and no "
            "GitOps repository manages the namespace: let one manage it, or allow direct changes"
        )
        return done
    try:
        await toolbox.call(
            "apply", manifest=yaml.safe_dump(want, sort_keys=False), force=True,
            proposal=done.proposal,
        )  # fmt: skip
    except ToolFailed as exc:
        done.why = f"apply refused: {exc.reason}"
        return done
    done.steps.append(f"applied it through the gated apply (proposal {done.proposal})")
    done.status = "applied"
    return done


async def read(repo: Toolbox, path: str) -> str:
    """The file's text at the base branch, "" when there is no such file yet."""
    try:
        return str((await repo.call("read_manifest", path=path))["text"])
    except ToolFailed as exc:
        if "no file" in exc.reason.lower():
            return ""
        raise
