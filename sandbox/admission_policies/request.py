"""What a policy sees of one request: kube-apiserver's admission attributes, and CEL's `request`.

Built by the write path for each client's create, update (patches and server-side apply
included) and delete, after defaulting and validation, so `object` is what would be stored. For
a Namespace the request's namespace is the Namespace's own name, as in Kubernetes; for the scale
subresource the objects are the autoscaling/v1 Scale views, as a real server sends them.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.auth import UserInfo
from sandbox.registry import ResourceType
from sandbox.store import Obj

Operation = Literal["CREATE", "UPDATE", "DELETE"]
NAMESPACES = ("", "namespaces")


@dataclass(frozen=True)
class AdmissionRequest:
    operation: Operation
    rt: ResourceType
    object: Obj | None  # None for DELETE
    old_object: Obj | None  # None for CREATE
    user: UserInfo
    subresource: str = ""
    dry_run: bool = False
    kind: tuple[str, str, str] = ("", "", "")  # (group, version, kind); the resource's if unset
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def name(self) -> str:
        meta = (self.object or self.old_object or {}).get("metadata") or {}
        return str(meta.get("name") or "")

    @property
    def namespace(self) -> str:
        if self.rt.key == NAMESPACES:
            return self.name
        meta = (self.object or self.old_object or {}).get("metadata") or {}
        return str(meta.get("namespace") or "") if self.rt.namespaced else ""

    @property
    def resource_name(self) -> str:
        """`pods` or `deployments/scale`: what rules and messages call the resource."""
        return f"{self.rt.plural}/{self.subresource}" if self.subresource else self.rt.plural

    def gvk(self) -> dict[str, str]:
        rt = self.rt
        group, version, kind = self.kind if self.kind[2] else (rt.group, rt.version, rt.kind)
        return {"group": group, "version": version, "kind": kind}

    def cel(self) -> dict[str, Any]:
        """The `request` variable (admission.k8s.io/v1 AdmissionRequest, as CEL reads it)."""
        resource = {"group": self.rt.group, "version": self.rt.version, "resource": self.rt.plural}
        options = {"DELETE": "DeleteOptions", "UPDATE": "UpdateOptions"}.get(
            self.operation, "CreateOptions"
        )
        return {
            "uid": self.uid,
            "kind": self.gvk(),
            "resource": resource,
            "subResource": self.subresource,
            "requestKind": self.gvk(),
            "requestResource": resource,
            "requestSubResource": self.subresource,
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {
                "username": self.user.username,
                "uid": self.user.uid,
                "groups": list(self.user.groups),
                "extra": {key: list(values) for key, values in self.user.extra.items()},
            },
            "dryRun": self.dry_run,
            "options": {"kind": options, "apiVersion": "meta.k8s.io/v1"},
        }
