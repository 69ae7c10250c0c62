"""The remediation loop's state: what one healing run knows, checkpointed after every node.

Everything is plain JSON, so the SQLite checkpointer stores it and a run resumed in another
process reads back exactly what the interrupted one had, including the mutation it intended
(`pending`) before it was carried out: that is what makes a resumed mutate check, not repeat.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict

Outcome = Literal["fixed", "healthy", "escalated"]
Channel = Literal["gitops", "direct"]
# Why a run ended with a person: policy refused or a person said no ("refused", "denied"), no
# fix was offered ("no-fix"), none could be carried out here ("unusable"), or every one tried
# failed validation and was undone ("failed"). Never a request left pending: that run waits.
Escalation = Literal["refused", "denied", "no-fix", "unusable", "failed"]


class Target(TypedDict):
    kind: str
    name: str
    namespace: str


class RankedFix(TypedDict):
    """A fix from the kube server's `recommend`, with where it stands and why."""

    fix: dict[str, Any]  # the Fix as `recommend` gave it (title, steps, patch, evidence, ...)
    score: float  # its confidence adjusted by memory
    reason: str  # why it ranks where it does, in words
    usable: bool  # False: it cannot be applied on this channel (the reason says why)


class Pending(TypedDict):
    """A mutation decided on and written down before it is carried out."""

    key: str  # the idempotency key: the PR branch for gitops, the attempt id for direct writes
    channel: Channel
    fix: dict[str, Any]
    proposal: str  # the policy proposal id once proposed, else empty
    # direct writes: the approved proposal carrying each step policy gave to a person, by the
    # step's index ("0", "1", ...); a step the gate allows as it is carries none
    proposals: NotRequired[dict[str, str]]


class Applied(TypedDict):
    """What a mutation did, so that validation knows what to check and rollback what to undo."""

    channel: Channel
    key: str
    pr: int  # the pull request number (gitops), else 0
    merge_commit: str
    proposal: str
    revision: str  # the Deployment revision before the change (direct rollbacks undo to it)
    notes: list[str]
    # direct writes to objects with no revision (a Service): the write-tool calls that put
    # back the fields the fix changed, as they were read just before it
    restore: NotRequired[list[dict[str, Any]]]


class Attempt(TypedDict):
    fix: str  # the fix's title
    applied: Applied | None
    verdict: Literal["held", "failed", "refused"]
    evidence: list[str]  # what validation (or the refusal) showed
    undone: str  # how it was rolled back, or empty


class LoopState(TypedDict, total=False):
    target: Target  # the object to heal
    incident: str  # the incident id a watch merged its signals into, if any
    observations: list[dict[str, Any]]  # what learn saw (tool, arguments, result, error)
    finding: dict[str, Any]  # the finding being healed (code, summary, ref, evidence)
    fingerprint: str  # memory's key for this failure of this object
    managed: dict[str, Any]  # the manifest defining the target in git ({} when not in git)
    fixes: list[RankedFix]  # ranked, best first
    index: int  # the fix being tried
    pending: Pending | None  # written before mutate acts; cleared when the attempt ends
    applied: Applied | None
    attempts: Annotated[list[Attempt], operator.add]
    approval: str  # the approval request the run waits for (empty: none)
    asked: str  # who may answer it, by when, and how (the policy store's words)
    verdict_evidence: list[str]  # what the last failed validation showed, for the rollback
    escalation: Escalation  # why an escalated run ended (only set when it did)
    outcome: Outcome
    summary: str  # the outcome in words, evidence and links included
