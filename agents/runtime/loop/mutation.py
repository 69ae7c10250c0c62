"""Carrying out one fix, and undoing it: through GitOps for a git-managed object, through the
kube server's gated write tools otherwise. Idempotent by key, so a run that crashed halfway
finishes the same mutation instead of starting a second one.

GitOps: the policy store is asked first (`propose` with via=pull-request: the decision and its
evaluation land in the audit log); only an approved decision lets the loop approve and merge
its own pull request, and the review says which proposal allowed it. An escalated decision is
a person's call (`NeedsApproval`: the graph waits durably for the request to end). The
proposal's rationale carries the idempotency key, so a run that crashed after proposing and
before its checkpoint finds its own proposal (`find_proposal`) instead of making a second. The fix's
patch becomes field edits of the manifest (`edits_of`), so the PR changes exactly those fields
and keeps comments. The PR's branch is the idempotency key: on resume an existing PR with that
head is reused (reviewed only if not yet approved), a merged one is not merged again, and the
real sync runs only when its dry run still shows the object changing.

Direct: before anything changes, each step is judged by the kube gate on a dry run
(`judge_direct`, agents/runtime/loop/direct.py); a step the gate gives to a person is proposed,
so the approval request exists and `NeedsApproval` names it (the graph waits for it, then
judges again: the approved proposal carries that step). Then the steps go to the kube server,
whose gate judges each again and audits it; a refusal is a `Refused` with the gate's words. A
delete is made only of a claim that never bound (read just before), and a step on the object
it deleted waits until it is gone and is dry-run first. The revision before the change is noted
(a Deployment the fix changes), or the fields a merge patch changes (a Service), so undo
returns exactly there.

Each write it is about to make is reported as progress (`agents.runtime.progress`: "merging: PR
#3", "syncing: ...", "applying: step 1 of 2 ..."), so whoever watches sees which one it is at.
"""

from __future__ import annotations

from typing import Any

from agents.runtime.errors import AgentError, ToolFailed
from agents.runtime.loop import direct
from agents.runtime.loop.state import Applied, Pending, Target
from agents.runtime.loop.validation import LoopSettings, Verdict, until
from agents.runtime.progress import Progress, report
from agents.runtime.toolbox import Toolbox

LABEL = "kubecrew-heal"
RECENT = 500  # proposals looked through for a crashed run's own (the policy server's page limit)


class Refused(AgentError):
    """Policy (or a server's gate) would not let the fix through; the message says why."""


class NeedsApproval(AgentError):
    """The policy store asked a person: `request` is the approval request's id."""

    def __init__(self, message: str, *, proposal: str, request: str) -> None:
        super().__init__(message)
        self.proposal, self.request = proposal, request


def edits_of(patch: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    """A strategic or merge patch as manifest field edits: lists of named items (containers)
    are merged by name, as the API server merges them; None deletes a field."""
    edits: list[dict[str, Any]] = []
    for key, value in patch.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            edits.extend(edits_of(value, path))
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, dict) and "name" in v for v in value)
        ):
            for item in value:
                rest = {k: v for k, v in item.items() if k != "name"}
                edits.extend(edits_of(rest, f"{path}[name={item['name']}]"))
        elif value is None:
            edits.append({"path": path, "delete": True})
        else:
            edits.append({"path": path, "value": value})
    return edits


def action_target(target: Target) -> str:
    return f"{target['kind'].lower()}/{target['name']}"


async def decide(
    toolbox: Toolbox, target: Target, fix: dict[str, Any], *, key: str, agent: str
) -> str:
    """The approved proposal's id for this fix, or Refused / NeedsApproval."""
    return await decide_proposal(
        toolbox,
        key=key,
        agent=agent,
        what=repr(fix["title"]),
        action="patch",
        target=action_target(target),
        namespace=target["namespace"],
        via="pull-request",
        rationale=f"heal {target['kind']} {target['name']}: {fix['title']} "
        f"({fix['expected_effect']}) [{key}]",
        risk=fix.get("risk") or "low",
    )


async def decide_proposal(
    toolbox: Toolbox, *, key: str, agent: str, what: str = "it", **proposal: Any
) -> str:
    """The approved proposal's id, or NeedsApproval (a person decides) / Refused. The proposal
    made under `key` before (a crashed run's, an earlier ask's) answers instead of a new one,
    so asking again never proposes twice."""
    decided = await find_proposal(toolbox, key, agent=agent)
    if decided is None:
        decided = await toolbox.call("propose", **proposal)
    decision = decided.get("decision") or {}
    approval = decided.get("approval") or {}
    if approval.get("state") == "pending":
        raise NeedsApproval(
            decided.get("next") or "a person decides",
            proposal=str(decided["proposal"]),
            request=str(approval["id"]),
        )
    if approval.get("state") == "granted" or decision.get("outcome") == "approved":
        return str(decided["proposal"])
    reasons = "; ".join(decision.get("reasons") or []) or str(
        decided.get("next") or approval.get("state") or ""
    )
    raise Refused(
        f"policy did not approve {what} ({decision.get('outcome') or 'undecided'}): {reasons}"
    )


async def find_proposal(toolbox: Toolbox, key: str, *, agent: str) -> dict[str, Any] | None:
    """This agent's decided or escalated proposal whose rationale names `key`, newest first."""
    listed = await toolbox.call("list_proposals", limit=RECENT)
    if listed.get("total", 0) > RECENT:  # oldest first: the latest page holds this run's
        listed = await toolbox.call("list_proposals", limit=RECENT, offset=listed["total"] - RECENT)
    mine = [
        p
        for p in reversed(listed.get("proposals", []))
        if p.get("proposer") == f"agent {agent}" and p.get("state") != "open"
    ]
    for candidate in mine:
        shown = await toolbox.call("get_proposal", proposal_id=candidate["id"])
        if f"[{key}]" in str(shown.get("rationale", "")):
            return shown
    return None


async def apply_gitops(
    toolbox: Toolbox, pending: Pending, target: Target, managed: dict[str, Any], *, agent: str
) -> Applied:
    key, fix, proposal = pending["key"], pending["fix"], pending["proposal"]
    notes: list[str] = []
    pr = await find_pr(toolbox, key)
    if pr is None:
        opened = await toolbox.call(
            "propose_change",
            title=f"Heal {target['kind']} {target['name']}: {fix['title']}"[:200],
            path=managed["file"],
            kind=target["kind"],
            name=target["name"],
            edits=edits_of(fix["patch"]),
            body=_body(fix, proposal),
            labels=[LABEL],
            branch=key,
        )
        pr = {"number": opened["number"], "state": "open", "approved": False}
        notes.append(f"opened PR #{pr['number']} on branch {key}")
    else:
        notes.append(f"PR #{pr['number']} on branch {key} already existed ({pr['state']}): reused")
    number = int(pr["number"])
    if pr["state"] == "open":
        report(Progress("merging", f"PR #{number} (policy: proposal {proposal})"))
        if not pr.get("approved"):
            await toolbox.call(
                "review_pr",
                number=number,
                verdict="approve",
                body=f"Merged automatically by the {agent} agent: policy approved it (proposal "
                f"{proposal}, via pull request).",
            )
        await toolbox.call("merge_pr", number=number)
        notes.append(f"merged PR #{number} (policy: proposal {proposal})")
    elif pr["state"] != "merged":
        raise Refused(f"PR #{number} on branch {key} is {pr['state']}; it was closed by someone")
    detail = await toolbox.call("get_pr", number=number)
    notes.extend(await sync_change(toolbox, target))
    return Applied(
        channel="gitops",
        key=key,
        pr=number,
        merge_commit=str(detail["pr"].get("merge_commit") or ""),
        proposal=proposal,
        revision="",
        notes=notes,
    )


async def sync_change(toolbox: Toolbox, target: Target) -> list[str]:
    """Sync after a dry run that shows what changes; nothing to change means already synced."""
    shown = f"{target['kind']} {target['name']}"
    report(Progress("syncing", f"{shown} from git, after a dry run"))
    planned = await toolbox.call("sync", dry_run=True)
    if "deferred_to" in planned:
        report(Progress("syncing", f"deferred to {planned['deferred_to']}: waiting up to 120 s"))
        done = await toolbox.call("sync", dry_run=False, wait_seconds=120)
        return [f"sync deferred to {done['deferred_to']}: synced={done.get('synced')}"]
    changing = [o for o in planned.get("objects", []) if o.get("action") not in ("unchanged",)]
    if not planned.get("ok"):
        raise Refused(f"sync dry run failed: {planned.get('summary')}; {planned.get('notes')}")
    if not changing:
        return [
            f"sync dry run at {str(planned.get('commit'))[:12]}: nothing to change (already synced)"
        ]
    done = await toolbox.call("sync", dry_run=False)
    if not done.get("ok"):
        raise Refused(f"sync failed: {done.get('summary')}")
    what = ", ".join(f"{o['kind']} {o['name']} {o['action']}" for o in changing)
    return [f"synced {str(done.get('commit'))[:12]} after a dry run ({what})"]


async def find_pr(toolbox: Toolbox, branch: str) -> dict[str, Any] | None:
    listed = await toolbox.call("list_prs", state="all", limit=100)
    return next((p for p in listed.get("prs", []) if p.get("head") == branch), None)


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
    report(Progress("merging", f"PR #{number} (policy: proposal {proposal})"))
    if not detail.get("approved"):
        await toolbox.call(
            "review_pr",
            number=number,
            verdict="approve",
            body=f"Merged automatically by the {agent} agent: policy approved it (proposal "
            f"{proposal}).",
        )
    await toolbox.call("merge_pr", number=number)
    return [f"merged PR #{number}"]


async def managed_manifest(toolbox: Toolbox, target: Target) -> dict[str, Any]:
    """Where git defines `target` (the gitops server's `find_manifest`, a rendered file not
    counting); {} when nothing does or no repository is configured."""
    if not toolbox.has("find_manifest"):
        return {}
    found = await toolbox.call(
        "find_manifest", kind=target["kind"], name=target["name"], namespace=target["namespace"]
    )
    hits = [h for h in found.get("found", []) if "rendered_by" not in h]
    return dict(hits[0]) if hits else {}


def refusal(reason: str) -> bool:
    """Whether a write tool's error says a gate or policy refused it (not that it broke)."""
    said = reason.lower()
    return any(word in said for word in ("permission", "refused", "polic"))


async def judge_direct(
    toolbox: Toolbox, pending: Pending, target: Target, *, agent: str
) -> Pending:
    """`pending` with an approved proposal for each step the kube gate gives to a person (the
    step proposed through the policy store, keyed per step, so asking again finds the same
    proposal); NeedsApproval while one waits for its approval, Refused when a step may not go
    as it is (a rejection, a counter-offer, a closed window, a failing dry run)."""
    fix, carried = pending["fix"], dict(pending.get("proposals") or {})
    steps: list[dict[str, Any]] = list(fix["steps"])
    for index, step in enumerate(steps):
        if str(index) in carried:
            continue
        verdict, refused = await direct.verdict(toolbox, steps, index)
        if not refused:
            continue
        if verdict not in direct.TO_A_PERSON or not toolbox.has("propose"):
            if index == 0 and not direct.deferred(steps, index):
                continue  # made for real, the gate refuses it and audits that; nothing else ran
            raise Refused(refused)  # before a later step's refusal, none is made at all
        shown = direct.step_object(step)
        carried[str(index)] = await decide_proposal(
            toolbox,
            key=f"{pending['key']}#{index}",
            agent=agent,
            what=f"{step['tool']} of {shown['kind']} {shown['name']}",
            action=direct.ACTIONS.get(step["tool"], "patch"),
            target=f"{shown['kind'].lower()}/{shown['name']}",
            namespace=shown["namespace"],
            via="direct",
            rationale=f"heal {target['kind']} {target['name']}: {fix['title']}, step "
            f"{index + 1} of {len(steps)} ({step['tool']} {shown['kind']} {shown['name']}) "
            f"[{pending['key']}#{index}]",
            risk=fix.get("risk") or "low",
            **direct.replicas(step),
        )
    return Pending(**{**pending, "proposals": carried})


async def apply_direct(
    toolbox: Toolbox, pending: Pending, target: Target, *, settings: LoopSettings | None = None
) -> Applied:
    fix, carried = pending["fix"], pending.get("proposals") or {}
    steps: list[dict[str, Any]] = list(fix["steps"])
    before = ""
    if target["kind"] == "Deployment" and any(direct.step_object(s) == target for s in steps):
        status = await toolbox.call(
            "rollout_status", name=target["name"], namespace=target["namespace"]
        )
        before = str(status.get("revision") or "")
    notes: list[str] = []
    restore: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        proposal = carried.get(str(index), "")
        shown = direct.step_object(step)
        doing = f"step {index + 1} of {len(steps)}: {step['tool']} {shown['kind']} {shown['name']}"
        report(Progress("applying", doing))
        try:
            if step["tool"] == "delete":
                notes.append(await direct.deletable(toolbox, step))
            if direct.deferred(steps, index):
                notes.append(await _gone(toolbox, shown, settings or LoopSettings()))
                notes.append(
                    f"dry run of {step['tool']}: {await direct.dry_run(toolbox, step, proposal)}"
                )
        except direct.Rejected as exc:
            raise Refused(exc.message) from exc
        restore += await direct.restoring(toolbox, step)
        extra = {"proposal": proposal} if proposal else {}
        try:
            await toolbox.call(step["tool"], **step["arguments"], **extra)
        except ToolFailed as exc:
            if refusal(exc.reason):
                raise Refused(exc.reason) from exc
            raise
        under = f" under proposal {proposal}" if proposal else ""
        notes.append(
            f"called {step['tool']} on {shown['kind']} {shown['name']}{under} (gated and "
            "audited by the kube server)"
        )
    return Applied(
        channel="direct",
        key=pending["key"],
        pr=0,
        merge_commit="",
        proposal=pending["proposal"] or ", ".join(sorted(set(carried.values()))),
        revision=before,
        notes=notes,
        restore=restore,
    )


async def _gone(toolbox: Toolbox, shown: Target, settings: LoopSettings) -> str:
    """Wait (in cluster time) until the object an earlier step deleted is gone: a finalizer may
    hold it a moment, and a manifest applied meanwhile would update the dying object."""

    async def look() -> Verdict:
        listed = await toolbox.call(
            "list_resources", kind=shown["kind"].lower(), namespace=shown["namespace"], limit=500
        )
        names = {str(i.get("name")) for i in listed.get("items", []) if isinstance(i, dict)}
        if shown["name"] in names:
            return Verdict(False, [f"{shown['kind']} {shown['name']} is still there"])
        return Verdict(True, [f"{shown['kind']} {shown['name']} is gone"])

    verdict = await until(
        toolbox, look, settings, late=f"{shown['kind']} {shown['name']} not gone", step="deleting"
    )
    if not verdict.held:
        raise Refused(f"{verdict.evidence[-1]}: the rest of the fix was not made")
    return verdict.evidence[-1]


async def undo(toolbox: Toolbox, applied: Applied, target: Target, *, agent: str) -> str:
    """Put back what the attempt changed: a revert PR merged and synced, the fields a merge
    patch changed, or a rollout undo."""
    if applied["channel"] == "gitops":
        report(Progress("undoing", f"reverting PR #{applied['pr']}: the change did not hold"))
        reverted = await toolbox.call("revert_pr", number=applied["pr"])
        number = int(reverted["number"])
        await toolbox.call(
            "review_pr",
            number=number,
            verdict="approve",
            body=f"Validation of #{applied['pr']} failed: the {agent} agent reverts it.",
        )
        await toolbox.call("merge_pr", number=number)
        synced = await sync_change(toolbox, target)
        return f"reverted PR #{applied['pr']} by PR #{number}; {'; '.join(synced)}"
    report(Progress("undoing", f"putting {target['kind']} {target['name']} back as it was"))
    restore = applied.get("restore") or []
    if restore:
        shown = direct.step_object(restore[0])
        fields = ", ".join(sorted({k for s in restore for k in _paths(s["arguments"]["patch"])}))
        try:
            for step in restore:
                await toolbox.call(step["tool"], **step["arguments"])
        except ToolFailed as exc:
            if exc.unreachable:
                raise
            return f"could not put back {fields} of {shown['kind']} {shown['name']}: {exc.reason}"
        return f"put back {fields} of {shown['kind']} {shown['name']} as they were"
    if target["kind"] == "Deployment" and applied["revision"]:
        await toolbox.call(
            "rollout_undo",
            name=target["name"],
            namespace=target["namespace"],
            to_revision=int(applied["revision"]),
        )
        return f"rolled Deployment {target['name']} back to revision {applied['revision']}"
    return "nothing to undo: the change had no revision to return to"


def _paths(patch: dict[str, Any]) -> list[str]:
    """The fields a merge patch sets, two levels deep (`spec.selector`, `spec.ports`)."""
    found: list[str] = []
    for key, value in patch.items():
        if isinstance(value, dict) and value:
            found.extend(f"{key}.{sub}" for sub in value)
        else:
            found.append(key)
    return found


def _body(fix: dict[str, Any], proposal: str) -> str:
    evidence = "\n".join(f"- {line}" for line in fix.get("evidence", []))
    return (
        f"{fix['title']}.\n\nExpected effect: {fix['expected_effect']}\nRisk: {fix['risk']} "
        f"({fix.get('risk_note', '')})\n\nEvidence:\n{evidence}\n\nPolicy: proposal {proposal}.\n"
        "Opened by the kubecrew remediation loop; it validates the change after sync and "
        "reverts it if the workload does not recover."
    )
