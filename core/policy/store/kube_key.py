"""The Kubernetes store's audit key: a Secret in the store's namespace that only its identity reads.

The key seals the audit head (`audit.seal`), so an identity that may not read the Secret (every
agent's ServiceAccount: deploy/rbac/policy-store.yaml gives `get` on this one Secret to the
store's writer Role alone) cannot rewrite the log and its head to match. The first write of a
new store makes it: 32 random bytes, created once (a create that finds it taken reads the
winner's). A missing Secret is made again only while the head was never sealed; for a sealed
log a new key would vouch for whatever it says now, so that is refused, saying what to restore.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable

from core.connection import Api
from core.errors import Conflict, NotFound, PermissionDenied, Unavailable

SECRET = "kubecrew-policy-store-key"
ATTEMPTS = 5


def load(api: Api, namespace: str, *, sealed: Callable[[], bool]) -> bytes:
    """The key, created when missing and `sealed()` says the head never was."""
    try:
        return _read_or_make(api, namespace, sealed)
    except PermissionDenied as exc:
        raise PermissionDenied(
            f"{exc.message}. Sealing and checking the audit log takes the store's identity "
            f"(the Role kubecrew-policy-store-writer), which an agent's ServiceAccount is not"
        ) from exc


def _read_or_make(api: Api, namespace: str, sealed: Callable[[], bool]) -> bytes:
    collection = f"/api/v1/namespaces/{namespace}/secrets"
    what = f"Secret {SECRET} in {namespace}"
    for _ in range(ATTEMPTS):
        found = _existing(api, f"{collection}/{SECRET}", what)
        if found is not None:
            return found
        if sealed():
            raise Unavailable(
                f"the audit key ({what}) is missing, but the audit head was sealed with it: "
                f"restore the Secret from a backup. A new key would vouch for whatever the "
                f"log says now, so none is made"
            )
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": SECRET, "namespace": namespace},
            "type": "Opaque",
            "data": {"key": base64.b64encode(secrets.token_bytes(32)).decode()},
        }
        try:
            return _decoded(api.request("POST", collection, body=body, what=what))
        except Conflict:
            continue  # another store made it first: read theirs
    raise Conflict(f"{what} kept changing while it was read; retry")


def _existing(api: Api, path: str, what: str) -> bytes | None:
    try:
        return _decoded(api.get(path, what=what))
    except NotFound:
        return None


def _decoded(secret: dict[str, object]) -> bytes:
    data = secret.get("data")
    encoded = data.get("key") if isinstance(data, dict) else None
    if not isinstance(encoded, str):
        raise Unavailable(f"Secret {SECRET} holds no `key`; restore it from a backup")
    return base64.b64decode(encoded)
