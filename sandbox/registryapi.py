"""The image registries of the simulated world, served read-only through the OCI distribution API.

Nodes pull from `world.images` (`kubelet.images.ImageCatalog`); this module lets clients ask the
same catalog what a registry would tell them, so one registry client serves the sandbox and real
registries alike. Each registry host the catalog knows (docker.io, registry.k8s.io, ghcr.io...)
has a v2 root under the sandbox's own HTTPS server:

    GET       /registries/{host}/v2/                        200 {}
    GET       /registries/{host}/v2/_catalog?n=&last=       {"repositories": [...]}, paged
    GET       /registries/{host}/v2/{name}/tags/list?n=&last=   {"name": ..., "tags": [...]}, paged
    GET|HEAD  /registries/{host}/v2/{name}/manifests/{tag or digest}   Docker-Content-Digest
    GET       /registries/{host}/token?service=&scope=      an anonymous pull token (docker.io)

Paging follows the spec: tags and repositories in lexical order, `n` at most, after `last`, and
a `Link: <...>; rel="next"` header while more remain. Failures carry the spec's error body
(`{"errors": [{"code": "NAME_UNKNOWN", ...}]}`): NAME_UNKNOWN for a repository the registry does
not hold, MANIFEST_UNKNOWN for a tag or digest it does not hold, NAME_INVALID, UNSUPPORTED for
any write. An image a fault removed (`ImageCatalog.remove`) is absent here, as it is for pulls.

Access is anonymous, as a public registry's pulls are. docker.io behaves like Docker Hub: it
answers 401 with a `WWW-Authenticate: Bearer realm=...,service=...,scope=...` challenge, hands
anyone a pull token for the scope at the realm, and accepts requests carrying one, so a client's
token handshake runs against the sandbox exactly as against the real registry. Tokens are signed
with a key made when the sandbox starts and expire after TOKEN_SECONDS of sandbox time.

These paths are answered before Kubernetes authentication, RBAC and API faults: a registry is a
service of its own that knows nothing of the cluster's identities. The manifest is a small
synthesized one; its digest is the catalog's (what pods show as imageID and a pull by digest
accepts), so the body does not hash to it. This module knows the catalog and HTTP, nothing of
pods or nodes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from typing import Any
from urllib.parse import quote

from sandbox.cluster import Cluster
from sandbox.http import Request, Send, dumps, respond
from sandbox.kubelet.images import Image, ImageCatalog

PREFIX = "/registries/"
TOKEN_SECONDS = 300
TOKEN_HOSTS = frozenset({"docker.io"})  # registries that demand a token, as Docker Hub does
API_VERSION = {"Docker-Distribution-API-Version": "registry/2.0"}
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
_NAME = re.compile(
    r"^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$"
)
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")


def is_registry_path(path: str) -> bool:
    return path.startswith(PREFIX)


class RegistryError(Exception):
    """An answer in the distribution spec's error format."""

    def __init__(self, status: int, code: str, message: str, detail: Any = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.detail = status, code, message, detail
        self.headers: dict[str, str] = {}

    def body(self) -> bytes:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            error["detail"] = self.detail
        return dumps({"errors": [error]})


class RegistryApi:
    """The registries of one cluster's world, with the key that signs their pull tokens."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._key = secrets.token_bytes(32)

    async def serve(self, request: Request, send: Send, *, scheme: str) -> None:
        try:
            status, body, headers = self._answer(request, scheme)
        except RegistryError as exc:
            status, body, headers = exc.status, exc.body(), exc.headers
        content_type = headers.pop("Content-Type", "application/json")
        await respond(
            send, status, body, content_type=content_type, extra_headers={**API_VERSION, **headers}
        )

    # -- routing -------------------------------------------------------------------------------

    def _answer(self, request: Request, scheme: str) -> tuple[int, bytes, dict[str, str]]:
        if request.method not in ("GET", "HEAD"):
            raise RegistryError(405, "UNSUPPORTED", "this registry is read-only: only GET and HEAD")
        host, _, rest = request.path.removeprefix(PREFIX).partition("/")
        catalog = self.cluster.world.images
        hosts = sorted({repository.partition("/")[0] for repository in catalog.repositories()})
        if host not in hosts:
            raise RegistryError(
                404, "NAME_UNKNOWN", f"no registry {host!r} here; registries: {', '.join(hosts)}"
            )
        if rest == "token":
            return self._token(request, host)
        if rest != "v2" and not rest.startswith("v2/"):
            raise RegistryError(404, "NAME_UNKNOWN", f"{request.path} is no registry API path")
        base = f"{PREFIX}{host}/v2"
        parts = [p for p in rest.removeprefix("v2").split("/") if p]
        if not parts:
            self._authorize(request, host, scheme, scope=None)
            return 200, b"{}", {}
        if parts == ["_catalog"]:
            self._authorize(request, host, scheme, scope="registry:catalog:*")
            names = sorted(
                r.partition("/")[2] for r in catalog.repositories() if r.startswith(f"{host}/")
            )
            page, link = _paged(names, request, f"{base}/_catalog")
            return 200, dumps({"repositories": page}), link
        if len(parts) >= 3 and parts[-2:] == ["tags", "list"]:
            name = _name("/".join(parts[:-2]))
            self._authorize(request, host, scheme, scope=f"repository:{name}:pull")
            tags = self._tags(catalog, host, name)
            page, link = _paged(tags, request, f"{base}/{name}/tags/list")
            return 200, dumps({"name": name, "tags": page}), link
        if len(parts) >= 3 and parts[-2] == "manifests":
            name = _name("/".join(parts[:-2]))
            self._authorize(request, host, scheme, scope=f"repository:{name}:pull")
            self._tags(catalog, host, name)  # NAME_UNKNOWN before MANIFEST_UNKNOWN
            return self._manifest(catalog, host, name, parts[-1])
        if len(parts) >= 3 and parts[-2] == "blobs":
            raise RegistryError(404, "BLOB_UNKNOWN", "this registry serves no blobs", parts[-1])
        raise RegistryError(404, "NAME_UNKNOWN", f"{request.path} is no registry API path")

    # -- answers -------------------------------------------------------------------------------

    @staticmethod
    def _tags(catalog: ImageCatalog, host: str, name: str) -> list[str]:
        tags = catalog.tags(f"{host}/{name}") if f"{host}/{name}" in catalog.repositories() else []
        if not tags:
            raise RegistryError(
                404, "NAME_UNKNOWN", "repository name not known to registry", {"name": name}
            )
        return tags

    @staticmethod
    def _manifest(
        catalog: ImageCatalog, host: str, name: str, reference: str
    ) -> tuple[int, bytes, dict[str, str]]:
        if _DIGEST.match(reference):
            image: Image | None = catalog.resolve(f"{host}/{name}@{reference}")
        elif _TAG.match(reference):
            image = catalog.resolve(f"{host}/{name}:{reference}")
        else:
            raise RegistryError(400, "TAG_INVALID", f"{reference!r} is neither a tag nor a digest")
        if image is None:
            raise RegistryError(
                404, "MANIFEST_UNKNOWN", "manifest unknown", {"name": name, "reference": reference}
            )
        body = dumps(_manifest_body(image))
        return 200, body, {"Content-Type": MANIFEST, "Docker-Content-Digest": image.digest}

    # -- anonymous bearer tokens (docker.io) ---------------------------------------------------

    def _token(self, request: Request, host: str) -> tuple[int, bytes, dict[str, str]]:
        scope = request.query.get("scope", "")
        now = int(self.cluster.clock.seconds())
        claims = {"aud": host, "scope": scope, "exp": now + TOKEN_SECONDS}
        payload = _b64(json.dumps(claims, sort_keys=True).encode())
        token = f"{payload}.{_b64(self._sign(payload))}"
        issued = self.cluster.clock.timestamp()
        body = {
            "token": token,
            "access_token": token,
            "expires_in": TOKEN_SECONDS,
            "issued_at": issued,
        }
        return 200, dumps(body), {}

    def _authorize(self, request: Request, host: str, scheme: str, *, scope: str | None) -> None:
        if host not in TOKEN_HOSTS:
            return
        if self._granted(request.headers.get("authorization", ""), host, scope):
            return
        realm = f"{scheme}://{request.headers.get('host', '')}{PREFIX}{host}/token"
        challenge = f'Bearer realm="{realm}",service="{host}"'
        if scope is not None:
            challenge += f',scope="{scope}"'
        detail = None
        if scope is not None and scope.startswith("repository:"):
            detail = [{"Type": "repository", "Name": scope.split(":")[1], "Action": "pull"}]
        error = RegistryError(401, "UNAUTHORIZED", "authentication required", detail)
        error.headers["WWW-Authenticate"] = challenge
        raise error

    def _granted(self, authorization: str, host: str, scope: str | None) -> bool:
        kind, _, token = authorization.partition(" ")
        payload, _, signature = token.partition(".")
        if kind.lower() != "bearer" or not payload or not signature:
            return False
        if not hmac.compare_digest(_b64(self._sign(payload)), signature):
            return False
        try:
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            return False
        if claims.get("aud") != host or claims.get("exp", 0) < self.cluster.clock.seconds():
            return False
        return scope is None or _covers(str(claims.get("scope", "")), scope)

    def _sign(self, payload: str) -> bytes:
        return hmac.new(self._key, payload.encode(), hashlib.sha256).digest()


def _covers(granted: str, wanted: str) -> bool:
    """Whether the scopes granted ("repository:library/nginx:pull", space-separated) cover
    `wanted`: same resource type and name, and every action wanted (or `*`)."""
    kind, name, actions = wanted.split(":")
    for scope in granted.split():
        got_kind, _, rest = scope.partition(":")
        got_name, _, got_actions = rest.rpartition(":")
        allowed = set(got_actions.split(","))
        if (got_kind, got_name) == (kind, name) and (
            "*" in allowed or set(actions.split(",")) <= allowed
        ):
            return True
    return False


def _name(name: str) -> str:
    if not _NAME.match(name):
        raise RegistryError(400, "NAME_INVALID", "invalid repository name", {"name": name})
    return name


def _paged(items: list[str], request: Request, path: str) -> tuple[list[str], dict[str, str]]:
    """The page after `last`, at most `n` long, and the Link header to the next one."""
    last = request.query.get("last", "")
    raw = request.query.get("n", "")
    if raw and not raw.isdigit():
        raise RegistryError(400, "PAGINATION_NUMBER_INVALID", f"invalid number of results: {raw!r}")
    after = [item for item in items if item > last] if last else items
    if not raw:
        return after, {}
    page = after[: int(raw)]
    if not page or len(page) == len(after):
        return page, {}
    link = f'<{path}?n={raw}&last={quote(page[-1], safe="")}>; rel="next"'
    return page, {"Link": link}


def _manifest_body(image: Image) -> dict[str, Any]:
    def digest(part: str) -> str:
        return "sha256:" + hashlib.sha256(f"{image.reference}#{part}".encode()).hexdigest()

    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": digest("config"),
            "size": 1469,
        },
        "layers": [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": digest("layer"),
                "size": image.size,
            }
        ],
        "annotations": {"org.opencontainers.image.ref.name": image.tag},
    }


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
