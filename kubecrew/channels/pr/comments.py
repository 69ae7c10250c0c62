"""Pull requests as a conversation: a `@kubecrew` comment on a crew PR amends that PR.

"@kubecrew use 4 replicas instead", commented on a pull request the crew opened, reaches the
agent that opened it (its label says which: `kubecrew-heal` and `kubecrew-deploy` are the Dev
Team's, `kubecrew-platform` the Platform agent's; else the owner's agent in the Ownership
policy). The agent reads what is asked (`pr_amendments`: replicas, image tag, resource
requests), commits the edit on the PR's own branch (a new commit on top: the history of the
review stays), publishes it (`Provider.advance`: the local record takes the new head, GitHub is
pushed to), records a `mutation` in the policy store's audit log, and replies on the PR with
what changed. Run by `kubecrew approvals sync-prs`, beside the reviews (`pr_approvals`).

When the PR carries a pending approval request, that request described the PR before the
amendment, so the amendment supersedes it (`pr_supersession`): a new proposal for the amended
action through the policy store's negotiation, the old request ended as superseded, the PR
body's marker moved to the new request (or removed when policy decided without a person), and
the reply says which request now answers for the PR. A request already granted is never
superseded: what a person approved is what merges, so the comment is answered with that and the
PR stays as approved (ask for the change in a new PR once it has merged).

Who may steer a PR is policy's word, not the comment's: a comment by one of the crew's own
identities (an agent's `comment_pr` is always one: the gitops tools take no author) is never
read; the commenter's forge login must be a person in the people file (`github: LOGIN`), and
that person one of the humans of the Ownership that owns the workload, or one of the approvers
of the approval request the PR carries. Anyone else gets a reply saying who may, and nothing
changes. A comment never merges, approves or answers anything: the grammar reads three kinds of
field and nothing else.

Exactly once: each comment is claimed in the PR channel's ledger (`pr_approvals.Ledger`, keyed
by the forge's comment id) before it is handled, so restarts and concurrent syncs reply once;
a failure while handling releases the claim and the next sync tries again. A PR whose branch
moved under the agent is answered with that, not retried forever.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Literal

import git
import yaml

from core.errors import Conflict, NotFound
from core.policy.actions import Action, EvaluationRequest, TargetRef
from core.policy.approvals import authorized
from core.policy.audit import AuditEntry
from core.policy.catalog import PolicySet
from core.policy.documents.common import Principals
from core.policy.evaluation import stakeholders
from core.policy.people import People
from core.policy.proposals import ApprovalRequest, Identity
from core.policy.store.base import Store
from kubecrew.channels.pr import amendments as pr_amendments
from kubecrew.channels.pr import supersession as pr_supersession
from kubecrew.channels.pr.amendments import Amendment
from kubecrew.channels.pr.approvals import Ledger, forge_key
from kubecrew.channels.pr.supersession import Superseded
from mcp_servers.gitops.approval_links import marked
from mcp_servers.gitops.providers.base import Comment, Provider, PullRequest
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.yamledit import edit

CommentKind = Literal[
    "amended",  # the PR has a new commit doing what was asked
    "unknown-commenter",  # the login is in no people file: replied
    "not-allowed",  # the person neither owns the workload nor approves the request: replied
    "not-understood",  # nothing (or nothing valid) asked: replied with what can be
    "unchanged",  # the manifest already says so: replied
    "conflict",  # the branch moved, or the PR holds no workload to amend: replied
    "approved-already",  # its approval request was granted for the PR as it is: replied
]
Reply = Callable[[CommentKind, str], "Handled"]  # answer on the PR, and say what was done
WORKLOADS = ("Deployment", "StatefulSet")
# The label each agent puts on its PRs (agents/runtime/loop/mutation.py, agents/dev_team/
# deploy.py, agents/platform/delivery.py); kept here as data: kubecrew only reads them.
AGENT_OF_LABEL = {
    "kubecrew-heal": "dev_team",
    "kubecrew-deploy": "dev_team",
    "kubecrew-platform": "platform",
}


@dataclass(frozen=True)
class Handled:
    pr: int
    commenter: str
    kind: CommentKind
    detail: str

    def describe(self) -> str:
        return f"PR #{self.pr} comment by {self.commenter}: {self.kind}: {self.detail}"


@dataclass(frozen=True)
class Workload:
    path: str  # the manifest file in the repository
    ref: TargetRef
    document: dict[str, Any]


def comment_key(comment: Comment) -> str:
    """The forge's id of the comment, else a hash of its content."""
    if comment.id:
        return f"comment:{comment.id}"
    text = "\x00".join((comment.author, comment.at, comment.body))
    return "comment:" + hashlib.sha256(text.encode()).hexdigest()[:24]


def sync(
    provider: Provider,
    repo: Repository,
    store: Store,
    people: People,
    policies: PolicySet,
    now: datetime,
    *,
    crew_author: str,
    ledger: Ledger,
    crew_identities: Collection[str] = (),
) -> list[Handled]:
    """Handle every new comment that addresses the crew on the crew's open PRs. Comments by
    `crew_author` or any of `crew_identities` are the crew's own: never a person asking."""
    forge = forge_key(provider)
    handles = ("kubecrew", crew_author)
    crew = {crew_author, *crew_identities}
    desk = _Desk(provider, repo, store, people, policies, now, crew_author)
    handled: list[Handled] = []
    for pr in _crew_prs(provider, crew_author):
        for comment in pr.comments:
            if comment.author in crew or not pr_amendments.mentions(comment.body, handles):
                continue
            act = partial(desk.comment, pr, comment)
            done = ledger.once(forge, pr.number, comment_key(comment), act)
            handled += [done] if done is not None else []
    return handled


def _crew_prs(provider: Provider, crew_author: str) -> Iterator[PullRequest]:
    for listed in provider.list_prs(state="open"):
        if listed.author == crew_author:
            yield provider.get(listed.number).pr  # a listing may leave comments out


@dataclass(frozen=True)
class _Desk:
    provider: Provider
    repo: Repository
    store: Store
    people: People
    policies: PolicySet
    now: datetime
    crew_author: str

    def comment(self, pr: PullRequest, comment: Comment) -> Handled:
        login = comment.author

        def reply(kind: CommentKind, text: str) -> Handled:
            self.provider.comment(pr.number, author=self.crew_author, body=f"@{login}: {text}")
            return Handled(pr.number, login, kind, text)

        person = self.people.by_account("github", login)
        if person is None:
            return reply(
                "unknown-commenter",
                "I did not act on this: your login is not in kubecrew's people file, so I "
                f"cannot tell who you are. An operator maps it in people.yaml (`github: {login}`).",
            )
        workload = self._workload(pr)
        if workload is None:
            return reply("conflict", f"this PR changes no {' or '.join(WORKLOADS)} I can amend.")
        may = self._who_may(pr, workload)
        if not any(authorized(principals, person) for principals in may):
            who = " or ".join(p.describe() for p in may) or "the workload's owners"
            return reply(
                "not-allowed",
                f"I did not act on this: {person} may not change {workload.ref}; it takes "
                f"{who} (Ownership and ChangePolicy).",
            )
        asked = pr_amendments.read(comment.body)
        if isinstance(asked, str):
            return reply("not-understood", asked)
        granted = self._granted(pr)
        if granted is not None:
            return reply(
                "approved-already",
                f"I did not change this PR: approval request {granted.id} was granted for "
                f"{granted.action.describe()}, and what was approved is what merges. Ask for "
                f"{asked.describe()} in a new change once this one has merged.",
            )
        return self._amend(pr, workload, asked, person, reply)

    def _amend(
        self, pr: PullRequest, workload: Workload, asked: Amendment, person: Identity, reply: Reply
    ) -> Handled:
        ref = workload.ref
        before = self.repo.read(pr.head_commit, workload.path)
        edits = pr_amendments.edits(asked, workload.document)
        after = edit(before, edits, kind=ref.kind, name=ref.name)
        if after == before:
            return reply("unchanged", f"{ref} already has {asked.describe()}; nothing to change.")
        agent = self._agent(pr, workload)
        message = (
            f"{ref}: {asked.describe()}\n\nAsked by {person} in a comment on pull request "
            f"#{pr.number}; amended by the {agent.replace('_', ' ')} agent.\n"
        )
        try:
            commit = self._commit(pr, {workload.path: after}, message)
        except Conflict as exc:
            return reply("conflict", f"I did not amend this PR: {exc.message}.")
        advanced = self.provider.advance(pr.number)
        superseded = self._supersede(advanced, asked, person)
        self.store.record([self._audit(pr, workload, asked, person, agent, commit, superseded)])
        fields = ", ".join(f"`{e.path}`" for e in edits)
        then = f" {superseded.describe()}" if superseded is not None else ""
        return reply(
            "amended",
            f"done: {commit[:12]} sets {asked.describe()} on {ref} ({workload.path}: {fields}). "
            f"Review the new commit; merging is still decided by reviews and policy.{then}",
        )

    def _carried(self, pr: PullRequest) -> ApprovalRequest | None:
        """The approval request the PR carries, if this store knows it (another store's request
        is not this one's to judge or replace)."""
        request_id = marked(pr, crew_author=self.crew_author)
        if request_id is None:
            return None
        try:
            return self.store.approval(request_id)
        except NotFound:
            return None

    def _granted(self, pr: PullRequest) -> ApprovalRequest | None:
        """The approval request the PR carries, when a person has granted it already."""
        request = self._carried(pr)
        return request if request is not None and request.state == "granted" else None

    def _supersede(self, pr: PullRequest, asked: Amendment, person: Identity) -> Superseded | None:
        """A pending request the PR carries no longer describes it: replace it."""
        request = self._carried(pr)
        if request is None or request.ended:
            return None
        return pr_supersession.supersede(
            self.store, self.policies, self.provider, pr, request, asked, asked_by=person,
            now=self.now,
        )  # fmt: skip

    def _workload(self, pr: PullRequest) -> Workload | None:
        for path in pr.files:
            if not path.endswith((".yaml", ".yml")):
                continue
            try:
                docs = list(yaml.safe_load_all(self.repo.read(pr.head_commit, path)))
            except (NotFound, yaml.YAMLError):
                continue
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") in WORKLOADS:
                    meta = doc.get("metadata") or {}
                    ref = TargetRef(
                        kind=str(doc["kind"]),
                        name=str(meta.get("name", "")),
                        namespace=str(meta.get("namespace") or "default"),
                    )
                    return Workload(path, ref, doc)
        return None

    def _who_may(self, pr: PullRequest, workload: Workload) -> list[Principals]:
        """The owners' humans, and the approvers of the request the PR carries (if pending)."""
        asked = EvaluationRequest(action=Action(type="patch", target=workload.ref), now=self.now)
        owner = next((s for s in stakeholders(self.policies, asked) if s.owner), None)
        may = [owner.humans] if owner is not None and owner.humans is not None else []
        request_id = marked(pr, crew_author=self.crew_author)
        if request_id is not None:
            try:
                request = self.store.approval(request_id)
            except NotFound:
                return may
            if not request.ended:
                may.append(request.approvers)
        return may

    def _agent(self, pr: PullRequest, workload: Workload) -> str:
        for label in pr.labels:
            if label in AGENT_OF_LABEL:
                return AGENT_OF_LABEL[label]
        asked = EvaluationRequest(action=Action(type="patch", target=workload.ref), now=self.now)
        owner = next((s for s in stakeholders(self.policies, asked) if s.owner), None)
        named = owner.agent if owner is not None and owner.agent else "dev-team"
        return named.replace("-", "_")

    def _commit(self, pr: PullRequest, files: dict[str, str | None], message: str) -> str:
        """A commit on top of the PR's head, moved onto its branch only if the branch is still
        at that head (compare and swap): someone else's push is never overwritten."""
        scratch = f"kubecrew/amend-{pr.number}-{secrets.token_hex(4)}"
        try:
            sha = self.repo.commit(branch=scratch, start=pr.head_commit, files=files,
                                   message=message)  # fmt: skip
            branch = f"refs/heads/{pr.head}"
            try:
                self.repo.git_repo.git.update_ref(branch, sha, pr.head_commit)
            except git.GitCommandError as exc:
                raise Conflict(
                    f"branch {pr.head} moved past {pr.head_commit[:12]} while I worked; "
                    "comment again to amend its new head"
                ) from exc
        finally:
            self.repo.delete_branch(scratch)
        return sha

    def _audit(
        self,
        pr: PullRequest,
        workload: Workload,
        asked: Amendment,
        person: Identity,
        agent: str,
        commit: str,
        superseded: Superseded | None,
    ) -> AuditEntry:
        request = marked(pr, crew_author=self.crew_author)
        details: dict[str, str | int] = {"pr": pr.number, "commit": commit, "asked_by": str(person)}
        if request is not None:
            details["approval"] = request
        if superseded is not None:  # the request the PR answers to now
            details["new_proposal"] = superseded.proposal
            details["new_approval"] = superseded.request.id if superseded.request else ""
        return AuditEntry(
            at=self.now,
            actor=f"agent {agent}",
            kind="mutation",
            subject=str(workload.ref),
            summary=f"amend pull request #{pr.number}: {asked.describe()} (asked by {person})",
            result="committed",
            details=details,
        )
