"""Long-term memory of incidents: each diagnosis recorded by fingerprint, recalled when the same
problem shows again.

A fingerprint is the finding's rule code and the object it concerns (`ImagePullBackOff
Deployment shop/web`): the same failure of the same workload, whichever pod showed it. Records
live in the LangGraph store (namespace `(agent, "incidents")`), one per conversation, so the
answer can say "this happened before" and, in the remediation slice, the fix ranking can read
which fix was applied and whether it held (`outcome`, empty until that slice records one).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore


@dataclass(frozen=True)
class Incident:
    fingerprint: str
    code: str
    target: str  # "Deployment web in shop"
    summary: str
    fix: str  # the recommended fix's title, or empty
    thread: str
    at: str  # ISO time it was recorded
    outcome: str = ""  # "fixed" / "failed" once the remediation loop validates a fix


def fingerprint(code: str, kind: str, namespace: str, name: str) -> str:
    return f"{code} {kind} {namespace}/{name}"


def _space(agent: str) -> tuple[str, str]:
    return (agent, "incidents")


async def remember(store: BaseStore, agent: str, incident: Incident) -> None:
    key = f"{incident.fingerprint}@{incident.thread}"
    await store.aput(_space(agent), key, asdict(incident))


async def recall(
    store: BaseStore, agent: str, *, code: str, target: str, exclude_thread: str
) -> list[Incident]:
    """Past incidents with this finding code, the same object first, newest first."""
    items = await store.asearch(_space(agent), filter={"code": code}, limit=50)
    found = [_incident(item.value) for item in items]
    found = [i for i in found if i.thread != exclude_thread]
    return sorted(found, key=lambda i: (i.target != target, _newest_first(i.at)))


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _newest_first(at: str) -> float:
    return -datetime.fromisoformat(at).timestamp()


def _incident(value: dict[str, Any]) -> Incident:
    fields = Incident.__dataclass_fields__
    return Incident(**{k: str(v) for k, v in value.items() if k in fields})
