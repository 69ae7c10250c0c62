"""History answers: what changed in a namespace, or to one object, within a window.

Four sources, each read only when the agent has its tool: rollout revisions (ReplicaSets and
ControllerRevisions created in the window, with their images), events (warnings named one by
one, the rest counted by reason), the audit log (mutations the crew's gated writes recorded:
who, what, the result) and, for one object, its manifest's git history. One timeline, newest
first, bounded to `TIMELINE` lines.

Each source is judged on its own clock: objects and events on the cluster's (the newest node
Lease renewal, so a sandbox running faster than life is judged by its own time), the audit log
and git on this machine's, which wrote them. "today" starts at midnight UTC of the cluster.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from agents.runtime.questions.asked import Answered, History
from agents.runtime.questions.evidence import Evidence, Json, finish, moment, unanswered, where
from agents.runtime.questions.names import Ref
from agents.runtime.questions.targets import kinds_for, locate

TIMELINE = 12
AUDIT_PAGES = 6  # of 500 records: the newest changes are at the end of the log
_RS_FIELDS = [
    "metadata.creationTimestamp",
    "metadata.ownerReferences[*].kind",
    "metadata.ownerReferences[*].name",
    "metadata.annotations",
    "spec.template.spec.containers[*].image",
]
_CR_FIELDS = [
    "metadata.creationTimestamp",
    "metadata.ownerReferences[*].kind",
    "metadata.ownerReferences[*].name",
    "revision",
]
REVISION = "deployment.kubernetes.io/revision"
CAUSE = "kubernetes.io/change-cause"


async def answer(evidence: Evidence, question: History) -> Answered:
    target: Ref | None = None
    if question.names:
        found = await locate(
            evidence, "history", question.names, question.namespace, kinds_for(question.kind)
        )
        if isinstance(found, Answered):
            return found
        target = found
    if question.topic == "rollout":
        return await _rollout(evidence, target)
    now, clock = await cluster_now(evidence)
    start = _start(question, now)
    wall_start = _start(question, datetime.now(UTC))
    namespace = target.namespace if target else question.namespace
    timeline = await _revisions(evidence, namespace, target, start)
    timeline += await _audit(evidence, namespace, target, wall_start)
    if target is not None:
        timeline += await _git(evidence, target, wall_start)
    warnings, normal = await _events(evidence, namespace, target, start)
    timeline.sort(key=lambda row: row["at"], reverse=True)
    about = str(target) if target else where(namespace)
    window = question.window
    during = window if window == "today" or window.startswith("since") else f"in {window}"
    plural = "s" if len(timeline) != 1 else ""
    head = f"{len(timeline)} change{plural} {_to(target)}{about} {during}" + (
        ":" if timeline else "."
    )
    lines = [f"- {row['at'][:16].replace('T', ' ')}Z {row['what']}" for row in timeline[:TIMELINE]]
    if len(timeline) > TIMELINE:
        lines.append(f"(and {len(timeline) - TIMELINE} older)")
    lines += _event_lines(warnings, normal)
    basis = (
        f"read rollout revisions, events, the audit log{' and git' if target else ''} "
        f"from {start.isoformat(timespec='minutes')} ({clock})"
    )
    rows = timeline[:TIMELINE] + [{"event": w} for w in warnings[:5]]
    return finish(
        evidence,
        "history",
        head,
        lines,
        basis,
        rows=rows,
        total=len(timeline),
        topic="changes",
        namespace=namespace,
        target=str(target or ""),
        since=start.isoformat(),
        events={"warnings": len(warnings), "normal": sum(normal.values())},
    )


def _to(target: Ref | None) -> str:
    return "to " if target else ""


def _start(question: History, now: datetime) -> datetime:
    if question.since_midnight:
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    return now - timedelta(seconds=question.since_seconds)


async def cluster_now(evidence: Evidence) -> tuple[datetime, str]:
    """The cluster's time (newest node Lease renewal) and which clock it is."""
    leases = await evidence.call(
        "list_resources",
        "the cluster's clock (node leases)",
        kind="leases",
        namespace="kube-node-lease",
        output="fields",
        fields=["spec.renewTime"],
        limit=500,
    )
    times = [t for i in (leases or {}).get("items") or [] if (t := moment(i.get("spec.renewTime")))]
    if times:
        return max(times), "the cluster's clock"
    return datetime.now(UTC), "this machine's clock: the cluster's was not readable"


async def _revisions(
    evidence: Evidence, namespace: str | None, target: Ref | None, start: datetime
) -> list[Json]:
    rows: list[Json] = []
    kind = target.kind if target else ""
    if kind in ("", "Deployment"):
        scan = await evidence.scan(
            "replicasets", f"ReplicaSets {where(namespace)}", namespace=namespace, fields=_RS_FIELDS
        )
        for rs in scan.items if scan else []:
            owner = _owner(rs, target)
            created = moment(rs.get("metadata.creationTimestamp"))
            if owner is None or created is None or created < start:
                continue
            notes = rs.get("metadata.annotations") or {}
            images = ", ".join(
                str(i) for i in rs.get("spec.template.spec.containers[*].image") or []
            )
            cause = f"; cause: {notes[CAUSE]}" if notes.get(CAUSE) else ""
            rows.append(
                {
                    "at": created.isoformat(),
                    "source": "rollout",
                    "object": owner,
                    "what": f"{owner} revision {notes.get(REVISION, '?')} rolled out "
                    f"({images}{cause})",
                }
            )
    if kind in ("", "StatefulSet", "DaemonSet"):
        scan = await evidence.scan(
            "controllerrevisions",
            f"ControllerRevisions {where(namespace)}",
            namespace=namespace,
            fields=_CR_FIELDS,
        )
        for cr in scan.items if scan else []:
            owner = _owner(cr, target)
            created = moment(cr.get("metadata.creationTimestamp"))
            if owner is None or created is None or created < start:
                continue
            rows.append(
                {
                    "at": created.isoformat(),
                    "source": "rollout",
                    "object": owner,
                    "what": f"{owner} revision {cr.get('revision')} rolled out",
                }
            )
    return rows


def _owner(obj: Json, target: Ref | None) -> str | None:
    """The owner cited ("Deployment shop/web"), or None when it is not the target's."""
    kinds = obj.get("metadata.ownerReferences[*].kind") or []
    names = obj.get("metadata.ownerReferences[*].name") or []
    if not kinds or not names:
        return None
    owner = Ref(str(kinds[0]), str(names[0]), str(obj.get("namespace", "")))
    return str(owner) if target is None or owner == target else None


async def _audit(
    evidence: Evidence, namespace: str | None, target: Ref | None, start: datetime
) -> list[Json]:
    if not evidence.has("audit_query"):
        return []  # no policy store here: the gated writes are not audited by this agent
    rows: list[Json] = []
    after = 0
    for _ in range(AUDIT_PAGES):
        page = await evidence.call(
            "audit_query", "the audit log", kind="mutation", after=after, limit=500
        )
        records = (page or {}).get("records") or []
        for record in records:
            at, subject = moment(record.get("at")), str(record.get("subject", ""))
            if at is None or at < start or not _about(subject, namespace, target):
                continue
            rows.append(
                {
                    "at": at.astimezone(UTC).isoformat(),
                    "source": "audit",
                    "object": subject,
                    "what": f"{record.get('actor')}: "
                    f"{record.get('summary')} ({record.get('result') or 'recorded'})",
                }
            )
        if not page or not page.get("note"):
            return rows
        after = int(page.get("next_after") or after)
    evidence.cut.append(f"the audit log: read its first {AUDIT_PAGES * 500} mutations")
    return rows


def _about(subject: str, namespace: str | None, target: Ref | None) -> bool:
    if target is not None:
        return subject == str(target)
    return namespace is None or f" {namespace}/" in subject


async def _git(evidence: Evidence, target: Ref, start: datetime) -> list[Json]:
    if not evidence.has("manifest_history"):
        return []  # no GitOps repository here
    found = await evidence.call(
        "manifest_history",
        f"the git history of {target}",
        kind=target.kind,
        name=target.name,
        namespace=target.namespace,
        limit=10,
    )
    rows = []
    for commit in (found or {}).get("commits") or []:
        at = moment(commit.get("date"))
        if at is None or at < start:
            continue
        rows.append(
            {
                "at": at.astimezone(UTC).isoformat(),
                "source": "git",
                "object": str(target),
                "what": f"git {commit.get('commit')} by {commit.get('author')}: "
                f"{commit.get('subject')} ({commit.get('file')})",
            }
        )
    return rows


async def _events(
    evidence: Evidence, namespace: str | None, target: Ref | None, start: datetime
) -> tuple[list[str], Counter[str]]:
    arguments: Json = {"limit": 500}
    if namespace:
        arguments["namespace"] = namespace
    if target is not None:
        arguments.update(kind=target.kind, name=target.name)
    found = await evidence.call("events", f"events {where(namespace)}", **arguments)
    warnings: Counter[str] = Counter()
    normal: Counter[str] = Counter()
    for event in (found or {}).get("items") or []:
        seen = moment(event.get("last_seen"))
        if seen is None or seen < start:
            continue
        count = int(event.get("count") or 1)
        if event.get("type") == "Warning":
            warnings[f"{event.get('reason')} on {event.get('object')}: {event.get('message')}"] += (
                count
            )
        else:
            normal[str(event.get("reason"))] += count
    return [f"{what} (x{n})" for what, n in warnings.most_common()], normal


def _event_lines(warnings: list[str], normal: Counter[str]) -> list[str]:
    lines = []
    if warnings:
        lines.append(f"Warning events ({len(warnings)}):")
        lines += [f"- {w}" for w in warnings[:5]]
        if len(warnings) > 5:
            lines.append(f"(and {len(warnings) - 5} more warnings)")
    if normal:
        counted = ", ".join(f"{reason} {n}" for reason, n in normal.most_common(6))
        lines.append(f"Normal events: {counted}.")
    return lines


async def _rollout(evidence: Evidence, target: Ref | None) -> Answered:
    if target is None:
        return Answered(
            "Whose rollout history? Name the Deployment, e.g. 'rollout history of web in shop'.",
            {"family": "history", "clarify": True, "rows": []},
        )
    if target.kind != "Deployment":
        return Answered(
            f"{target} keeps its revisions as ControllerRevisions; ask 'what changed "
            f"to {target.name}' for them.",
            {"family": "history", "rows": []},
        )
    found = await evidence.call(
        "rollout_history",
        f"the rollout history of {target}",
        name=target.name,
        namespace=target.namespace,
    )
    if found is None:
        return unanswered(evidence, "history", f"the rollout history of {target}")
    current = str(found.get("current_revision", ""))
    revisions = list(reversed(found.get("revisions") or []))
    lines = [
        f"- revision {r['revision']}{' (current)' if str(r['revision']) == current else ''}: "
        f"{', '.join(r.get('images') or [])}, created {str(r.get('created', ''))[:16]}"
        + (f", cause: {r['change_cause']}" if r.get("change_cause") else "")
        for r in revisions[:TIMELINE]
    ]
    head = (
        f"{target} has {len(revisions)} revision{'s' if len(revisions) != 1 else ''}, newest first:"
    )
    return finish(
        evidence,
        "history",
        head,
        lines,
        f"read the ReplicaSets of {target}",
        rows=revisions[:TIMELINE],
        total=len(revisions),
        topic="rollout",
        target=str(target),
    )
