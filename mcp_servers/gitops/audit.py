"""The gitops server's audit trail: each merge into a base branch and each sync that writes to the
cluster leaves one record in the policy store's audit log.

It is the log the kube server's gate writes (`mutation` records, actor `agent NAME`), so one
query shows a change from its proposal through the merge of its PR to the objects a sync
applied. A record says who (the agent the server was started for), what, and the result:

    merge_pr            the PR's number, title, base and merge commit; "merged" or "failed: ..."
    revert_pr(direct)   the PR reverted and the revert commit; "reverted" or "failed: ..."
    sync (not dry run)  the commit, and each object's kind, namespace, name and action (create,
                        update, deleted, error); "applied", "failed: ...", or "deferred to ..."

Records are built from those names and counts only, never from manifests, field changes or the
errors sync reports per object (an API error may quote the value it refused), so no Secret value
can reach the log. A dry run writes nothing: it changes nothing.

Off unless the settings ask for it (`GitopsSettings.audit`), so a host that never heard of the
policy store keeps working without one. The store lives on a thread of its own
(`core.policy.store.thread`), as in the kube gate. The tool layer hands each merge and sync to
`AuditTrail` as a callable; the engines (providers, sync) do not know the trail exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from core.errors import ToolError
from core.policy.audit import AuditEntry
from core.policy.store import open_store
from core.policy.store.thread import StoreThread
from mcp_servers.gitops.providers.base import PullRequest
from mcp_servers.gitops.settings import GitopsSettings

T = TypeVar("T")
_MAX_OBJECTS = 50  # objects named in one sync record; the rest are counted


@dataclass
class AuditTrail:
    store: StoreThread | None  # None: auditing is off
    agent: str
    repository: str  # how records name the repository: its GitHub slug, else its label
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    @classmethod
    def open(cls, settings: GitopsSettings) -> AuditTrail:
        """The trail the settings ask for; a ToolError names an unusable store."""
        store = None
        if settings.audit and not settings.read_only:
            store = StoreThread(lambda: open_store(settings.policy_store))
        return cls(store, settings.agent, settings.github_repo or settings.label_value)

    def merge(self, number: int, act: Callable[[], PullRequest]) -> PullRequest:
        """`act()`, the merge of PR `number`, recorded with its outcome."""
        subject = f"{self.repository}#{number}"
        try:
            pr = act()
        except Exception as exc:
            self._write(subject, f"merge pull request #{number}", _failed(exc), {"pr": number})
            raise
        details: dict[str, str | int] = {
            "pr": number,
            "title": pr.title,
            "base": pr.base,
            "merge_commit": pr.merge_commit or "",
        }
        summary = f"merge pull request #{number} into {pr.base}: {pr.title}"
        self._write(subject, summary, "merged", details)
        return pr

    def direct_revert(self, number: int, act: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """`act()`, the direct revert of merged PR `number` (its answer holds `revert_commit`
        and `base`), recorded with its outcome."""
        subject = f"{self.repository}#{number}"
        summary = f"revert pull request #{number} directly on the base branch, without review"
        try:
            done = act()
        except Exception as exc:
            self._write(subject, summary, _failed(exc), {"pr": number})
            raise
        details: dict[str, str | int] = {
            "pr": number,
            "base": str(done.get("base", "")),
            "revert_commit": str(done.get("revert_commit", "")),
        }
        self._write(subject, summary, "reverted", details)
        return done

    def sync(self, act: Callable[[], dict[str, Any]], *, ref: str, dry_run: bool) -> dict[str, Any]:
        """`act()`, a sync of `ref`; recorded unless it is a dry run."""
        if dry_run or self.store is None:
            return act()
        summary = f"sync {ref} to the cluster"
        try:
            out = act()
        except Exception as exc:
            self._write(self.repository, summary, _failed(exc), {"ref": ref})
            raise
        commit = str(out.get("commit", ""))
        details: dict[str, str | int] = {"ref": ref, "commit": commit}
        if "deferred_to" in out:  # Argo CD or Flux applies it: sync only asked it to look
            details["deferred_to"] = str(out["deferred_to"])
            details["objects"] = _named(out.get("object") or {})
            result = f"deferred to {out['deferred_to']}: synced={bool(out.get('synced'))}"
        else:
            rows = [*out.get("objects", []), *out.get("pruned", [])]
            changed = [r for r in rows if r.get("action") != "unchanged"]
            details["objects"] = _listed(changed)
            details["changed"] = len(changed)
            details["unchanged"] = len(rows) - len(changed)
            result = "applied" if out.get("ok") else f"failed: {out.get('summary', '')}"
        self._write(self.repository, f"{summary} at {commit[:12]}", result, details)
        return out

    def _write(
        self, subject: str, summary: str, result: str, details: dict[str, str | int]
    ) -> None:
        if self.store is None:
            return
        entry = AuditEntry(
            at=self.clock(),
            actor=f"agent {self.agent}",
            kind="mutation",
            subject=subject,
            summary=summary,
            result=result,
            details=details,
        )
        self.store.call(lambda store: store.record([entry]))


def _named(row: dict[str, Any]) -> str:
    """`Kind namespace/name` (or `Kind name` for a cluster-wide object)."""
    namespace = row.get("namespace") or ""
    where = f"{namespace}/" if namespace else ""
    return f"{row.get('kind', '')} {where}{row.get('name', '')}"


def _listed(rows: list[dict[str, Any]]) -> str:
    """`Kind namespace/name action; ...` for the first _MAX_OBJECTS rows, the rest counted."""
    shown = "; ".join(f"{_named(r)} {r.get('action', '')}" for r in rows[:_MAX_OBJECTS])
    more = len(rows) - _MAX_OBJECTS
    return shown + (f"; and {more} more" if more > 0 else "")


def _failed(exc: BaseException) -> str:
    message = exc.message if isinstance(exc, ToolError) else ""
    first = message.splitlines()[0] if message else type(exc).__name__
    return f"failed: {first[:300]}"
