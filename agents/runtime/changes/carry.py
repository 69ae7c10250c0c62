"""Carrying out one typed change, the one way every change goes.

1. **Policy**: the policy store judges the change (`propose`; the loop's `decide_proposal`, so
   an escalation becomes an approval request with its approvers, and asking again reuses the
   proposal instead of making a second). Refused or countered: nothing changes, and the answer
   says why (a counter-offer is never carried out in place of what was asked).
2. **Where it is written**: when git defines the object (the gitops server's `find_manifest`)
   and the change has a manifest form, a pull request with exactly those field edits, merged
   under the approved proposal, then synced after a dry run. Otherwise a server-side **dry
   run** of the kube server's write tool (its diff and the gate's verdict), then the gated
   write itself, carrying the proposal, judged again and audited by the kube server.
3. **Validation** that fits the change: a rollout complete and soaked, the replicas available,
   the fields read back, the node (un)schedulable or drained, the object gone, a new object
   there as written, a Service routing to ready pods, a new workload's pods up.
4. **Rollback** when validation fails: the revision before the change, the replica count
   before it, a revert pull request, the object a change made deleted again, or the one it
   replaced applied back; the answer says what was put back.

Must not know: any agent or grammar. Tools are called by name through the agent's `Toolbox`,
so the allow-list and the servers' gates hold whoever planned the change.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from agents.runtime.changes.checks import target_of, validated
from agents.runtime.changes.ops import (
    ROLLED,
    Change,
    ConfigData,
    Manifested,
    Scale,
)
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import (
    NeedsApproval,
    Refused,
    decide_proposal,
    managed_manifest,
    merge,
    open_pr,
    refusal,
    sync_change,
)
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Toolbox

Outcome = Literal["done", "undone", "refused", "waiting", "failed"]


@dataclass
class Carried:
    outcome: Outcome
    summary: str  # one paragraph for the person: what changed (or not) and why
    steps: list[str] = field(default_factory=list)  # what happened, in order
    proposal: str = ""
    request: str = ""  # the approval request a person answers, when waiting
    asked: str = ""  # who may answer it
    pr: int = 0
    diff: str = ""

    def report(self, change: Change) -> dict[str, Any]:
        return {
            "change": change.model_dump(mode="json"),
            "outcome": self.outcome,
            "steps": self.steps,
            "proposal": self.proposal,
            "approval": self.request,
            "approvers": self.asked,
            "pr": self.pr,
            "diff": self.diff,
        }


async def carry_out(
    toolbox: Toolbox, change: Change, *, agent: str, settings: LoopSettings, why: str
) -> Carried:
    """`change`, through policy, a dry run, a PR or a gated write, validation and rollback."""
    if beyond(toolbox, change):
        said = f"Not done: {change.describe()}: {beyond(toolbox, change)}."
        return Carried("refused", said, [said])
    live = await _live(toolbox, change)
    key = _key(change, live)
    steps = [f"asked: {change.describe()}"]
    if not toolbox.has("propose"):  # no policy store here: the kube server's gate judges alone
        steps.append("no policy store configured: the kube server's gate judges the write")
        return await _written(toolbox, change, live, "", key, steps, agent, settings)
    try:
        proposal = await decide_proposal(
            toolbox,
            key=key,
            agent=agent,
            what=change.describe(),
            rationale=f"{change.describe()}: {why} [{key}]"[:2000],
            risk="high" if change.destructive else "low",
            **change.proposal(live),
        )
    except NeedsApproval as exc:
        asked = await _approvers(toolbox, exc.request)
        return Carried(
            "waiting",
            f"Not done yet: policy gives {change.describe()} to a person. Approval request "
            f"{exc.request} (proposal {exc.proposal}) waits for {asked or 'its approvers'}; "
            f"nothing changed. Once it is granted, ask again and I carry it out under it.",
            [*steps, f"policy store: {exc.message}"],
            proposal=exc.proposal,
            request=exc.request,
            asked=asked,
        )
    except Refused as exc:
        return Carried(
            "refused", f"Not done: {exc.message}. Nothing changed.", [*steps, exc.message]
        )
    steps.append(f"policy store approved it (proposal {proposal})")
    return await _written(toolbox, change, live, proposal, key, steps, agent, settings)


async def _written(
    toolbox: Toolbox,
    change: Change,
    live: dict[str, Any],
    proposal: str,
    key: str,
    steps: list[str],
    agent: str,
    settings: LoopSettings,
) -> Carried:
    manifest = await _manifest(toolbox, change, live)
    edits = change.edits(live) if manifest else []
    try:
        if edits:
            return await _by_pr(toolbox, change, (manifest, edits), proposal, key, steps, agent,
                                settings)  # fmt: skip
        return await _direct(toolbox, change, live, proposal, steps, settings)
    except Refused as exc:  # a PR someone closed
        return Carried("refused", f"Not done: {exc.message}.", [*steps, exc.message],
                       proposal=proposal)  # fmt: skip
    except ToolFailed as exc:
        return Carried(
            "refused" if refusal(exc.reason) else "failed",
            f"Not done: {change.describe()} failed: {exc.reason}",
            [*steps, f"refused: {exc.reason}"],
            proposal=proposal,
        )


def beyond(toolbox: Toolbox, change: Change) -> str:
    """Why this agent cannot make `change` at all (its write tool is not in the agent's
    allow-list); "" when it can. Asked before anything else, so nothing is asked back or
    proposed for a change that could never be made."""
    return "" if toolbox.has(change.tool) else f"this agent has no {change.tool} tool"


async def _direct(
    toolbox: Toolbox,
    change: Change,
    live: dict[str, Any],
    proposal: str,
    steps: list[str],
    settings: LoopSettings,
) -> Carried:
    tool, arguments = change.write()
    carrying = {"proposal": proposal} if proposal and change.carries_proposal else {}
    preview = await toolbox.call(tool, **arguments, dry_run=True, **carrying)
    diff = str(preview.get("diff") or "")
    verdict = (preview.get("policy") or {}).get("verdict", "")
    steps.append(f"dry run of {tool}: " + (f"gate says {verdict}" if verdict else "accepted"))
    if verdict.startswith("refused") or verdict in ("deny", "denied"):
        why = str((preview.get("policy") or {}).get("refused") or verdict)
        return Carried("refused", f"Not done: the kube server's policy gate refuses it: {why}",
                       [*steps, why], proposal=proposal, diff=diff)  # fmt: skip
    await toolbox.call(tool, **arguments, **carrying)
    steps.append(f"{tool} applied (gated and audited by the kube server)")
    try:
        held, evidence = await validated(toolbox, change, settings)
    except ToolFailed as exc:  # written, but not seen to hold: say exactly that
        steps.append(f"validation could not read: {exc.reason}")
        said = f"{change.describe().capitalize()} was written, but I could not validate it"
        return Carried("failed", f"{said}: {exc.reason}", steps, proposal=proposal, diff=diff)
    steps += evidence
    if held:
        return Carried("done", f"Done: {change.describe()}. " + "; ".join(evidence[-2:]) + ".",
                       steps, proposal=proposal, diff=diff)  # fmt: skip
    undone = await _undo(toolbox, change, live)
    steps.append(undone)
    return Carried(
        "undone",
        f"{change.describe().capitalize()} did not hold ({evidence[-1]}), so I put it back: "
        f"{undone}.",
        steps,
        proposal=proposal,
        diff=diff,
    )


async def _by_pr(
    toolbox: Toolbox,
    change: Change,
    edits: tuple[dict[str, Any], list[dict[str, Any]]],
    proposal: str,
    key: str,
    steps: list[str],
    agent: str,
    settings: LoopSettings,
) -> Carried:
    target, (manifest, fields) = change.target, edits
    number = await open_pr(
        toolbox,
        key=key,
        title=change.describe()[:200],
        path=manifest["file"],
        kind=target.kind,
        name=target.name,
        edits=fields,
        body=f"{change.describe()}.\n\nPolicy: proposal {proposal}. Opened by kubecrew; "
        "it validates the change after sync and reverts it if it does not hold.",
    )
    steps.append(f"git defines it ({manifest['file']}): PR #{number} on branch {key}")
    steps += await merge(toolbox, number, proposal, agent=agent)
    steps += await sync_change(toolbox, target_of(change))
    held, evidence = await validated(toolbox, change, settings)
    steps += evidence
    if held:
        return Carried("done", f"Done by PR #{number}: {change.describe()}. {evidence[-1]}.",
                       steps, proposal=proposal, pr=number)  # fmt: skip
    reverted = await toolbox.call("revert_pr", number=number)
    back = int(reverted["number"])
    why = f"Validation of #{number} failed: the {agent} agent reverts it."
    await toolbox.call("review_pr", number=back, verdict="approve", body=why)
    await toolbox.call("merge_pr", number=back)
    steps += await sync_change(toolbox, target_of(change))
    steps.append(f"reverted PR #{number} by PR #{back}")
    return Carried(
        "undone",
        f"{change.describe().capitalize()} did not hold ({evidence[-1]}): PR #{number} was "
        f"reverted by PR #{back}.",
        steps,
        proposal=proposal,
        pr=number,
    )


async def _undo(toolbox: Toolbox, change: Change, live: dict[str, Any]) -> str:
    """Put back what the change replaced, as it was read before it: the replica count, the
    revision before, the object a change made deleted again, or the one it replaced applied."""
    target = change.target
    if isinstance(change, Scale) and isinstance(live.get("spec.replicas"), int):
        replicas = int(live["spec.replicas"])
        await toolbox.call("scale", kind=target.kind.lower(), name=target.name,
                           namespace=target.namespace, replicas=replicas)  # fmt: skip
        return f"scaled {target} back to {replicas}"
    revision = str(live.get("revision") or "")
    if target.kind == "Deployment" and revision and change.check == "rollout":
        await toolbox.call("rollout_undo", name=target.name, namespace=target.namespace,
                           to_revision=int(revision))  # fmt: skip
        return f"rolled {target} back to revision {revision}"
    if isinstance(change, Manifested | ConfigData) and not live.get("exists", True):
        return await _unmade(toolbox, change)
    before = live.get("before")
    if isinstance(before, dict) and toolbox.has("apply"):
        await toolbox.call("apply", manifest=yaml.safe_dump(before), force=True,
                           namespace=target.namespace or None)  # fmt: skip
        return f"applied {target} back as it was before"
    return "nothing could be put back automatically (no earlier state kept): look at it by hand"


async def _unmade(toolbox: Toolbox, change: Change) -> str:
    """Delete what a change created (the objects it applied that did not exist before)."""
    if not toolbox.has("delete"):
        return f"{change.target} stays: this agent has no delete tool to take it back"
    made: list[dict[str, Any]] = (
        change.manifests()
        if isinstance(change, Manifested)
        else [{"kind": change.target.kind, "metadata": {"name": change.target.name}}]
    )
    gone = []
    for each in reversed(made):
        kind, name = str(each["kind"]), str(each["metadata"]["name"])
        namespace = str(each["metadata"].get("namespace") or change.target.namespace)
        scoped = (
            {"namespace": None, "confirm": f"{kind.lower()}/{name}"}
            if kind == "Namespace"
            else {"namespace": namespace}
        )
        await toolbox.call("delete", kind=kind.lower(), name=name, **scoped)
        gone.append(f"{kind} {name}")
    return f"deleted what it made ({', '.join(gone)})"


_KEPT = ("spec", "data", "metadata.labels", "metadata.annotations", "subjects", "roleRef",
         "rules")  # fmt: skip


async def _live(toolbox: Toolbox, change: Change) -> dict[str, Any]:
    """What the change starts from: replicas and generation, a Deployment's revision, a node's
    schedulability, and for an object a change replaces whole, the object itself (`before`);
    `exists` False when a change makes it new."""
    target = change.target
    fields = ["spec.replicas", "metadata.generation", "metadata.resourceVersion",
              "spec.template.spec.containers"]  # fmt: skip
    if target.kind == "Node":
        fields = ["spec.unschedulable", "spec.taints", "metadata.resourceVersion"]
    elif target.kind not in ROLLED and target.kind not in ("Pod", "Job", "CronJob"):
        fields = ["metadata.resourceVersion", *_KEPT]
    try:
        live = dict(await toolbox.call(
            "get_resource", kind=target.kind.lower(), name=target.name,
            namespace=target.namespace or None, output="fields", fields=fields,
        ))  # fmt: skip
    except ToolFailed as exc:
        makes = isinstance(change, Manifested) or (isinstance(change, ConfigData) and change.create)
        if makes and "not found" in exc.reason.lower():
            return {"exists": False}
        raise Refused(f"{target}: {exc.reason}") from exc
    if target.kind == "Deployment":
        status = await toolbox.call("rollout_status", name=target.name, namespace=target.namespace)
        live["revision"] = status.get("revision") or ""
    if isinstance(change, Manifested):
        live["before"] = _object(change, live)
    return live


def _object(change: Manifested, live: dict[str, Any]) -> dict[str, Any]:
    """The live object as a manifest to apply back (what a whole-object change replaces)."""
    first = change.manifests()[0]
    meta = {"name": change.target.name, **({"namespace": change.target.namespace}
                                            if change.target.namespace else {})}  # fmt: skip
    if live.get("metadata.labels"):
        meta["labels"] = live["metadata.labels"]
    kept = {k: live[k] for k in ("spec", "data", "subjects", "roleRef", "rules")
            if live.get(k) is not None}  # fmt: skip
    return {"apiVersion": first["apiVersion"], "kind": first["kind"], "metadata": meta, **kept}


async def _manifest(toolbox: Toolbox, change: Change, live: dict[str, Any]) -> dict[str, Any]:
    """The manifest in git that defines the object, when there is one (never for a node, a
    pod, or an object the change makes new)."""
    if change.target.kind in ("Node", "Pod", "Namespace") or not live.get("exists", True):
        return {}
    return await managed_manifest(toolbox, target_of(change))


async def _approvers(toolbox: Toolbox, request: str) -> str:
    if not toolbox.has("list_approvals"):
        return ""
    listed = await toolbox.call("list_approvals", state="pending")
    for entry in listed.get("approvals") or []:
        if entry.get("id") == request:
            return str(entry.get("approvers") or entry.get("asked") or "")
    return ""


def _key(change: Change, live: dict[str, Any]) -> str:
    """The change and the object's version it starts from: asking again before anything
    changed finds the same proposal and PR; asking after it changed is a new change."""
    said = json.dumps(change.model_dump(mode="json"), sort_keys=True)
    since = str(live.get("metadata.resourceVersion") or live.get("metadata.generation") or "")
    digest = hashlib.sha256(f"{said}@{since}".encode()).hexdigest()[:10]
    return f"kubecrew-change-{change.op}-{change.target.name}-{digest}"[:63]
