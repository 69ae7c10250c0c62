"""The policy store as custom resources, so agents on many machines share one store.

Everything lives in one namespace (`kubecrew-system` by default) as the kinds of `kube_crds`:
a Proposal per proposal (its transcript and decision in its status), an ApprovalRequest per
request, a PolicyTarget per target that has ever been claimed, and the audit log (`kube_audit`)
sealed with a key in a Secret (`kube_key`). Bodies are the pydantic models' JSON, as the SQLite
store keeps them, and what a write does is computed by the same functions (`approvals.settle`,
`audit.decided`, ...), so both backends hold the same documents, transcripts and audit chains,
hashes included.

Whose writes these are: the store's own identity is the kubeconfig the kubecrew process opens
the store with (`open_store` reads `$KUBECONFIG`: the person or the service account running the
policy server and the kube server's gate), never an agent's ServiceAccount, whose token its kube
tools carry to the cluster. deploy/rbac/policy-store.yaml gives that identity the Role
`kubecrew-policy-store-writer` (statuses, targets, the audit log, the key) and agents the Role
`kubecrew-policy-store` (read, and create proposals: a created proposal is only a request, which
the store opens from its spec). A decision edited anyway (by an identity with more rights) is not
used: `use_approval` checks it against the sealed chain (`audit.attest`).

The API server's only concurrency control is a compare-and-swap on one object's resourceVersion,
so the rules of `store.base` are kept like this (a crash between any two writes leaves a state
the next reader finishes without deciding anything twice):

- A proposal is created once (create; AlreadyExists is a Conflict), its basis read from its
  target when it is opened (below). After that every write to it (decide, an answer, an
  expiry, a use) is a `kube_claims.Claim` committed by one CAS on its target's PolicyTarget,
  which also moves the target's approval version when the write approves. The claim is
  computed from the target as read without a claim and from the proposal read after it, so a
  commit that succeeds was computed from current state: two conflicting proposals on one
  target are never both approved, and a proposal leaves "open" or "escalated" once. Readers
  apply a claim they find before reading on.
- Audit entries travel inside the write that owes them (the proposal's `status.audit`) and are
  appended right after it; every write flushes whatever any object still owes (`kube_audit`).
- A proposal is created with its spec alone and opened (its status written) right after; a
  reader that finds one not yet opened (a crash between the two, or an agent's create) opens it.
- An ended request is claimed for a waiter by a CAS on the request's status.
- An approval is used through a claim too (its target's CAS), so a use commits only while the
  proposal is still its target's latest approval and unused: one of concurrent uses wins.

Modules: `kube_objects` (API access, names, installing the CRDs), `kube_claims` (the commit
protocol), `kube_bodies` (documents in objects, claims per write), `kube_audit` (the log),
`kube_key` (the Secret that seals it).
It knows nothing of negotiation; the kubeconfig decides which cluster, real or sandbox.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from core.connection import Clusters, Json
from core.errors import Conflict, NotFound
from core.policy import audit
from core.policy.actions import TargetRef
from core.policy.approvals import ended_message, expired_message, lapse, settle
from core.policy.audit import AuditEntry, AuditHead, AuditKind, AuditRecord, AuditReport, Tampered
from core.policy.proposals import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalState,
    Decision,
    Identity,
    Proposal,
    ProposalRecord,
    ProposalState,
    TranscriptEvent,
)
from core.policy.store import kube_bodies as bodies
from core.policy.store import kube_claims, kube_key
from core.policy.store.base import TargetState, decided_state, target_key, unusable
from core.policy.store.kube_audit import AuditLog, new_batch
from core.policy.store.kube_claims import APPROVALS, PROPOSALS, TARGETS, Claim, commit
from core.policy.store.kube_objects import Exists, Lost, Resources, install, object_name
from core.policy.store.kube_objects import spec_of as _spec
from core.policy.store.kube_objects import status_of as _status

NAMESPACE = "kubecrew-system"
ATTEMPTS = 20
_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


class KubernetesStore:
    def __init__(
        self,
        kubeconfig: Path | None = None,
        context: str | None = None,
        namespace: str = NAMESPACE,
    ) -> None:
        self._clusters = Clusters(kubeconfig=kubeconfig, default_context=context)
        api = self._clusters.api()
        install(api, namespace)
        self._objects = Resources(api, namespace)
        self._log = AuditLog(self._objects, key=self._sealing_key)
        self._keys: dict[str, str] = {}  # proposal or request id -> target key (never changes)
        self._audit_key: bytes | None = None  # read from its Secret when first needed
        self.where = f"the {namespace} namespace of context {api.context}"

    def identity(self) -> Identity:
        """Who the API server says the caller is: a person, with the groups it vouches for."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        review = self._objects.api.request("POST", _REVIEWS, body=body, what="SelfSubjectReview")
        user = (review.get("status") or {}).get("userInfo") or {}
        return Identity(
            kind="person", name=str(user.get("username")), groups=tuple(user.get("groups") or ())
        )

    # --- proposals ----------------------------------------------------------------------------

    def propose(self, proposal: Proposal) -> ProposalRecord:
        key = target_key(proposal.action.target)
        spec = {"proposal": bodies.dump(proposal), "target": key}
        name = object_name("p", proposal.id)
        try:
            created = self._objects.create(PROPOSALS, "Proposal", name, spec, {})
        except Exists as exc:
            raise Conflict(
                f"proposal {proposal.id} already exists; propose under a new id"
            ) from exc
        self._keys[proposal.id] = key
        opened = self._open(created)
        self._flush()
        return bodies.record(opened)

    def get(self, proposal_id: str) -> ProposalRecord:
        return bodies.record(self._proposal(proposal_id))

    def list(self, *, state: ProposalState | None = None) -> builtins.list[Proposal]:
        self._finish_claims()
        objects = self._objects.list(PROPOSALS)
        found = [bodies.record(obj).proposal for obj in objects if bodies.is_open(obj)]
        chosen = [p for p in found if state is None or p.state == state]
        return sorted(chosen, key=lambda p: (p.created.isoformat(), p.id))

    def target(self, target: TargetRef) -> TargetState:
        return self._target(target_key(target))[1]

    def decide(
        self,
        proposal_id: str,
        *,
        version: int,
        events: Sequence[TranscriptEvent],
        decision: Decision,
        approval: ApprovalRequest | None = None,
    ) -> ProposalRecord:
        decided_state(proposal_id, decision, approval)
        for _ in range(ATTEMPTS):
            key = self._key(proposal_id)
            held, current = self._target(key)
            obj = self._proposal(proposal_id, finish=False)
            record = bodies.record(obj)
            if record.proposal.state != "open":
                raise Conflict(
                    f"proposal {proposal_id} is already {record.proposal.state}; "
                    f"re-read it for its decision"
                )
            if record.version != version:
                raise Conflict(
                    f"proposal {proposal_id} changed since version {version} was read "
                    f"(now {record.version}); re-read it and decide again"
                )
            approves = decision.approves
            if approves and current.version != record.proposal.basis:
                raise Conflict(
                    f"{record.proposal.action.target} has been decided by proposal "
                    f"{current.proposal} since proposal {proposal_id} was made; re-read and "
                    f"decide again"
                )
            claim = bodies.decision_claim(record, obj, events, decision, approval)
            if approval is not None:
                self._keys[approval.id] = key
            if self._commit(key, held, claim, approves=approves):
                return self.get(proposal_id)
        raise Conflict(
            f"the target of proposal {proposal_id} kept changing during {ATTEMPTS} attempts "
            f"to decide it; retry"
        )

    # --- approvals ----------------------------------------------------------------------------

    def approval(self, request_id: str) -> ApprovalRequest:
        return bodies.request(self._approval(request_id))

    def approvals(self, *, state: ApprovalState | None = None) -> builtins.list[ApprovalRequest]:
        self._finish_claims()
        objects = self._objects.list(APPROVALS)
        found = [bodies.request(obj) for obj in objects if "request" in _status(obj)]
        chosen = [r for r in found if state is None or r.state == state]
        return sorted(chosen, key=lambda r: (r.requested_at.isoformat(), r.id))

    def answer(self, request_id: str, given: ApprovalAnswer, *, now: datetime) -> ApprovalRequest:
        request, late = self._settle(request_id, given, now=now)
        if late:  # the expiry is written; the answer is refused
            raise Conflict(expired_message(request))
        return request

    def expire(self, *, now: datetime) -> builtins.list[ApprovalRequest]:
        ended: builtins.list[ApprovalRequest] = []
        for request in self.approvals(state="pending"):
            if now > request.expires_at:
                try:
                    ended.append(self._settle(request.id, None, now=now)[0])
                except Conflict:
                    continue  # someone else ended it meanwhile
        return ended

    def claim(self, request_id: str, *, waiter: str) -> ApprovalRequest | None:
        for _ in range(ATTEMPTS):
            obj = self._approval(request_id)
            request = bodies.request(obj)
            if not request.ended:
                raise Conflict(
                    f"{request_id} is still pending: nothing to claim until it is answered"
                )
            if request.claimed_by is not None:
                return None
            claimed = request.model_copy(update={"claimed_by": waiter})
            try:
                self._objects.replace_status(
                    APPROVALS, obj, {**_status(obj), "request": bodies.dump(claimed)}
                )
            except Lost:
                continue
            return claimed
        raise Conflict(f"{request_id} kept changing while it was claimed; retry")

    def _settle(
        self, request_id: str, given: ApprovalAnswer | None, *, now: datetime
    ) -> tuple[ApprovalRequest, bool]:
        """Take `given` (None: only expire it when late) under the target's claim."""
        for _ in range(ATTEMPTS):
            key = self._key(request_id, approval=True)
            held, current = self._target(key)
            obj = self._approval(request_id, finish=False)
            request = bodies.request(obj)
            if request.ended:
                raise Conflict(ended_message(request))
            late = now > request.expires_at
            if given is None and not late:
                raise Conflict(f"{request_id} has not expired yet")
            proposal = self._proposal(request.proposal, finish=False)
            record = bodies.record(proposal)
            settled = (
                lapse(request, record, now=now)
                if late or given is None
                else settle(request, given, record, current, now=now)
            )
            claim = bodies.settlement_claim(record, proposal, obj, settled)
            if self._commit(key, held, claim, approves=settled.approves):
                return settled.request, late
        raise Conflict(f"{request_id} kept changing during {ATTEMPTS} attempts; retry")

    # --- using an approval --------------------------------------------------------------------

    def use_approval(
        self, proposal_id: str, *, by: str, now: datetime, dry_run: bool = False
    ) -> Decision:
        self._flush()  # a decision's own records may still be owed
        for _ in range(ATTEMPTS):
            key = self._key(proposal_id)
            held, current = self._target(key)
            obj = self._proposal(proposal_id, finish=False)
            record = bodies.record(obj)
            forged = (
                "" if record.decision is None else self._log.attest(proposal_id, record.decision)
            )
            if forged:
                self.record([audit.refused_use(proposal_id, forged, by=by, at=now)])
                raise Tampered(forged)
            decision = unusable(record, current, bodies.use(obj))
            if dry_run:
                return decision
            claim = bodies.use_claim(obj, audit.used(proposal_id, decision, by=by, at=now))
            if self._commit(key, held, claim, approves=False):
                return decision
        raise Conflict(f"the target of proposal {proposal_id} kept changing; retry")

    # --- audit --------------------------------------------------------------------------------

    def record(self, entries: Sequence[AuditEntry]) -> builtins.list[AuditRecord]:
        self._flush()
        return self._log.append(new_batch(entries)["batch"], entries)

    def audit(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        subject: str | None = None,
        kind: AuditKind | None = None,
    ) -> builtins.list[AuditRecord]:
        self._flush()
        chosen = [
            r
            for r in self._log.records()
            if r.seq > after
            and (subject is None or r.subject == subject)
            and (kind is None or r.kind == kind)
        ]
        return chosen if limit is None else chosen[:limit]

    def audit_head(self) -> AuditHead:
        return self._log.head()

    def verify_audit(self) -> AuditReport:
        self._flush()
        opened = [bodies.record(o) for o in self._objects.list(PROPOSALS) if bodies.is_open(o)]
        return self._log.verify({r.proposal.id: r.decision for r in opened if r.decision})

    def _sealing_key(self) -> bytes:
        if self._audit_key is None:
            self._audit_key = kube_key.load(
                self._objects.api,
                self._objects.namespace,
                sealed=lambda: bool(self._log.sealed_head()[1]),
            )
        return self._audit_key

    def close(self) -> None:
        self._clusters.close()

    # --- reading, with the repairs a reader owes ------------------------------------------------

    def _target(self, key: str) -> tuple[Json | None, TargetState]:
        """The target object with no claim left on it (applied first), and its state."""
        name = object_name("t", key)
        for _ in range(ATTEMPTS):
            obj = self._objects.get(TARGETS, name)
            if obj is None:
                return None, TargetState()
            spec = _spec(obj)
            if spec.get("claim"):
                kube_claims.apply(self._objects, obj)
                self._flush()
                continue
            version = int(spec.get("version") or 0)
            return obj, TargetState(version=version, proposal=spec.get("proposal") or None)
        raise Conflict(f"target {key} kept being claimed; retry")

    def _proposal(self, proposal_id: str, *, finish: bool = True) -> Json:
        if finish:
            self._target(self._key(proposal_id))
        obj = self._objects.get(PROPOSALS, object_name("p", proposal_id))
        if obj is None:
            raise NotFound(
                f"no proposal {proposal_id} in {self.where}; `kubecrew proposals list` shows them"
            )
        return obj if bodies.is_open(obj) else self._open(obj)

    def _open(self, obj: Json) -> Json:
        """Give a created proposal the status it starts with (its basis read now), once."""
        name = obj["metadata"]["name"]
        asked = bodies.asked(obj)
        if asked is None:
            raise NotFound(
                f"proposal object {name} holds no proposal named for it; it was not made by the "
                f"store: `kubectl get proposal {name} -o yaml` shows it"
            )
        for _ in range(ATTEMPTS):
            if bodies.is_open(obj):
                return obj
            basis = self._target(target_key(asked.action.target))[1].version
            try:
                return self._objects.replace_status(PROPOSALS, obj, bodies.opened(asked, basis)[1])
            except Lost:
                fresh = self._objects.get(PROPOSALS, name)
                if fresh is None:
                    raise NotFound(f"proposal object {name} was deleted") from None
                obj = fresh
        raise Conflict(f"proposal object {name} kept changing while it was opened; retry")

    def _approval(self, request_id: str, *, finish: bool = True) -> Json:
        if finish:
            self._target(self._key(request_id, approval=True))
        obj = self._objects.get(APPROVALS, object_name("a", request_id))
        if obj is None:
            raise NotFound(
                f"no approval request {request_id} in {self.where}; "
                f"`kubecrew approvals list` shows them"
            )
        return obj

    def _key(self, object_id: str, *, approval: bool = False) -> str:
        """The target key of a proposal or request, read once (a target never changes)."""
        if object_id not in self._keys:
            if approval:
                proposal = str(_spec(self._approval(object_id, finish=False))["proposal"])
                key = self._key(proposal)
            else:
                key = str(_status(self._proposal(object_id, finish=False))["target"])
            self._keys[object_id] = key
        return self._keys[object_id]

    def _commit(self, key: str, held: Json | None, claim: Claim, *, approves: bool) -> bool:
        """Commit and apply `claim`; False when the target moved since it was read."""
        try:
            committed = commit(self._objects, key, held, claim, approves=approves)
        except Lost:
            return False
        kube_claims.apply(self._objects, committed)
        self._flush()
        return True

    def _finish_claims(self) -> None:
        for target in kube_claims.pending(self._objects):
            kube_claims.apply(self._objects, target)
        self._flush()

    def _flush(self) -> None:
        """Open the proposals created but not yet opened, and append what any still owes."""
        objects = []
        for obj in self._objects.list(PROPOSALS):
            if not bodies.is_open(obj):
                try:
                    obj = self._open(obj)
                except NotFound:
                    continue  # not a proposal the store can open (`_open` says why)
            objects.append(obj)
        self._log.flush(PROPOSALS, objects)
