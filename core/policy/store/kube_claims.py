"""A store write that spans objects, made safe by claiming the target first.

A decision, an answer or an expiry changes up to three objects: the target's approval version,
the approval request and the proposal (its transcript, decision and owed audit entries). The API
server updates one object at a time, so each such write is first written whole, as a `Claim`,
into the PolicyTarget object with one compare-and-swap (which also moves the target's approval
version when the write approves). That CAS is the commit point: once it succeeds the write will
happen, and until it succeeds nothing did. Then the claim is applied object by object and
cleared:

1. the approval request: created (its status then written, revision 0 -> 1) or its status
   replaced when still at the revision the claim was computed from;
2. the proposal's status: replaced when its write count is still the one the claim read,
   adding the events, the new state and decision (or use), and the audit batch it now owes
   (`kube_audit`);
3. the target's claim removed (CAS; a lost race means someone else cleared it).

Every step checks whether it is done already, so applying a claim twice changes nothing: a
reader that finds a claim (a writer crashed, or is still busy) applies it before it reads on.
Because every write to a proposal after it is made goes through its target's claim, no write is
computed from a state that a pending claim is about to change, and a proposal is decided once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from core.connection import Json
from core.errors import Conflict
from core.policy.store.kube_audit import with_pending
from core.policy.store.kube_objects import (
    Exists,
    Lost,
    Resources,
    labels_of,
    object_name,
    spec_of,
    status_of,
)

PROPOSALS, APPROVALS, TARGETS = "proposals", "approvalrequests", "policytargets"
CLAIM_LABEL = "kubecrew.io/claim"
ATTEMPTS = 50


@dataclass(frozen=True)
class Claim:
    proposal: str  # the proposal's id
    writes: int  # the proposal object's write count this was computed from
    fields: Json  # status fields of the proposal to set: proposal, decision, state, used, ...
    events: list[Json]  # transcript events to append
    batch: Json  # the audit entries the write owes (kube_audit.new_batch)
    approval: Json | None = None  # {"id", "revision" (0: create), "request"}
    id: str = ""

    def to_json(self) -> Json:
        return {
            "id": self.id or secrets.token_hex(8),
            "proposal": self.proposal,
            "writes": self.writes,
            "fields": self.fields,
            "events": self.events,
            "batch": self.batch,
            "approval": self.approval,
        }

    @classmethod
    def from_json(cls, data: Json) -> Claim:
        return cls(
            proposal=str(data["proposal"]),
            writes=int(data["writes"]),
            fields=dict(data.get("fields") or {}),
            events=list(data.get("events") or []),
            batch=dict(data["batch"]),
            approval=data.get("approval"),
            id=str(data["id"]),
        )


def commit(
    resources: Resources,
    key: str,
    target: Json | None,
    claim: Claim,
    *,
    approves: bool,
) -> Json:
    """CAS `claim` onto the target object as read (None: not made yet); Lost if it moved."""
    spec: Json = spec_of(target) if target is not None else {"key": key, "version": 0}
    if spec.get("claim"):
        raise Lost(f"target {key} is being written by another claim; apply it and re-read")
    new = {**spec, "claim": claim.to_json()}
    if approves:
        new = {**new, "version": int(spec.get("version") or 0) + 1, "proposal": claim.proposal}
    labels = {**(labels_of(target) if target is not None else {}), CLAIM_LABEL: "pending"}
    if target is None:
        try:
            return resources.create(TARGETS, "PolicyTarget", object_name("t", key), new, labels)
        except Exists as exc:
            raise Lost(exc.message) from exc
    return resources.replace(TARGETS, target, new, labels)


def apply(resources: Resources, target: Json) -> None:
    """Carry out the claim `target` holds, if any, and clear it. Safe to repeat."""
    data = spec_of(target).get("claim")
    if not data:
        return
    claim = Claim.from_json(data)
    if claim.approval is not None:
        _approval(resources, claim.approval)
    _proposal(resources, claim)
    _clear(resources, target, str(data.get("id")))


def pending(resources: Resources) -> list[Json]:
    """Every target object that holds a claim (a write in progress, or one that crashed)."""
    return resources.list(TARGETS, selector=f"{CLAIM_LABEL}=pending")


def _approval(resources: Resources, change: Json) -> None:
    name = object_name("a", str(change["id"]))
    revision = int(change["revision"])
    request: dict[str, Any] = change["request"]
    status = {
        "request": request,
        "state": request["state"],
        "proposal": request["proposal"],
        "revision": revision + 1,
    }
    labels = {"kubecrew.io/proposal": object_name("p", str(request["proposal"]))}
    for _ in range(ATTEMPTS):
        found = resources.get(APPROVALS, name)
        if found is None:
            if revision != 0:
                raise Conflict(f"approval request {change['id']} vanished while being answered")
            spec = {"proposal": request["proposal"]}
            try:
                found = resources.create(APPROVALS, "ApprovalRequest", name, spec, labels)
            except Exists:
                continue
        if int(status_of(found).get("revision") or 0) != revision:
            return  # applied already
        try:
            resources.replace_status(APPROVALS, found, status)
            return
        except Lost:
            continue
    raise Conflict(f"approval request {change['id']} kept changing; retry")


def _proposal(resources: Resources, claim: Claim) -> None:
    name = object_name("p", claim.proposal)
    for _ in range(ATTEMPTS):
        found = resources.get(PROPOSALS, name)
        if found is None:
            raise Conflict(f"proposal {claim.proposal} vanished while being decided")
        status = status_of(found)
        if int(status.get("writes") or 0) != claim.writes:
            return  # applied already
        new = {
            **status,
            **claim.fields,
            "transcript": [*(status.get("transcript") or []), *claim.events],
            "writes": claim.writes + 1,
        }
        try:
            resources.replace_status(PROPOSALS, found, with_pending(new, claim.batch))
            return
        except Lost:
            continue  # an audit flush cleared its owed entries meanwhile: re-read
    raise Conflict(f"proposal {claim.proposal} kept changing; retry")


def _clear(resources: Resources, target: Json, claim_id: str) -> None:
    current: Json | None = target
    for _ in range(ATTEMPTS):
        if current is None or str((spec_of(current).get("claim") or {}).get("id")) != claim_id:
            return  # someone else cleared it
        labels = labels_of(current)
        labels.pop(CLAIM_LABEL, None)
        try:
            spec = {k: v for k, v in spec_of(current).items() if k != "claim"}
            resources.replace(TARGETS, current, spec, labels)
            return
        except Lost:
            current = resources.get(TARGETS, current["metadata"]["name"])
    raise Conflict("a policy target kept changing while its claim was cleared; retry")
