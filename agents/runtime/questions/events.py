"""Events answers: what the cluster reported, newest first, Warnings alone when asked.

The `events` read tool filters by namespace, type and age; the object asked about is matched
here, by name, so "the events of web" holds its ReplicaSets' and pods' too (`web-7d4b9`,
`web-7d4b9-x2kq`) as people mean it, while a kind said alone ("events of pods") keeps that
kind's. At most `READ` events are read: beyond that the answer says how many it did not see.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from collections import Counter

from agents.runtime.questions.asked import Answered, Events
from agents.runtime.questions.evidence import Evidence, Json, finish, more, unanswered, where
from agents.runtime.questions.inventory import shown as kind_shown

READ = 500  # events read for one answer, newest first


async def answer(evidence: Evidence, question: Events) -> Answered:
    ns = question.namespace
    arguments: Json = {"limit": READ}
    if ns:
        arguments["namespace"] = ns
    if question.warnings:
        arguments["type"] = "Warning"
    if question.since_seconds:
        arguments["since_seconds"] = question.since_seconds
    what = f"the events {where(ns)}"
    listed = await evidence.call("events", what, **arguments)
    if listed is None:
        return unanswered(evidence, "events", f"which events were reported {where(ns)}")
    read = [e for e in listed.get("items") or [] if isinstance(e, dict)]
    total = int(listed.get("total") or len(read))
    if total > len(read):
        evidence.cut.append(f"{what}: read the newest {len(read)} of {total}")
    chosen = [e for e in read if _about(e, question)]
    shown = chosen[: question.count]
    kinds = "warnings" if question.warnings else "events"
    about = f" about {question.name}" if question.name else _of_kind(question.kind)
    window = f" in {question.window}" if question.window else ""
    if not chosen:
        head = f"No {kinds}{about} {where(ns)}{window}."
    else:
        warned = Counter(str(e.get("type") or "") for e in chosen)["Warning"]
        split = f" ({warned} Warning)" if warned and not question.warnings else ""
        head = (
            f"{len(chosen)} {kinds[:-1] if len(chosen) == 1 else kinds}{about} {where(ns)}"
            f"{window}{split}, newest first{more(len(shown), len(chosen), kinds)}:"
        )
    lines = [_line(e, ns) for e in shown]
    basis = f"read {len(read)} event{'s' if len(read) != 1 else ''}, newest first"
    return finish(
        evidence,
        "events",
        head,
        lines,
        basis,
        rows=shown,
        total=len(chosen),
        namespace=ns,
        name=question.name,
        warnings=question.warnings,
    )


def _about(event: Json, question: Events) -> bool:
    kind, _, name = str(event.get("object") or "").partition("/")
    if question.name:
        return name == question.name or name.startswith(question.name + "-")
    wanted = kind_shown(question.kind)
    return wanted is None or kind == wanted[0]


def _of_kind(kind: str) -> str:
    wanted = kind_shown(kind)
    return f" about {wanted[1]}" if wanted else ""


def _line(event: Json, namespace: str | None) -> str:
    kind, _, name = str(event.get("object") or "").partition("/")
    where_from = str(event.get("namespace") or "")
    elsewhere = where_from and where_from != namespace
    cited = f"{kind} {where_from}/{name}" if elsewhere else f"{kind} {name}"
    times = int(event.get("count") or 1)
    seen = str(event.get("last_seen") or "")
    repeated = f" (x{times})" if times > 1 else ""
    message = " ".join(str(event.get("message") or "").split())
    if len(message) > 200:
        message = message[:197] + "..."
    said = f"{event.get('type', '')} {event.get('reason', '')}"
    return f"- {seen} {said} {cited}{repeated}: {message}"
