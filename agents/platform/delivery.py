"""Delivering what the Platform rendered: the notice to its owners, then a PR or a gated apply.

Egress NetworkPolicies, audit fixes (a PodDisruptionBudget) and namespace blueprints all go the
same way: a `Change` (one file in the team's repository, and the object its notice is about)
through `pull_request`. Egress alone may also go by the gated `apply` (`directly`).

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

In a fleet the caller hands over the repository that syncs to the object's cluster and names
that cluster in the `Change`, so the notice (`propose` with `cluster`) is decided for it alone;
`directly` serves the one cluster only (a fleet's cluster is changed through git).

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
from core.policy.proposals import APPROVED

LABEL = "kubecrew-platform"
Status = Literal[
    "merged", "applied", "pr-open", "refused", "no-repo", "report-only", "not git-managed"
]


@dataclass
class Delivery:
    status: Status
    proposal: str = ""
    pr: int = 0
    why: str = ""  # when not merged nor applied: the reason in words
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


@dataclass(frozen=True)
class Change:
    """One file the Platform wants in a team repository, and what its notice says.

    `target` (KIND/NAME as the policy store reads it) and `namespace` name the object the
    owners are told about, `cluster` the fleet's context it is in ("": the one cluster), so
    the decision holds there only; `branch` prefixes the PR's branch (the key follows)."""

    path: str
    text: str
    title: str
    target: str
    namespace: str
    rationale: str
    branch: str
    live_object: dict[str, Any] | None = None
    cluster: str = ""


def egress_change(
    want: dict[str, Any], *, policy: str, rationale: str, cluster: str = ""
) -> Change:
    meta = want["metadata"]
    return Change(
        path=manifest_path(want), text=manifest_text(want, policy),
        title=f"Egress policy {policy} for namespace {meta['namespace']}",
        target=f"networkpolicy/{meta['name']}", namespace=meta["namespace"],
        rationale=rationale, branch="platform/egress", live_object=want, cluster=cluster,
    )  # fmt: skip


async def notify(toolbox: Toolbox, change: Change, *, via: str) -> dict[str, Any]:
    """The notice to the owners, and the store's decision on it."""
    extra: dict[str, Any] = {"cluster": change.cluster} if change.cluster else {}
    if change.live_object is not None:
        extra["live_object"] = change.live_object
    return await toolbox.call(
        "propose", action="apply", target=change.target, namespace=change.namespace, via=via,
        rationale=change.rationale, risk="medium", **extra,
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
    toolbox: Toolbox,
    repo: Toolbox,
    want: dict[str, Any],
    *,
    policy: str,
    rationale: str,
    cluster: str = "",
) -> Delivery:
    """The rendered NetworkPolicy by PR; `repo` syncs to `cluster` (the caller chose it so)."""
    change = egress_change(want, policy=policy, rationale=rationale, cluster=cluster)
    return await pull_request(toolbox, repo, change)


async def pull_request(toolbox: Toolbox, repo: Toolbox, change: Change) -> Delivery:
    """Notice, then the PR (reused on a rerun), merged on an approved decision, then synced."""
    record = await notify(toolbox, change, via="pull-request")
    outcome, request, why = _decision(record)
    done = Delivery("refused", proposal=str(record["proposal"]))
    done.steps.append(f"told the owners: proposal {done.proposal} ({outcome or 'undecided'})")
    if outcome not in APPROVED and outcome != "escalated":
        done.why = f"policy did not approve the PR ({outcome}): {why}"
        return done
    path, text = change.path, change.text
    now = await read(repo, path)
    if now != text:
        # Keyed by what git says now and what it should say: a rerun finds its own PR, while
        # a later hand edit in git is a new change with a new PR.
        key = hashlib.sha256(f"{now}\0{text}".encode()).hexdigest()[:12]
        branch = f"{change.branch}-{key}"
        pr = await find_pr(repo, branch)
        if pr is None:
            opened = await repo.call(
                "propose_change", title=change.title, path=path, content=text,
                body=f"{change.rationale}\n\nPolicy: proposal {done.proposal}.", labels=[LABEL],
                branch=branch, approval=request,
            )  # fmt: skip
            pr = {"number": opened["number"], "state": "open"}
            done.steps.append(f"opened PR #{pr['number']} writing {path}")
        done.pr = int(pr["number"])
        if outcome == "escalated":
            return Delivery("pr-open", done.proposal, done.pr, f"PR not merged: {why}", done.steps)
        if pr["state"] == "open":
            await repo.call(
                "review_pr", number=done.pr, verdict="approve",
                body=f"Merged by the Platform: policy approved it (proposal {done.proposal}).",
            )  # fmt: skip
            await repo.call("merge_pr", number=done.pr)
            done.steps.append(f"merged PR #{done.pr} (policy: proposal {done.proposal})")
        elif pr["state"] != "merged":
            done.why = f"PR #{done.pr} is {pr['state']}: someone closed it; reopen or merge it"
            return done
    else:
        done.steps.append(f"{path} already says this in git: syncing it again")
    kind, _, name = change.target.partition("/")
    done.steps += await sync_change(repo, Target(kind=kind, name=name, namespace=change.namespace))
    done.status = "merged"
    return done


async def directly(toolbox: Toolbox, want: dict[str, Any], *, rationale: str) -> Delivery:
    change = Change(
        path="", text="", title="", target=f"networkpolicy/{want['metadata']['name']}",
        namespace=want["metadata"]["namespace"], rationale=rationale, branch="",
        live_object=want,
    )  # fmt: skip
    record = await notify(toolbox, change, via="direct")
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
