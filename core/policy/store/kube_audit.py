"""The audit log as custom resources: one AuditRecord per seq, a head object as the lock.

The API server has no multi-object transaction, so an append is committed by one compare-and-swap
on the head (`auditheads/head`), and the record objects are written after it:

1. read the head; if it still lists `pending` records, finish them first (step 3);
2. chain the new entries after the head and CAS the head to the new last seq and hash, sealed
   with the store's key (`audit.seal`; the key is a Secret, `kube_key`), with the chained
   records as `pending` and the batch's id added to `batches`;
3. create each pending record (named by its zero-padded seq; AlreadyExists means another writer
   finished it already, with the same bytes, since they came from the same head), then CAS the
   head's `pending` away.

A crash after step 2 leaves a head whose pending records the next reader or writer creates, so
the log never has a gap and `audit.verify` reads it intact once settled; a crash before step 2
appended nothing. `batches` (the last `KEPT` batch ids) makes an append idempotent: the write
whose audit entries wait in its object (see `Pending`) can be flushed again by anyone after a
crash without appearing twice.

Objects whose write has audit entries still to append carry them in `status.audit` (a list of
batches), written with the write itself, where only the store's identity may write; every write
flushes every such object, so the entries of a write that crashed before its flush are appended
by the next writer. (A label to select them by cannot be set through the status subresource, so
the flush reads them all.) Reading never creates the head: an identity that may only read (an
agent) sees an empty log until the store's identity writes.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from core.connection import Json
from core.errors import Conflict, Unavailable
from core.policy import audit
from core.policy.audit import GENESIS, AuditEntry, AuditHead, AuditRecord, AuditReport, chain, seal
from core.policy.proposals import Decision
from core.policy.store.kube_objects import Exists, Lost, Resources, spec_of, status_of

HEADS, RECORDS = "auditheads", "auditrecords"
HEAD = "head"
KEPT = 100
ATTEMPTS = 50


def new_batch(entries: Sequence[AuditEntry]) -> dict[str, Any]:
    """A write's audit entries as its object keeps them until they are appended."""
    return {
        "batch": secrets.token_hex(8),
        "entries": [e.model_dump(mode="json") for e in entries],
    }


def with_pending(status: Json, batch: Json) -> Json:
    """`status` of an object whose write adds `batch` to the audit entries it owes."""
    return {**status, "audit": [*(status.get("audit") or []), batch]}


def record_name(seq: int) -> str:
    return f"{seq:012d}"


@dataclass(frozen=True)
class AuditLog:
    resources: Resources
    key: Callable[[], bytes]  # the store's sealing key, read when first needed

    def append(self, batch: str, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
        """Append `entries` once as batch `batch`; [] when that batch is in the log already."""
        for _ in range(ATTEMPTS):
            head = self._made_head()
            spec = spec_of(head)
            if batch in (spec.get("batches") or []):
                return []
            records = chain(_head(spec), entries)
            if not records:
                return []
            last = AuditHead(seq=records[-1].seq, hash=records[-1].hash)
            new = {
                "seq": last.seq,
                "hash": last.hash,
                "seal": seal(self.key(), last),
                "batches": [*(spec.get("batches") or []), batch][-KEPT:],
                "pending": [r.model_dump(mode="json") for r in records],
            }
            try:
                written = self.resources.replace(HEADS, head, new)
            except Lost:
                continue  # another append won the head: chain after it
            self._settle(written)
            return records
        raise Conflict(f"the audit head kept changing during {ATTEMPTS} attempts to append; retry")

    def head(self) -> AuditHead:
        return self.sealed_head()[0]

    def sealed_head(self) -> tuple[AuditHead, str]:
        """The head and its stored seal (empty and "" before the first write)."""
        head = self._settled_head()
        spec = spec_of(head) if head is not None else {}
        return _head(spec), str(spec.get("seal") or "")

    def attest(self, proposal_id: str, decision: Decision) -> str:
        """`audit.attest` on the log from the proposal's last decision record to the head."""
        head, stored_seal = self.sealed_head()
        records = self.records()
        mine = [
            i for i, r in enumerate(records) if r.kind == "decision" and r.subject == proposal_id
        ]
        tail = records[mine[-1] :] if mine else []
        sealed = not audit.unsealed(head, stored_seal, self.key())
        return audit.attest(proposal_id, decision, tail, head, sealed=sealed)

    def verify(self, decisions: dict[str, Decision]) -> AuditReport:
        """The whole log checked: chain, objects, the head's seal, and `decisions` (each
        proposal's stored decision) against their records."""
        key = self.key()  # checked as the store's identity: the key is the store's
        head, stored_seal = self.sealed_head()
        records, problems = self.stored()
        problems = (
            audit.verify(records, head)
            + problems
            + (audit.unsealed(head, stored_seal, key) if head.seq or stored_seal else [])
            + audit.decisions(decisions, records)
        )
        return AuditReport(head=head, records=len(records), problems=problems)

    def records(self) -> list[AuditRecord]:
        found, broken = self._read()
        if broken:
            name = broken[0]
            raise Unavailable(
                f"audit record object {name} is no longer an audit record; it was edited by "
                f"hand: `kubectl get auditrecord {name} -o yaml` shows it"
            )
        return [record for _, record in found]

    def stored(self) -> tuple[list[AuditRecord], list[str]]:
        """Every record by seq, and what is wrong with objects that hold none or another one."""
        found, broken = self._read()
        problems = [
            f"audit record object {name} is no longer an audit record: it was edited by hand "
            f"(`kubectl get auditrecord {name} -o yaml` shows it)"
            for name in broken
        ] + [
            f"audit record object {name} holds record {record.seq}: it was renamed"
            for name, record in found
            if name != record_name(record.seq)
        ]
        return [record for _, record in found], problems

    def _read(self) -> tuple[list[tuple[str, AuditRecord]], list[str]]:
        self._settled_head()
        found, broken = [], []
        for obj in self.resources.list(RECORDS):
            name = str(obj["metadata"]["name"])
            try:
                found.append((name, AuditRecord.model_validate(spec_of(obj))))
            except ValidationError:
                broken.append(name)
        return sorted(found, key=lambda item: item[1].seq), broken

    def flush(self, plural: str, objects: Sequence[Json]) -> None:
        """Append the entries each of `objects` still owes, oldest first, and clear them."""
        owing = [obj for obj in objects if status_of(obj).get("audit")]
        owing.sort(key=_first_at)
        for obj in owing:
            self._flush_one(plural, obj)

    def _flush_one(self, plural: str, obj: Json) -> None:
        for _ in range(ATTEMPTS):
            batches = status_of(obj).get("audit") or []
            for batch in batches:
                entries = [AuditEntry.model_validate(e) for e in batch["entries"]]
                self.append(batch["batch"], entries)
            done = {batch["batch"] for batch in batches}
            status = status_of(obj)
            left = [b for b in status.get("audit") or [] if b["batch"] not in done]
            try:
                self.resources.replace_status(plural, obj, {**status, "audit": left})
                return
            except Lost:
                fresh = self.resources.get(plural, obj["metadata"]["name"])
                if fresh is None or not status_of(fresh).get("audit"):
                    return
                obj = fresh

    def _made_head(self) -> Json:
        """The settled head, created (sealed, empty) when there is none yet."""
        for _ in range(ATTEMPTS):
            head = self._settled_head()
            if head is not None:
                return head
            empty = {"seq": 0, "hash": GENESIS, "seal": seal(self.key(), AuditHead())}
            with contextlib.suppress(Exists):
                self.resources.create(
                    HEADS, "AuditHead", HEAD, {**empty, "batches": [], "pending": []}, {}
                )
        raise Conflict(f"the audit head kept changing during {ATTEMPTS} reads; retry")

    def _settled_head(self) -> Json | None:
        """The head with no pending records (finished when pending); None before the first."""
        for _ in range(ATTEMPTS):
            head = self.resources.get(HEADS, HEAD)
            if head is None or not spec_of(head).get("pending"):
                return head
            self._settle(head)
        raise Conflict(f"the audit head kept changing during {ATTEMPTS} reads; retry")

    def _settle(self, head: Json) -> None:
        spec = spec_of(head)
        for record in spec.get("pending") or []:
            labels = {"kubecrew.io/audit-kind": str(record["kind"])}
            name = record_name(int(record["seq"]))
            with contextlib.suppress(Exists):  # another reader finished it, from the same head
                self.resources.create(RECORDS, "AuditRecord", name, record, labels)
        with contextlib.suppress(Lost):  # someone else settled it (and maybe appended since)
            self.resources.replace(HEADS, head, {**spec, "pending": []})


def _head(spec: Json) -> AuditHead:
    return AuditHead(seq=int(spec.get("seq") or 0), hash=str(spec.get("hash") or GENESIS))


def _first_at(obj: Json) -> tuple[str, str]:
    batches = status_of(obj).get("audit") or [{}]
    entries = batches[0].get("entries") or [{}]
    return str(entries[0].get("at", "")), obj["metadata"].get("creationTimestamp", "")
