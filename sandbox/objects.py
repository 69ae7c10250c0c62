"""The API's write and read semantics, independent of HTTP: what create, update and patch mean.

Every write path funnels through `Objects._commit`: admission (defaults, namespace checks, kind
hooks), field validation, object validation, ownership bookkeeping (managedFields), validating
admission of a client's request (`judge`: the ValidatingAdmissionPolicies), and only then a new
resourceVersion and the store. Dry-run walks the whole path and stops short of the store, as
Kubernetes' `dryRun=All` does. Controllers of the simulated cluster write through the same service,
so no object reaches the store without the same checks.

This module knows nothing of ASGI, Tables or watch streams.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox import fieldcheck, fieldtypes, schemas, validation
from sandbox.auth import UserInfo
from sandbox.clock import Clock
from sandbox.errors import BadRequest, Conflict, UnsupportedMediaType, already_exists, not_found
from sandbox.naming import random_suffix
from sandbox.patches import (
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    record_update,
    server_side_apply,
)
from sandbox.registry import Registry, ResourceType
from sandbox.store import Obj, Store

_SECURE = random.SystemRandom()  # names clients generate must not be guessable
# Fields that do not make two objects different for no-op detection.
_VOLATILE_META = ("resourceVersion", "managedFields")


@dataclass
class WriteOptions:
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"
    force: bool = False
    subresource: str = ""  # "status" or "scale": ownership is recorded per subresource
    system: bool = False  # the sandbox's own control plane (binding, controllers) is writing
    user: UserInfo | None = None  # who asked, for validating admission; None: no client request
    warnings: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # repeated keys in the body, worded


Hook = Callable[["Objects", ResourceType, Obj, Obj | None], Obj]
# Judges a client's request (new None: a delete); raises to refuse, adds to opts.warnings to warn.
ValidatingHook = Callable[["Objects", ResourceType, Obj | None, Obj | None, WriteOptions], None]


class Objects:
    def __init__(self, *, store: Store, registry: Registry, clock: Clock) -> None:
        self.store = store
        self.registry = registry
        self.clock = clock
        # Admission hooks run before validation on create and update; see sandbox/admission.py.
        self.admit: list[Hook] = []
        # Validating admission (sandbox/admission_policies) runs after validation; see `judge`.
        self.validating: list[ValidatingHook] = []
        # After-commit hooks (e.g. a CRD registering its type); called with (rt, new, old).
        self.on_commit: list[Callable[[ResourceType, Obj, Obj | None], None]] = []

    # -- reads ---------------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rt.key, namespace if rt.namespaced else "", name)
        if obj is None:
            raise not_found(rt.plural, rt.group, name)
        return obj

    def find(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self.store.get(rt.key, namespace if rt.namespaced else "", name)

    # -- writes --------------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        body: Any,
        *,
        namespace: str,
        opts: WriteOptions,
        operation: str | None = "Update",
    ) -> Obj:
        obj = self._accept_body(rt, body, namespace=namespace)
        obj = self._checked_fields(rt, obj, opts)
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + random_suffix(_SECURE)
        name = meta.get("name", "")
        if name and self.find(rt, namespace, name) is not None:
            raise already_exists(rt.plural, rt.group, name)
        now = self.clock.timestamp()
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now
        for volatile in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(volatile, None)
        if "spec" in obj or rt.kind in _GENERATION_KINDS:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if "status" in rt.subresources and rt.kind not in _STATUS_ON_CREATE:
            obj.pop("status", None)  # status is the controllers' to write, as in Kubernetes
        return self._commit(rt, obj, None, opts, operation=operation)

    def update(
        self,
        rt: ResourceType,
        body: Any,
        *,
        namespace: str,
        name: str,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Obj:
        obj = self._accept_body(rt, body, namespace=namespace, name=name)
        old = self.get(rt, namespace, name)
        sent_rv = obj["metadata"].get("resourceVersion")
        if sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            raise self._conflict(rt, name)
        obj = self._checked_fields(rt, obj, opts)
        return self._commit(rt, self._merge_old(rt, obj, old, subresource), old, opts)

    def patch(
        self,
        rt: ResourceType,
        *,
        namespace: str,
        name: str,
        patch_type: str,
        patch: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> tuple[Obj, bool]:
        """Apply a patch; returns (object, created). Only server-side apply may create."""
        old = self.find(rt, namespace, name)
        if patch_type == "apply":
            return self._apply(rt, namespace=namespace, name=name, config=patch, old=old, opts=opts)
        if old is None:
            raise not_found(rt.plural, rt.group, name)
        patched = self._patched(rt, old, patch_type, patch)
        # A resourceVersion the patch sets (any patch type, a JSON patch's "replace" included)
        # is a precondition, as in the API server: it must still be the stored one.
        meta = patched.get("metadata")  # a JSON patch may have made it anything
        sent_rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if sent_rv and sent_rv != old["metadata"]["resourceVersion"]:
            raise self._conflict(rt, name)
        patched = self._accept_body(rt, patched, namespace=namespace)
        patched = self._checked_fields(rt, patched, opts)
        return self._commit(rt, self._merge_old(rt, patched, old, subresource), old, opts), False

    def write(self, rt: ResourceType, new: Obj, old: Obj | None, *, manager: str) -> Obj:
        """Controllers' write of a complete object they built from `old` (None = create).

        A spec change moves `metadata.generation` as it does for any client, so a controller
        that scales a Deployment is seen by the Deployment controller like `kubectl scale`.
        """
        if old is not None:
            new = _next_generation(new, old)
        return self._commit(rt, new, old, WriteOptions(field_manager=manager, system=True))

    def judge(self, rt: ResourceType, new: Obj | None, old: Obj | None, opts: WriteOptions) -> None:
        """Validating admission of a client's create, update or delete (`new` None) as it would
        be stored; writes of the sandbox's own control plane carry no user and are not judged."""
        if opts.user is None:
            return
        for check in self.validating:
            check(self, rt, new, old, opts)

    # -- internals -----------------------------------------------------------------------------

    def _patched(self, rt: ResourceType, old: Obj, patch_type: str, patch: Any) -> Obj:
        if patch_type == "json":
            return apply_json_patch(old, patch)
        if patch_type == "merge":
            return apply_merge_patch(old, patch)
        if patch_type == "strategic":
            if rt.custom:
                raise UnsupportedMediaType(
                    "strategic merge patch is not supported for custom resources; "
                    "use a merge patch (kubectl patch --type=merge) or JSON patch"
                )
            return apply_strategic_merge_patch(old, patch, schemas.for_kind(*_gvk(rt)))
        raise UnsupportedMediaType(f"patch type {patch_type!r} is not supported")

    def _apply(
        self,
        rt: ResourceType,
        *,
        namespace: str,
        name: str,
        config: Any,
        old: Obj | None,
        opts: WriteOptions,
    ) -> tuple[Obj, bool]:
        if not isinstance(config, dict):
            raise BadRequest("an apply patch must be a YAML or JSON object")
        if not opts.field_manager:
            raise BadRequest(
                "PATCH requests with the apply content type require the fieldManager parameter"
            )
        config = self._accept_body(rt, config, namespace=namespace, name=name)
        config = self._checked_fields(rt, config, opts)
        merged = server_side_apply(
            old,
            config,
            manager=opts.field_manager,
            force=opts.force,
            schema=_schema(rt),
            now=self.clock.timestamp(),
        )
        if old is None:
            merged["metadata"].pop("resourceVersion", None)
            created = self.create(
                rt, merged, namespace=namespace, opts=_keep_fields(opts), operation=None
            )
            return created, True
        return self._commit(
            rt, self._merge_old(rt, merged, old, ""), old, opts, operation=None
        ), False

    @staticmethod
    def _checked_fields(rt: ResourceType, obj: Obj, opts: WriteOptions) -> Obj:
        """Decode as the API server does: refuse wrong types in every mode, then enforce
        `fieldValidation` (unknown and duplicate fields) and drop the unknown fields."""
        obj = fieldtypes.decode(rt, obj)
        kept, warnings = fieldcheck.decode(
            rt, obj, opts.field_validation, duplicates=opts.duplicates
        )
        opts.warnings.extend(warnings)
        return kept

    def _accept_body(
        self, rt: ResourceType, body: Any, *, namespace: str, name: str | None = None
    ) -> Obj:
        """Check a body is an object of this resource; fill apiVersion/kind the way servers do."""
        if not isinstance(body, dict):
            raise BadRequest(f"the body of the request must be a {rt.kind} object")
        obj = dict(body)
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        if kind and kind != rt.kind:
            raise BadRequest(
                f"the kind {kind!r} in the body does not match the resource {rt.qualified!r} "
                f"(expected kind {rt.kind!r})"
            )
        if api_version and api_version != rt.api_version:
            raise BadRequest(
                f"the API version {api_version!r} in the body does not match {rt.api_version!r} "
                f"of {rt.qualified}"
            )
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        meta = obj.get("metadata") or {}
        if not isinstance(meta, dict):
            raise BadRequest("metadata must be an object")
        meta = dict(meta)
        if rt.namespaced:
            sent = meta.get("namespace")
            if sent and namespace and sent != namespace:
                raise BadRequest(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = namespace or sent or ""
        else:
            meta.pop("namespace", None)
        obj["metadata"] = meta
        if name is not None and meta.get("name") != name:
            raise BadRequest(
                f"the name of the object ({meta.get('name')}) does not match the name on the "
                f"URL ({name})"
            )
        return obj

    def _merge_old(self, rt: ResourceType, new: Obj, old: Obj, subresource: str) -> Obj:
        """Carry over what a client cannot change through this endpoint."""
        meta = dict(new["metadata"])
        old_meta = old["metadata"]
        for kept in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ):
            if kept in old_meta:
                meta[kept] = old_meta[kept]
            else:
                meta.pop(kept, None)
        if "managedFields" not in meta and "managedFields" in old_meta:
            meta["managedFields"] = old_meta["managedFields"]
        if subresource == "status":
            merged = {**old, "status": new.get("status")}
            if merged["status"] is None:
                merged.pop("status")
            return merged
        merged = {**new, "metadata": meta}
        if "status" in rt.subresources and subresource == "":
            if "status" in old:
                merged["status"] = old["status"]
            else:
                merged.pop("status", None)
        return _next_generation(merged, old)

    def _commit(
        self,
        rt: ResourceType,
        obj: Obj,
        old: Obj | None,
        opts: WriteOptions,
        *,
        operation: str | None = "Update",
    ) -> Obj:
        for hook in self.admit:
            obj = hook(self, rt, obj, old)
        # The control plane may set what clients may not (a binding sets spec.nodeName).
        validation.validate(rt, obj, old=None if opts.system else old)
        if operation is not None:
            obj = record_update(
                old,
                obj,
                manager=opts.field_manager or "unknown",
                operation=operation,
                now=self.clock.timestamp(),
                schema=_schema(rt),
                subresource=opts.subresource,
            )
        self.judge(rt, obj, old, opts)  # no-op updates and dry runs too, as on a real server
        if old is not None and _same(obj, old):
            return old
        if opts.dry_run:
            return obj
        stamped = self.store.stamp(obj)
        self.store.put(rt.key, stamped)
        for hook_after in self.on_commit:
            hook_after(rt, stamped, old)
        return stamped

    @staticmethod
    def _conflict(rt: ResourceType, name: str) -> Conflict:
        return Conflict(
            f'Operation cannot be fulfilled on {rt.qualified} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            name=name,
            group=rt.group,
            kind=rt.plural,
        )


# Kinds whose creator may set status (a node registers with its capacity and conditions).
_STATUS_ON_CREATE = frozenset({"Node"})

# Kinds whose objects carry metadata.generation even when created without a spec.
_GENERATION_KINDS = frozenset(
    {
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "Pod",
        "CustomResourceDefinition",
    }
)


def _gvk(rt: ResourceType) -> tuple[str, str, str]:
    return rt.group, rt.version, rt.kind


def _schema(rt: ResourceType) -> schemas.SchemaNode | None:
    if rt.custom:
        return schemas.SchemaNode(rt.schema) if rt.schema else None
    return schemas.for_kind(*_gvk(rt))


def _spec_of(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _next_generation(new: Obj, old: Obj) -> Obj:
    """`new` with `metadata.generation` one past old's when its spec changed (for objects that
    carry a generation): what every writer, client or controller, gets."""
    if "generation" not in old["metadata"] or _spec_of(new) == _spec_of(old):
        return new
    meta = {**new["metadata"], "generation": int(old["metadata"]["generation"]) + 1}
    return {**new, "metadata": meta}


def _same(new: Obj, old: Obj) -> bool:
    if _spec_of(new) != _spec_of(old) or new.get("status") != old.get("status"):
        return False
    return _stable_meta(new["metadata"]) == _stable_meta(old["metadata"])


def _stable_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in _VOLATILE_META}


def _keep_fields(opts: WriteOptions) -> WriteOptions:
    """Options for the create half of an apply: managedFields are already computed."""
    return WriteOptions(
        dry_run=opts.dry_run,
        field_manager=opts.field_manager,
        field_validation="Ignore",
        warnings=opts.warnings,
        user=opts.user,
    )
