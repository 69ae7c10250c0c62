"""The policy store's custom resources over the API: names, compare-and-swap writes, installing.

Every write here is a single-object compare-and-swap: `replace` (the object) and
`replace_status` (its status subresource, where proposals and requests keep what the store
decided) carry the resourceVersion they read and fail with `Lost` when the object moved;
`create` fails with `Exists` when the name is taken. Those two are the backend's only
synchronisation, so they are told apart from every other Conflict (the kube connection maps
both 409s to one error). Reaching the API is
`core.connection`'s job (kubeconfig, contexts, errors mapped to the ToolError tree).

Names: kube names are DNS-1123, ids and target keys are not always; `object_name` keeps a valid
id as is (so `kubectl get proposal p-1a2b` works) and maps anything else through a stable hash.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from typing import Any

from core.connection import Api, Json
from core.errors import Conflict, NotFound, PermissionDenied, Unavailable
from core.policy.store.kube_crds import API_VERSION, GROUP, VERSION, definitions

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
INSTALL_HINT = "kubectl apply -f deploy/crds/policy-store.yaml"


class Lost(Conflict):
    """A compare-and-swap lost: the object changed since it was read. Re-read and retry."""


class Exists(Conflict):
    """A create found the name taken."""


def object_name(prefix: str, key: str) -> str:
    """`key` itself when it is a valid object name, else `prefix` and a hash of it."""
    if len(key) <= 63 and _DNS1123.match(key):
        return key
    return f"{prefix}-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


@dataclass(frozen=True)
class Resources:
    """The kubecrew.io custom resources of one namespace, as plain JSON objects."""

    api: Api
    namespace: str

    def _path(self, plural: str, name: str = "") -> str:
        base = f"/apis/{GROUP}/{VERSION}/namespaces/{self.namespace}/{plural}"
        return f"{base}/{name}" if name else base

    def get(self, plural: str, name: str) -> Json | None:
        try:
            return self.api.get(self._path(plural, name), what=f"{plural} {name}")
        except NotFound:
            return None

    def list(self, plural: str, *, selector: str = "") -> list[Json]:
        found = self.api.get(self._path(plural), labelSelector=selector or None)
        items: list[Json] = found.get("items") or []
        return items

    def create(self, plural: str, kind: str, name: str, spec: Json, labels: Json) -> Json:
        body = {
            "apiVersion": API_VERSION,
            "kind": kind,
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
            "spec": spec,
        }
        try:
            return self.api.request("POST", self._path(plural), body=body, what=f"{kind} {name}")
        except Conflict as exc:  # a create has no precondition: its only 409 is AlreadyExists
            raise Exists(exc.message) from exc

    def replace(self, plural: str, obj: Json, spec: Json, labels: Json | None = None) -> Json:
        """Write `spec` (and `labels`) over `obj` as read; Lost if it changed since."""
        metadata = dict(obj["metadata"])
        if labels is not None:
            metadata["labels"] = labels
        return self._put(plural, {**obj, "metadata": metadata, "spec": spec}, "")

    def replace_status(self, plural: str, obj: Json, status: Json) -> Json:
        """Write `status` over `obj`'s as read (its status subresource); Lost if it changed."""
        return self._put(plural, {**obj, "status": status}, "/status")

    def _put(self, plural: str, body: Json, subresource: str) -> Json:
        name = body["metadata"]["name"]
        path = self._path(plural, name) + subresource
        try:
            return self.api.request("PUT", path, body=body, what=f"{plural}{subresource} {name}")
        except Conflict as exc:
            raise Lost(exc.message) from exc
        except NotFound as exc:
            raise Lost(f"{plural} {name} was deleted while being written: {exc.message}") from exc


def install(api: Api, namespace: str, *, wait: float = 30.0) -> None:
    """Make sure the CRDs are served and the namespace exists, creating what is missing.

    Discovery answers first (one request, open to every identity); only a cluster that lacks
    some kind is asked to install it. Without the rights to, the error says which command a
    cluster admin runs.
    """
    missing = _missing(api)
    for crd in definitions():
        name = crd["metadata"]["name"]
        if crd["spec"]["names"]["plural"] not in missing:
            continue
        try:
            found = _get(api, f"{_CRDS}/{name}")
            if found is None:
                what = f"CustomResourceDefinition {name}"
                found = api.request("POST", _CRDS, body=crd, what=what)
        except PermissionDenied as exc:
            raise Unavailable(
                f"the policy store's CRD {name} is missing and this identity may not install "
                f"it ({exc.message}); have a cluster admin run `{INSTALL_HINT}`"
            ) from exc
        _established(api, name, found, wait)
    try:
        if _get(api, f"/api/v1/namespaces/{namespace}") is None:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            api.request("POST", "/api/v1/namespaces", body=body, what=f"namespace {namespace}")
    except PermissionDenied:
        pass  # reading or creating namespaces is not the agents' business; the writes will tell


def _missing(api: Api) -> set[str]:
    served = _get(api, f"/apis/{GROUP}/{VERSION}") or {}
    names = {str(r.get("name")) for r in served.get("resources") or []}
    return {str(crd["spec"]["names"]["plural"]) for crd in definitions()} - names


def _get(api: Api, path: str) -> Json | None:
    try:
        return api.get(path)
    except NotFound:
        return None


def _established(api: Api, name: str, found: Json, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        conditions = (found.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return
        if time.monotonic() > deadline:
            raise Unavailable(
                f"the CRD {name} was not Established within {wait:.0f} s; check "
                f"`kubectl get crd {name} -o yaml` and run `{INSTALL_HINT}`"
            )
        time.sleep(0.2)
        found = _get(api, f"{_CRDS}/{name}") or {}


def spec_of(obj: Json) -> dict[str, Any]:
    spec: dict[str, Any] = obj.get("spec") or {}
    return spec


def status_of(obj: Json) -> dict[str, Any]:
    status: dict[str, Any] = obj.get("status") or {}
    return status


def labels_of(obj: Json) -> dict[str, str]:
    labels: dict[str, str] = (obj.get("metadata") or {}).get("labels") or {}
    return dict(labels)
