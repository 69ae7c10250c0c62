"""How objects go away: graceful deletion, finalizers, garbage collection, namespace termination.

Kubernetes semantics, kept in one place:
- DELETE removes an object at once unless it has finalizers or is a pod bound to a node with a
  grace period; then it only gets `deletionTimestamp` (and `deletionGracePeriodSeconds`) and stays
  visible until the finalizers are gone or the grace period ends.
- `propagationPolicy` decides what happens to dependents (objects whose ownerReferences name the
  deleted owner's uid): Background deletes them after the owner, Foreground deletes them before
  it (the owner waits with the `foregroundDeletion` finalizer), Orphan strips their owner
  references (the owner waits with the `orphan` finalizer).
- Deleting a namespace marks it Terminating, deletes everything in it, then removes it.

`sweep()` finishes what waits (expired grace periods, foreground owners, terminating namespaces);
the server runs it on a short interval. The simulated kubelet will later own pod termination.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal, cast

from sandbox.auth import UserInfo
from sandbox.clock import format_time, parse_time
from sandbox.errors import BadRequest, Conflict
from sandbox.objects import Objects, WriteOptions
from sandbox.registry import ResourceType
from sandbox.store import Change, Key, Obj

Propagation = Literal["Background", "Foreground", "Orphan"]
Ref = tuple[Key, str, str]  # (key, namespace, name)

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
_NAMESPACES: Key = ("", "namespaces")
_PODS: Key = ("", "pods")


@dataclass(frozen=True)
class DeleteOptions:
    grace_period: int | None = None
    propagation: Propagation = "Background"
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False
    user: UserInfo | None = None  # a client's DELETE, judged by validating admission
    warnings: list[str] = field(default_factory=list, compare=False)  # what admission warned

    @classmethod
    def parse(cls, body: Any, query: dict[str, str], *, dry_run: bool) -> DeleteOptions:
        body = body or {}
        if not isinstance(body, dict):
            raise BadRequest("the body of a DELETE must be a DeleteOptions object")
        grace = query.get("gracePeriodSeconds", body.get("gracePeriodSeconds"))
        policy = query.get("propagationPolicy") or body.get("propagationPolicy")
        if policy is None and body.get("orphanDependents") is True:
            policy = "Orphan"
        policy = policy or "Background"
        if policy not in ("Background", "Foreground", "Orphan"):
            raise BadRequest(
                f'propagationPolicy "{policy}" is not supported: use Background, Foreground '
                "or Orphan"
            )
        preconditions = body.get("preconditions") or {}
        try:
            grace_int = int(grace) if grace not in (None, "") else None
        except (TypeError, ValueError):
            raise BadRequest(f'invalid gracePeriodSeconds "{grace}"') from None
        return cls(
            grace_period=grace_int,
            propagation=cast(Propagation, policy),
            precondition_uid=preconditions.get("uid"),
            precondition_rv=preconditions.get("resourceVersion"),
            dry_run=dry_run or "All" in (body.get("dryRun") or ()),
        )


class Lifecycle:
    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        self.store = objects.store
        self._dependents: dict[str, set[Ref]] = defaultdict(set)  # owner uid -> dependents
        self._waiting: set[Ref] = set()  # objects with a deletionTimestamp
        for key in self.store.resource_keys():
            for obj in self.store.list(key):
                self._index(key, obj, present=True)
        self.store.observe(self._on_change)

    # -- DELETE --------------------------------------------------------------------------------

    def delete(self, rt: ResourceType, namespace: str, name: str, options: DeleteOptions) -> Obj:
        obj = self.objects.get(rt, namespace, name)
        self._check_preconditions(rt, obj, options)
        judged = WriteOptions(dry_run=options.dry_run, user=options.user, warnings=options.warnings)
        self.objects.judge(rt, None, obj, judged)
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):
            return self._delete_again(rt, obj, options)
        finalizers = list(meta.get("finalizers") or [])
        if options.propagation == "Foreground" and FOREGROUND not in finalizers:
            finalizers.append(FOREGROUND)
        if options.propagation == "Orphan" and ORPHAN not in finalizers:
            finalizers.append(ORPHAN)
        grace = self._grace(rt, obj, options)
        if finalizers or grace > 0 or rt.key == _NAMESPACES:
            return self._mark(rt, obj, finalizers=finalizers, grace=grace, dry_run=options.dry_run)
        return self._remove(rt, obj, options.propagation, dry_run=options.dry_run)

    def _delete_again(self, rt: ResourceType, obj: Obj, options: DeleteOptions) -> Obj:
        """A DELETE of an object already terminating may only shorten a pod's grace period."""
        meta = obj["metadata"]
        grace = options.grace_period
        current = meta.get("deletionGracePeriodSeconds")
        if rt.key != _PODS or grace is None or (current is not None and grace >= current):
            return obj
        if grace == 0 and not meta.get("finalizers"):
            return self._remove(rt, obj, "Background", dry_run=options.dry_run)
        return self._mark(
            rt,
            obj,
            finalizers=list(meta.get("finalizers") or []),
            grace=grace,
            dry_run=options.dry_run,
        )

    # -- the sweeper ---------------------------------------------------------------------------

    def sweep(self) -> None:
        now = self.objects.clock.now()
        for ref in list(self._waiting):
            key, namespace, name = ref
            obj = self.store.get(key, namespace, name)
            rt = self.objects.registry.for_group(*key)
            if obj is None or rt is None:
                self._waiting.discard(ref)
                continue
            self._progress(rt, obj, now_ts=now.timestamp())

    def _progress(self, rt: ResourceType, obj: Obj, *, now_ts: float) -> None:
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        uid = meta["uid"]
        if rt.key == _NAMESPACES:
            self._terminate_namespace(rt, obj)
            return
        if FOREGROUND in finalizers:
            pending = [r for r in self._dependents.get(uid, ()) if self.store.get(*r)]
            for ref in pending:
                self._delete_ref(ref, "Foreground")
            if not [r for r in self._dependents.get(uid, ()) if self.store.get(*r)]:
                finalizers.remove(FOREGROUND)
                obj = self._set_finalizers(rt, obj, finalizers)
        elif ORPHAN in finalizers:
            self._orphan(uid)
            finalizers.remove(ORPHAN)
            obj = self._set_finalizers(rt, obj, finalizers)
        if not obj["metadata"].get("finalizers") and self._grace_over(obj, now_ts):
            self._remove(rt, obj, "Background", dry_run=False)

    def _terminate_namespace(self, rt: ResourceType, ns: Obj) -> None:
        name = ns["metadata"]["name"]
        remaining = 0
        for other in list(self.objects.registry):
            if not other.namespaced or other.group in ("metrics.k8s.io",):
                continue
            for obj in self.store.list(other.key, name):
                remaining += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    self.delete(other, name, obj["metadata"]["name"], DeleteOptions())
        if remaining == 0 and not ns["metadata"].get("finalizers"):
            self._remove(rt, ns, "Background", dry_run=False)

    # -- helpers -------------------------------------------------------------------------------

    def _grace(self, rt: ResourceType, obj: Obj, options: DeleteOptions) -> int:
        if rt.key != _PODS or not (obj.get("spec") or {}).get("nodeName"):
            return 0
        if obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        if options.grace_period is not None:
            return max(options.grace_period, 0)
        return int((obj.get("spec") or {}).get("terminationGracePeriodSeconds", 30))

    def _grace_over(self, obj: Obj, now_ts: float) -> bool:
        stamp = obj["metadata"].get("deletionTimestamp")
        return stamp is None or parse_time(stamp).timestamp() <= now_ts

    def _mark(
        self, rt: ResourceType, obj: Obj, *, finalizers: list[str], grace: int, dry_run: bool
    ) -> Obj:
        deadline = self.objects.clock.now() + timedelta(seconds=grace)
        if deadline.microsecond:  # timestamps keep whole seconds: never end a grace period early
            deadline += timedelta(microseconds=1_000_000 - deadline.microsecond)
        meta = {
            **obj["metadata"],
            "deletionTimestamp": format_time(deadline),
            "deletionGracePeriodSeconds": grace,
        }
        if finalizers:
            meta["finalizers"] = finalizers
        marked = {**obj, "metadata": meta}
        if rt.key == _NAMESPACES:
            marked["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
        if dry_run:
            return marked
        stamped = self.store.stamp(marked)
        self.store.put(rt.key, stamped)
        return stamped

    def _set_finalizers(self, rt: ResourceType, obj: Obj, finalizers: list[str]) -> Obj:
        meta = {**obj["metadata"], "finalizers": finalizers}
        if not finalizers:
            meta.pop("finalizers")
        stamped = self.store.stamp({**obj, "metadata": meta})
        return self.store.put(rt.key, stamped)

    def _remove(
        self, rt: ResourceType, obj: Obj, propagation: Propagation, *, dry_run: bool
    ) -> Obj:
        if dry_run:
            return obj
        meta = obj["metadata"]
        final = self.store.stamp(obj)
        self.store.remove(rt.key, meta.get("namespace", ""), meta["name"], final)
        uid = meta["uid"]
        if propagation == "Orphan":
            self._orphan(uid)
        else:
            for ref in list(self._dependents.get(uid, ())):
                self._delete_ref(ref, "Background")
        return final

    def _delete_ref(self, ref: Ref, propagation: Propagation) -> None:
        key, namespace, name = ref
        rt = self.objects.registry.for_group(*key)
        if rt is not None and self.store.get(key, namespace, name) is not None:
            self.delete(rt, namespace, name, DeleteOptions(propagation=propagation))

    def _orphan(self, owner_uid: str) -> None:
        for key, namespace, name in list(self._dependents.get(owner_uid, ())):
            obj = self.store.get(key, namespace, name)
            if obj is None:
                continue
            refs = [r for r in obj["metadata"].get("ownerReferences", []) if r["uid"] != owner_uid]
            meta = {**obj["metadata"], "ownerReferences": refs}
            if not refs:
                meta.pop("ownerReferences")
            self.store.put(key, self.store.stamp({**obj, "metadata": meta}))

    def _check_preconditions(self, rt: ResourceType, obj: Obj, options: DeleteOptions) -> None:
        meta = obj["metadata"]
        if options.precondition_uid and options.precondition_uid != meta["uid"]:
            raise Conflict(
                f"Precondition failed: UID in precondition: {options.precondition_uid}, UID in "
                f"object meta: {meta['uid']}",
                name=meta["name"],
                group=rt.group,
                kind=rt.plural,
            )
        if options.precondition_rv and options.precondition_rv != meta["resourceVersion"]:
            raise Conflict(
                f"Precondition failed: ResourceVersion in precondition: "
                f"{options.precondition_rv}, ResourceVersion in object meta: "
                f"{meta['resourceVersion']}",
                name=meta["name"],
                group=rt.group,
                kind=rt.plural,
            )

    def _on_change(self, change: Change) -> None:
        if change.old is not None:
            self._index(change.key, change.old, present=False)
        if change.type != "DELETED":
            self._index(change.key, change.object, present=True)
            meta = change.object["metadata"]
            if meta.get("deletionTimestamp") and not meta.get("finalizers"):
                self._waiting.add((change.key, change.namespace, change.name))

    def _index(self, key: Key, obj: Obj, *, present: bool) -> None:
        meta = obj["metadata"]
        ref: Ref = (key, meta.get("namespace", ""), meta["name"])
        for owner in meta.get("ownerReferences") or ():
            bucket = self._dependents[owner["uid"]]
            if present:
                bucket.add(ref)
            else:
                bucket.discard(ref)
                if not bucket:
                    del self._dependents[owner["uid"]]
        if meta.get("deletionTimestamp"):
            if present:
                self._waiting.add(ref)
            else:
                self._waiting.discard(ref)
