"""The Cluster Operator graph's state: one request (a patrol, a capacity review, a fleet survey
or a question), what the procedure found and did, and the answer; checkpointed after each step.

Procedures return plain JSON (`result`), so the SQLite checkpointer stores it as it is and a
front door can print it with `--json`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

Task = Literal[
    "patrol",
    "capacity",
    "fleet",
    "nodes",
    "drain-preview",
    "savings",
    "maintenance",
    "readiness",
    "upgrade-readiness",
    "upgrade",
    "patching",
    "node-change",
    "question",
    "unsupported",
]


class OperatorState(TypedDict, total=False):
    task: Task  # what is asked: a procedure (patrol, capacity, fleet) or a question's kind
    question: str  # the person's words, for a question; empty for a procedure
    node: str  # the node a drain-preview or maintenance question names
    reason: str  # why a maintenance question wants the node: "kernel upgrade"
    pending: dict[str, Any] | None  # a destructive node change (a drain) waiting for "yes"
    result: dict[str, Any]  # what the procedure found and did, as data
    answer: str  # the text shown to the person
