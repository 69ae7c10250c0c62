"""The cluster as the servers' engines reach it: `core.connection`'s API, telling the call's
`secret_values` of every Secret that passes, either way.

An answer holding Secrets (a get, a list, what a dry run or a write returns) and a body sent to
a Secret (a manifest or a patch: the values it writes, or a JSON patch `test` guesses) are
touched before the caller sees them, so the values are known before any error can quote them.
A write to a Secret that the API server refuses may quote the live object, which the engine
usually read first; when it did not, the object is read now, and when this identity may not
read it (RBAC allows patch, not get), its values cannot be known, so the message is withheld.

Each server builds its `Clusters` as `WatchedClusters` (gitops wraps each API with `watched`);
the engines stay unaware of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.connection import REQUEST_TIMEOUT_S, Api, Clusters, Json
from core.errors import NotFound, ToolError
from mcp_servers.common.secret_values import touch


class WatchedClusters(Clusters):
    def api(self, context: str | None = None, *, stale_ok: bool = False) -> Api:
        return watched(super().api(context))


def watched(api: Api) -> Api:
    return api if isinstance(api, WatchedApi) else WatchedApi(api.client, api.context)


@dataclass(frozen=True)
class WatchedApi(Api):
    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        what: str = "",
        timeout: float = REQUEST_TIMEOUT_S,
    ) -> Json:
        secret = _names_secrets(path)
        if secret:
            _touch_sent(body)
        try:
            answer = super().request(
                method,
                path,
                query=query,
                body=body,
                content_type=content_type,
                what=what,
                timeout=timeout,
            )
        except ToolError as refused:
            if secret == "object" and method != "GET":
                self._learn(path, refused, what)
            raise
        touch(answer)
        return answer

    def _learn(self, path: str, refused: ToolError, what: str) -> None:
        """Read the Secret a refused write named, so its values are known; or withhold the
        refusal's message when they cannot be."""
        try:
            self.get(path, what=what)
        except NotFound:
            return  # a new Secret: what the message could quote is in the body, touched
        except ToolError:
            raise type(refused)(
                f"{what or path}: the API server refused the change; its message is withheld "
                "because it may quote values of this Secret, which this server's identity may "
                "not read (with `get` on secrets it would be shown, values hidden)"
            ) from None


def _names_secrets(path: str) -> str:
    """What `path` names: "object" (one Secret), "collection" (Secrets) or "" (no Secret)."""
    parts = path.split("?")[0].strip("/").split("/")
    if parts[:2] != ["api", "v1"]:
        return ""
    rest = parts[4:] if parts[2:3] == ["namespaces"] else parts[2:]
    if rest[:1] != ["secrets"]:
        return ""
    return "object" if len(rest) == 2 else "collection"


def _touch_sent(body: Any) -> None:
    """The values a manifest, merge patch or JSON patch sends to a Secret."""
    if isinstance(body, dict):
        touch(body, kind="Secret")
        return
    for op in body if isinstance(body, list) else []:
        if not isinstance(op, dict) or "value" not in op:
            continue
        where, value = str(op.get("path", "")), op["value"]
        if where in ("", "/"):
            touch(value, kind="Secret")
        elif where in ("/data", "/stringData"):
            touch({where[1:]: value}, kind="Secret")
        elif where.startswith(("/data/", "/stringData/")):
            touch({where[1:].split("/")[0]: {"key": value}}, kind="Secret")
