"""Drift of a git-managed workload: "has web drifted from git?", "reconcile web", "someone edited
web by hand; keep it, it was a hotfix".

The live objects of the workload (the named object and whatever else of the same name in its
namespace the repository defines, such as its Service) are compared with the team repository's
base commit by the gitops server's `drift` tool, field by field: git says X, live says Y. Who
changed a field, and when, is read from the live object's `managedFields` (`ownership`): the
manager that owns the drifted field now is the one that wrote it last.

Then, by what the person said (`mode_of`):
- reconcile (the default, or "revert", "restore"): git wins. The policy store is asked first
  (action apply, via pull-request: the content is what git holds, the reviewed channel), then a
  sync runs after a dry run that must change nothing but this workload: a sync applies the whole
  repository, and other objects' drift is not what policy was asked about. Then drift is asked
  again at the same commit to prove live matches git.
- adopt ("keep", "adopt", "hotfix", "on purpose"): the cluster wins. After the policy store
  approves, `adopt_live` opens a pull request writing the live values into the manifest, merged
  only when policy approved it; a dry-run sync then shows the object unchanged, and drift at the
  new base commit proves none remains. Nothing is applied to the cluster.
- report ("don't change anything", "just check"): only the fields.

A workload no manifest defines is not drift but an unmanaged object: said so, and what it means.
The proposal's rationale carries a key naming the workload and commit, so asking again while a
person decides finds that decision (`decide_proposal`) instead of proposing twice.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.dev_team import changes, tasks
from agents.dev_team.state import TargetRef
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import NeedsApproval, Refused, decide_proposal, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.toolbox import Toolbox

SYNC_MANAGER = "kubecrew"  # the gitops server's field manager: sync's writes are git's, not drift
ADOPT_LABEL = "adopt-live"
_KEEP = ("adopt", "hotfix", "hot-fix", "on purpose", "intentional", "deliberate", "meant to",
         "leave it", "take the live")  # fmt: skip
_REVERT = ("revert", "undo", "restore", "put back", "roll back", "back to git", "git wins")
_LOOK = ("don't change", "do not change", "dont change", "without chang", "just check",
         "only check", "report only", "only report", "dry run", "dry-run", "don't fix",
         "do not fix", "don't touch", "do not touch")  # fmt: skip
_STEP = re.compile(r'\.?([A-Za-z0-9_\-/]+)|\[([^=\]"]+)=([^\]]*)\]|\["([^"]+)"\]|\[(\d+)\]')

Mode = Literal["reconcile", "adopt", "report"]
Outcome = Literal[
    "in-sync", "not-managed", "unavailable", "drifted", "restored", "adopted", "waiting",
    "refused", "failed",
]  # fmt: skip


def mode_of(question: str) -> Mode:
    """What to do about drift, by the person's words: look only, keep the live state, or (the
    default, and whenever they say revert) make the cluster what git says."""
    text = question.lower().replace("\u2019", "'")
    if any(cue in text for cue in _LOOK):
        return "report"
    if any(cue in text for cue in _REVERT):
        return "reconcile"
    words = [*re.findall(r"[a-z-]+", text), ""]
    # "keep it" asks to keep; "why does web keep drifting" does not
    kept = any(w == "keep" and not nxt.endswith("ing") for w, nxt in itertools.pairwise(words))
    return "adopt" if kept or any(cue in text for cue in _KEEP) else "reconcile"


@dataclass
class Found:
    """What the repository and the cluster say about the workload at one commit."""

    commit: str
    file: str = ""  # the manifest defining the named object ("" when none does)
    rendered: bool = False  # a kustomization renders it: no single file to adopt into
    objects: list[dict[str, Any]] = field(default_factory=list)  # the drift rows, one per object

    def fields(self) -> list[str]:
        return [d["path"] for row in self.objects for d in row.get("diffs", [])]


@tasks.register("drift")
async def reconcile(request: tasks.Request) -> tasks.Done:
    toolbox, ref = request.toolbox, request.target
    where = f"{ref['kind']} {ref['name']} in {ref['namespace']}"
    if not toolbox.has("drift"):
        return _done(
            "unavailable",
            f"I cannot tell whether {where} drifted: no GitOps repository is configured for me "
            "(the gitops server), so there is no git state to compare with. Nothing changed.",
            Found(""),
        )
    found = await look(toolbox, ref)
    short = found.commit[:12]
    if not found.file:
        return _done(
            "not-managed",
            f"{where} is not managed from git: no manifest of the team repository (commit "
            f"{short}) defines it, so it cannot drift. Its live state is the only truth: sync "
            "never touches it, changes to it are direct (gated kube writes), and nothing would "
            "undo a hand edit. To manage it from git, add its manifest by pull request. "
            "Nothing changed.",
            found,
        )
    if not found.objects:
        return _done(
            "in-sync",
            f"No drift: {where} matches git at commit {short} ({found.file}), field for field. "
            "Nothing changed.",
            found,
        )
    await attribute(toolbox, ref, found.objects)
    shown = describe(found)
    mode = mode_of(request.question)
    if mode == "report":
        return _done(
            "drifted",
            f"{where} drifted from git (commit {short}, {found.file}): {shown}. I changed "
            "nothing, as asked; say 'reconcile' to restore git's values or 'keep it' to adopt "
            "the live ones by pull request.",
            found,
        )
    try:
        if mode == "adopt":
            return await _adopt(toolbox, ref, found, shown, agent=request.agent)
        return await _restore(toolbox, ref, found, shown, agent=request.agent)
    except NeedsApproval as waiting:
        doing = "adopt the live values" if mode == "adopt" else "restore git's values"
        return _done(
            "waiting",
            f"{where} drifted from git (commit {short}): {shown}. Policy asks a person before I "
            f"{doing} ({waiting}): approval request {waiting.request}. Nothing changed; ask me "
            "again once it is granted.",
            found,
            proposal=waiting.proposal,
            approval=waiting.request,
        )
    except Refused as refused:
        return _done(
            "refused",
            f"{where} drifted from git (commit {short}): {shown}. I did not reconcile it: "
            f"{refused}. Nothing changed.",
            found,
        )


async def look(toolbox: Toolbox, ref: TargetRef, commit: str = "") -> Found:
    """The workload's drift at `commit` (default: the base branch's head, named)."""
    if not commit:
        commit = str((await toolbox.call("repo_status"))["base_commit"])
    found = Found(commit)
    hits = await toolbox.call(
        "find_manifest", kind=ref["kind"], name=ref["name"], namespace=ref["namespace"], ref=commit
    )
    if hits.get("found"):
        hit = hits["found"][0]
        found.file, found.rendered = str(hit["file"]), bool(hit.get("rendered_by"))
    offset, total = 0, 1
    while offset < total:
        page = await toolbox.call(
            "drift", namespace=ref["namespace"], ref=commit, limit=200, offset=offset
        )
        rows = page.get("out_of_sync", [])
        found.objects += [r for r in rows if r.get("name") == ref["name"]]
        offset, total = offset + max(len(rows), 1), int(page.get("total") or 0)
    return found


async def attribute(toolbox: Toolbox, ref: TargetRef, objects: list[dict[str, Any]]) -> None:
    """Name the writer of each drifted field (`by`, `at`) where the live managedFields tell."""
    for row in objects:
        if row.get("state") != "drifted":
            continue
        try:
            got = await toolbox.call(
                "get_resource",
                kind=row["kind"].lower(),
                name=row["name"],
                namespace=ref["namespace"],
                output="fields",
                fields=["metadata.managedFields"],
            )
        except ToolFailed:
            continue  # who changed it is a courtesy; the drift itself stands without it
        entries = [
            e
            for e in got.get("metadata.managedFields") or []
            if e.get("manager") != SYNC_MANAGER and e.get("subresource") != "status"
        ]
        for diff in row.get("diffs", []):
            owner = ownership(entries, diff["path"])
            if owner is not None:
                diff["by"], diff["at"] = owner.get("manager", ""), owner.get("time", "")


def ownership(entries: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    """The managedFields entry owning the field at a drift `path` (containers[name=web].image
    is `f:containers` / `k:{"name":"web"}` / `f:image` there), or None."""
    keys: list[str] = []
    for plain, sel_key, sel_value, quoted, index in _STEP.findall(path):
        if index:
            return None  # positional list items are keyed by value there: not traceable
        if sel_key:
            keys.append("k:" + json.dumps({sel_key: sel_value}, separators=(",", ":")))
        else:
            keys.append(f"f:{plain or quoted}")
    for entry in entries:
        node: Any = entry.get("fieldsV1") or {}
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return entry
    return None


def describe(found: Found) -> str:
    """The drift in words: each field, git's value and the live one, and who changed it."""
    parts = []
    for row in found.objects:
        if row.get("state") == "missing":
            parts.append(f"{row['kind']} {row['name']} is missing from the cluster")
            continue
        for diff in row.get("diffs", []):
            said = f"{row['kind']} {diff['path']}: git says {_short(diff['git'])}, live says "
            said += "nothing (removed)" if diff["live"] is None else _short(diff["live"])
            if diff.get("by"):
                said += f" (changed by {diff['by']}" + (f" at {diff['at']})" if diff["at"] else ")")
            parts.append(said)
    return "; ".join(parts)


async def _restore(
    toolbox: Toolbox, ref: TargetRef, found: Found, shown: str, *, agent: str
) -> tasks.Done:
    where, short = f"{ref['kind']} {ref['name']} in {ref['namespace']}", found.commit[:12]
    key = f"kubecrew-drift-{ref['namespace']}-{ref['name']}-{short}"
    edits = ", ".join(found.fields()) or "the object"
    proposal = await decide_proposal(
        toolbox, key=key, agent=agent, **changes.by_pr(ref, "apply"),
        rationale=f"restore {where} to git: sync re-applies commit {short} over the manual "
        f"edits of {edits} [{key}]",
    )  # fmt: skip
    planned = await toolbox.call("sync", dry_run=True)
    others = [
        f"{o['kind']} {o['name']}"
        for o in planned.get("objects", [])
        if o.get("action") != "unchanged"
        and (o.get("name") != ref["name"] or o.get("namespace") != ref["namespace"])
    ]
    if others and "deferred_to" not in planned:
        raise Refused(
            f"a sync of commit {short} would also change {', '.join(others[:10])}, which policy "
            f"was not asked about (proposal {proposal}); reconcile those first, or ask me about "
            "each"
        )
    notes = [f"policy: proposal {proposal} approved", *await sync_change(toolbox, Target(**ref))]
    after = await look(toolbox, ref, found.commit)
    if after.objects:
        return _done(
            "failed",
            f"{where} drifted from git (commit {short}): {shown}. I synced commit {short}, but "
            f"live still differs: {describe(after)}. Something keeps changing it (an operator, "
            "an autoscaler, a person): look at its managers before syncing again.",
            found,
            proposal=proposal,
            notes=notes,
        )
    return _done(
        "restored",
        f"{where} had drifted from git (commit {short}, {found.file}): {shown}. I restored "
        f"git's values: policy approved it (proposal {proposal}), then "
        f"{'; '.join(notes[1:])}. Live now matches git, field for field.",
        found,
        proposal=proposal,
        notes=notes,
        verified=True,
    )


async def _adopt(
    toolbox: Toolbox, ref: TargetRef, found: Found, shown: str, *, agent: str
) -> tasks.Done:
    where, short = f"{ref['kind']} {ref['name']} in {ref['namespace']}", found.commit[:12]
    if found.rendered:
        raise Refused(
            f"a kustomization renders {where} ({found.file}), so no single file holds it: write "
            "the live values into that overlay by hand with a pull request"
        )
    key = f"kubecrew-adopt-{ref['namespace']}-{ref['name']}-{short}"
    edits = ", ".join(found.fields()) or "the object"
    proposal = await decide_proposal(
        toolbox, key=key, agent=agent, **changes.by_pr(ref, "apply"),
        rationale=f"adopt the live {where} into git (an intentional hand edit of {edits}) [{key}]",
    )  # fmt: skip
    numbers = []
    for row in found.objects:
        if row.get("state") == "drifted":
            numbers.append(await _adoption_pr(toolbox, row, ref["namespace"]))
    notes = [f"policy: proposal {proposal} approved"]
    for number in numbers:
        notes.extend(await changes.merge(toolbox, number, proposal, agent=agent))
    planned = await toolbox.call("sync", dry_run=True)
    ours = [
        o
        for o in planned.get("objects", [])
        if o.get("name") == ref["name"] and o.get("namespace") == ref["namespace"]
    ]
    if ours:
        notes.append(
            "sync dry run: " + ", ".join(f"{o['kind']} {o['name']} {o['action']}" for o in ours)
        )
    after = await look(toolbox, ref)
    prs = ", ".join(f"#{n}" for n in numbers)
    if after.objects:
        return _done(
            "failed",
            f"I merged PR {prs} adopting the live {where} into git, but drift remains at commit "
            f"{after.commit[:12]}: {describe(after)}.",
            found,
            proposal=proposal,
            prs=numbers,
            notes=notes,
        )
    return _done(
        "adopted",
        f"{where} had drifted from git (commit {short}, {found.file}): {shown}. As you said it "
        f"was intentional, I adopted the live values into git: PR {prs}, merged (policy: "
        f"proposal {proposal}). No drift remains at commit {after.commit[:12]}; the cluster was "
        "not changed.",
        found,
        proposal=proposal,
        prs=numbers,
        notes=notes,
        verified=True,
        commit_after=after.commit,
    )


async def _adoption_pr(toolbox: Toolbox, row: dict[str, Any], namespace: str) -> int:
    """The open adopting PR of this object (an earlier ask's), or a new one."""
    title = f"Adopt the live {row['kind']} {row['name']} in {namespace} into git"
    listed = await toolbox.call("list_prs", state="open", limit=100)
    for pr in listed.get("prs", []):
        if ADOPT_LABEL in pr.get("labels", []) and str(pr.get("title", "")) == title:
            return int(pr["number"])
    opened = await toolbox.call(
        "adopt_live", kind=row["kind"], name=row["name"], namespace=namespace, title=title
    )
    return int(opened["number"])


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _done(outcome: Outcome, summary: str, found: Found, **extra: Any) -> tasks.Done:
    report: dict[str, Any] = {"outcome": outcome, "commit": found.commit, "file": found.file}
    report |= {"drift": found.objects, "proposal": "", "approval": "", "prs": [], "notes": []}
    return tasks.Done(summary, {**report, "verified": False, **extra})
