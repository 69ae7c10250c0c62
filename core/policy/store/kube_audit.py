"""The audit log as custom resources: one AuditRecord per seq, a head object as the lock.

The API server has no multi-object transaction, so an append is committed by one compare-and-swap
on the head (`auditheads/head`), and the record objects are written after it:

1. read the head; if it still lists `pending` records, finish them first (step 3);
2. chain the new entries after the head and CAS the head to the new last seq and hash, with the
   chained records as `pending` and the batch's id added to `batches`;
3. create each pending record (named by its zero-padded seq; AlreadyExists means another writer
   finished it already, with the same bytes, since they came from the same head), then CAS the
   head's `pending` away.

A crash after step 2 leaves a head whose pending records the next reader or writer creates, so
the log never has a gap and `audit.verify` reads it intact once settled; a crash before step 2
appended nothing. `batches` (the last `KEPT` batch ids) makes an append idempotent: the write
whose audit entries wait in its object (see `Pending`) can be flushed again by anyone after a
crash without appearing twice.

Objects whose write has audit entries still to append carry them in `spec.audit` (a list of
batches) and the label `kubecrew.io/audit=pending`; every write flushes every such object, so the
entries of a write that crashed before its flush are appended by the next writer.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from core.connection import Json
from core.errors import Conflict, Unavailable
from core.policy.audit import GENESIS, AuditEntry, AuditHead, AuditRecord, chain
from core.policy.store.kube_objects import Exists, Lost, Resources, labels_of, spec_of

HEADS, RECORDS = "auditheads", "auditrecords"
HEAD = "head"
KEPT = 100
PENDING_LABEL = "kubecrew.io/audit"
ATTEMPTS = 50


def new_batch(entries: Sequence[AuditEntry]) -> dict[str, Any]:
    """A write's audit entries as its object keeps them until they are appended."""
    return {
        "batch": secrets.token_hex(8),
        "entries": [e.model_dump(mode="json") for e in entries],
    }


def with_pending(spec: Json, labels: dict[str, str], batch: Json) -> tuple[Json, dict[str, str]]:
    """`spec` and `labels` of an object whose write adds `batch` to the audit entries it owes."""
    return (
        {**spec, "audit": [*(spec.get("audit") or []), batch]},
        {**labels, PENDING_LABEL: "pending"},
    )


def record_name(seq: int) -> str:
    return f"{seq:012d}"


@dataclass(frozen=True)
class AuditLog:
    resources: Resources

    def append(self, batch: str, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
        """Append `entries` once as batch `batch`; [] when that batch is in the log already."""
        for _ in range(ATTEMPTS):
            head = self._settled_head()
            spec = spec_of(head)
            if batch in (spec.get("batches") or []):
                return []
            records = chain(_head(spec), entries)
            if not records:
                return []
            new = {
                "seq": records[-1].seq,
                "hash": records[-1].hash,
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
        return _head(spec_of(self._settled_head()))

    def records(self) -> list[AuditRecord]:
        self._settled_head()
        found = []
        for obj in self.resources.list(RECORDS):
            try:
                found.append(AuditRecord.model_validate(spec_of(obj)))
            except ValidationError as exc:
                name = obj["metadata"]["name"]
                raise Unavailable(
                    f"audit record object {name} is no longer an audit record ({exc}); it was "
                    f"edited by hand: `kubectl get auditrecord {name} -o yaml` shows it"
                ) from exc
        return sorted(found, key=lambda record: record.seq)

    def flush(self, plurals: Sequence[str]) -> None:
        """Append the entries every object of `plurals` still owes, oldest first, and clear them."""
        owing = [
            (plural, obj)
            for plural in plurals
            for obj in self.resources.list(plural, selector=f"{PENDING_LABEL}=pending")
        ]
        owing.sort(key=lambda item: _first_at(item[1]))
        for plural, obj in owing:
            self._flush_one(plural, obj)

    def _flush_one(self, plural: str, obj: Json) -> None:
        for _ in range(ATTEMPTS):
            batches = spec_of(obj).get("audit") or []
            for batch in batches:
                entries = [AuditEntry.model_validate(e) for e in batch["entries"]]
                self.append(batch["batch"], entries)
            done = {batch["batch"] for batch in batches}
            spec = spec_of(obj)
            left = [b for b in spec.get("audit") or [] if b["batch"] not in done]
            labels = labels_of(obj)
            if not left:
                labels.pop(PENDING_LABEL, None)
            try:
                self.resources.replace(plural, obj, {**spec, "audit": left}, labels)
                return
            except Lost:
                fresh = self.resources.get(plural, obj["metadata"]["name"])
                if fresh is None or not spec_of(fresh).get("audit"):
                    return
                obj = fresh

    def _settled_head(self) -> Json:
        """The head with no pending records: created when missing, finished when pending."""
        for _ in range(ATTEMPTS):
            head = self.resources.get(HEADS, HEAD)
            if head is None:
                try:
                    empty = {"seq": 0, "hash": GENESIS, "batches": [], "pending": []}
                    head = self.resources.create(HEADS, "AuditHead", HEAD, empty, {})
                except Exists:
                    continue
            if not spec_of(head).get("pending"):
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
    batches = spec_of(obj).get("audit") or [{}]
    entries = batches[0].get("entries") or [{}]
    return str(entries[0].get("at", "")), obj["metadata"].get("creationTimestamp", "")
