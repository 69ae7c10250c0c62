"""The Platform graph's state: one request (a propagation, an audit, a blueprint sync, the
escalations it may answer, or a question), what it found and did as plain JSON (`result`,
checkpointed as it is), and the answer shown to the person."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Task = Literal[
    "propagate",
    "compliance",
    "audit",
    "blueprints",
    "escalations",
    "change",
    "question",
    "unsupported",
]


class PlatformState(TypedDict, total=False):
    task: Task  # a procedure (propagate) or a question's kind
    question: str  # the person's words, for a question; empty for a procedure
    namespace: str  # audit or blueprints: the one namespace asked about; "" for the fleet
    fix: bool  # audit or blueprints: deliver fixes (PRs), or only look and report
    pending: dict[str, Any] | None  # a destructive change (a namespace's delete) awaiting "yes"
    result: dict[str, Any]  # what the procedure found and did, as data
    answer: str  # the text shown to the person
