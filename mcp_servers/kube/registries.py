"""Asking image registries which repositories and tags exist, through the OCI distribution API.

`parse` reads an image reference the way a container runtime does (`nginx:1.27` is
`docker.io/library/nginx:1.27`; a first component with a dot, a colon or `localhost` is a
registry host), so the registry asked is the one a node would pull from. `Registries.tags` lists
a repository's tags (`GET /v2/<name>/tags/list`, following the `Link` pages), `repositories` a
registry's catalog (`/v2/_catalog`, which many registries, Docker Hub included, do not serve),
and `exists` one manifest (`HEAD /v2/<name>/manifests/<tag or digest>`).

Which registries are asked, and where, is the mirror map (`KubeSettings.registries`): registry
host -> base URL whose `/v2/` is that registry. A `*` entry serves every host not named and may
hold `{host}`; the value `direct` is the registry's own API (docker.io's is registry-1.docker.io).
A host the map does not cover is never asked, and an empty map (the default) asks nobody: the
crew then works offline, from what the cluster has pulled, and nothing leaves the network.

Trust. A base URL on the cluster's own API server (a path such as `/registries/{host}`, resolved
against the kubeconfig context's server, or an absolute URL with the same origin) is verified
with that context's certificate authority, from the kubeconfig: the server is the one the
kubeconfig already vouches for, and when it moves (the sandbox picks a new port and a new CA at
each start) the mirror moves with it, with no second copy of the CA to keep in sync. Any other
base URL is verified with the system's trust store (which `SSL_CERT_FILE` extends for a private
CA), as every other client on the machine verifies it. The cluster's credentials are never sent
to a registry.

Registries are asked anonymously. A registry that answers 401 with a `Bearer` challenge (Docker
Hub, GHCR, Quay...) gets the anonymous token handshake: the token is fetched from the challenge's
realm for its service and scope, cached until it expires, and the request retried once with it.
Docker Hub answers 401 even with a token for a repository it does not hold, so a repository
still refused after the handshake reads as absent (`TagList.found` False), never as an error.

Failures are `core.errors`, one line each: an unreachable registry is `Unavailable` naming the
URL, a rate limit `TooManyRequests`, a host no mirror covers `PermissionDenied`. This module
knows HTTP and references, nothing of pods or fixes.
"""

from __future__ import annotations

import re
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from core.connection import Clusters
from core.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ToolError,
    TooManyRequests,
    Unavailable,
)

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
DIRECT = "direct"
WILDCARD = "*"
TIMEOUT = 10.0  # seconds per request: a registry that is slower is treated as unreachable
PAGE = 1000  # entries asked per page; a registry may send fewer and say so in its Link
MAX_PAGES = 100
MAX_TAGS = 10_000

_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$")
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
JSON = "application/json"
MANIFESTS = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)


@dataclass(frozen=True)
class ImageName:
    """An image reference, normalized: `host/path`, and the tag or digest as written."""

    host: str  # "docker.io"
    path: str  # "library/nginx"
    tag: str = ""  # "" with a digest, else "latest" when none was written
    digest: str = ""
    familiar: bool = False  # written without a host ("nginx", "bitnami/redis")

    @property
    def repository(self) -> str:
        return f"{self.host}/{self.path}"

    @property
    def name(self) -> str:
        """The repository as its owner writes it: `nginx`, `bitnami/redis`, `ghcr.io/org/app`."""
        if not self.familiar:
            return self.repository
        return self.path.removeprefix("library/")

    @property
    def key(self) -> str:
        """One string per image, however it was written: `docker.io/library/nginx:1.27`."""
        return (
            f"{self.repository}@{self.digest}" if self.digest else f"{self.repository}:{self.tag}"
        )

    def with_tag(self, tag: str) -> ImageName:
        return replace(self, tag=tag, digest="")

    def with_path(self, path: str) -> ImageName:
        return replace(self, path=path)

    def __str__(self) -> str:
        """The reference written the way the original was (short names stay short)."""
        return f"{self.name}@{self.digest}" if self.digest else f"{self.name}:{self.tag}"


def parse(reference: str) -> ImageName:
    """`reference` normalized as a container runtime does; InvalidArgument when it is none."""
    text = reference.strip()
    name, _, digest = text.partition("@")
    tag, tagged = "", False
    slash, colon = name.rfind("/"), name.rfind(":")
    if colon > slash:
        name, tag, tagged = name[:colon], name[colon + 1 :], True
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        host, path, familiar = first, rest, False
    else:
        host, path, familiar = DOCKER_HUB, name, True
    if host == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    problem = _problem(path, tag, digest) or ("an empty tag" if tagged and not tag else "")
    if problem:
        raise InvalidArgument(f"{reference!r} is not an image reference: {problem}")
    return ImageName(host, path, tag or ("" if digest else "latest"), digest, familiar)


def _problem(path: str, tag: str, digest: str) -> str:
    if not path or not all(_COMPONENT.match(part) for part in path.split("/")):
        return "a repository is lowercase letters, digits and separators (. _ __ -) between /"
    if tag and not _TAG.match(tag):
        return "a tag is up to 128 letters, digits, '.', '_' or '-'"
    if digest and not _DIGEST.match(digest):
        return "a digest is algorithm:hex, such as sha256:0123..."
    return ""


@dataclass(frozen=True)
class TagList:
    """What a registry lists for one repository."""

    repository: str  # "docker.io/library/nginx"
    tags: tuple[str, ...]  # as the registry lists them (lexical order)
    source: str  # the URL asked
    found: bool = True  # False: the registry holds no such repository
    complete: bool = True  # False: more tags exist than were read


class Registries:
    """The registries the mirror map lets this server ask, with the anonymous tokens they gave.

    Each question opens its own HTTP client (its pages and token handshake share it) and closes
    it, so nothing stays open between tool calls; the TLS contexts and tokens are kept. Safe to
    share between the server's worker threads."""

    def __init__(
        self,
        mirrors: Mapping[str, str],
        clusters: Clusters | None = None,
        *,
        timeout: float = TIMEOUT,
        page: int = PAGE,
    ) -> None:
        self.mirrors = dict(mirrors)
        self._clusters = clusters
        self._timeout = timeout
        self._page = page
        self._trust: dict[str, ssl.SSLContext] = {}  # CA file ("" for the system's) -> context
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}  # (origin, scope) -> token
        self._lock = threading.Lock()

    @property
    def configured(self) -> bool:
        return bool(self.mirrors)

    # -- what a registry holds -----------------------------------------------------------------

    def tags(
        self, image: str | ImageName, *, limit: int = MAX_TAGS, context: str | None = None
    ) -> TagList:
        """The tags of `image`'s repository, at most `limit` of them."""
        name = parse(image) if isinstance(image, str) else image
        base, verify = self._base(name.host, context)
        url = f"{base}/v2/{name.path}/tags/list"
        tags: list[str] = []
        with self._client(verify) as client:
            pages = self._pages(client, url, f"repository:{name.path}:pull", limit, "tags")
            try:
                for page in pages:
                    tags.extend(page)
            except _Absent:
                return TagList(name.repository, (), url, found=False)
            except _Cut:
                return TagList(name.repository, tuple(tags[:limit]), url, complete=False)
        return TagList(name.repository, tuple(tags), url)

    def repositories(
        self, host: str, *, limit: int = MAX_TAGS, context: str | None = None
    ) -> list[str]:
        """The registry's catalog (repository paths: `library/nginx`); NotFound when the
        registry serves none."""
        base, verify = self._base(host, context)
        url = f"{base}/v2/_catalog"
        found: list[str] = []
        with self._client(verify) as client:
            try:
                for page in self._pages(client, url, "registry:catalog:*", limit, "repositories"):
                    found.extend(page)
            except _Absent as exc:
                raise NotFound(f"the registry {host} at {base} serves no catalog") from exc
            except _Cut:
                return found[:limit]
        return found

    def exists(self, image: str | ImageName, *, context: str | None = None) -> bool:
        """Whether the registry holds the manifest `image` names (its tag or digest)."""
        name = parse(image) if isinstance(image, str) else image
        base, verify = self._base(name.host, context)
        url = f"{base}/v2/{name.path}/manifests/{name.digest or name.tag}"
        with self._client(verify) as client:
            try:
                self._request(client, "HEAD", url, f"repository:{name.path}:pull", MANIFESTS)
            except _Absent:
                return False
        return True

    # -- where each registry is, and how it is trusted -----------------------------------------

    def _base(self, host: str, context: str | None) -> tuple[str, str | bool]:
        """The base URL for `host`, and how to verify it: a CA file, True (the system's
        trust store) or False (the kubeconfig says not to verify its server)."""
        mirror = self.mirrors.get(host, self.mirrors.get(WILDCARD))
        if mirror is None:
            named = ", ".join(sorted(self.mirrors)) or "none"
            raise PermissionDenied(
                f"no registry is configured for {host} (configured: {named}); name it, or `*`, "
                "in the crew file's `registries` (kube server: --registry HOST=URL)"
            )
        if mirror.strip() == DIRECT:
            base = f"https://{DOCKER_HUB_API if host == DOCKER_HUB else host}"
        else:
            base = mirror.strip().replace("{host}", host).rstrip("/")
        cluster = self._cluster(context, needed=base.startswith("/"))
        if cluster is not None and base.startswith("/"):
            base = cluster[0] + base
        if cluster is not None and _origin(base) == _origin(cluster[0]):
            return base, cluster[1]
        return base, True

    def _cluster(self, context: str | None, *, needed: bool) -> tuple[str, str | bool] | None:
        """The context's server URL and how the kubeconfig verifies it; None when there is no
        kubeconfig to read and the mirror does not need one."""
        try:
            if self._clusters is None:
                raise InvalidArgument("this server was started without a kubeconfig")
            return self._clusters.server(context)
        except ToolError as exc:
            if not needed:
                return None
            raise InvalidArgument(
                f"a registry mirror on the cluster's own server needs the kubeconfig: {exc.message}"
            ) from exc

    def _client(self, verify: str | bool) -> httpx.Client:
        trust: ssl.SSLContext | bool = False
        if verify is not False:
            cafile = verify if isinstance(verify, str) else ""
            with self._lock:
                if cafile not in self._trust:
                    self._trust[cafile] = ssl.create_default_context(cafile=cafile or None)
                trust = self._trust[cafile]
        return httpx.Client(verify=trust, timeout=self._timeout, follow_redirects=True)

    # -- the protocol --------------------------------------------------------------------------

    def _pages(
        self, client: httpx.Client, url: str, scope: str, limit: int, key: str
    ) -> Iterator[list[str]]:
        """Each page of a paged list, following `Link` on the same origin; `_Cut` when entries
        beyond the first `limit` exist (or may: a Link elsewhere, too many pages)."""
        seen = 0
        asked: str | None = str(httpx.URL(url, params={"n": min(self._page, max(limit, 1))}))
        for _ in range(MAX_PAGES):
            if asked is None:
                return
            response = self._request(client, "GET", asked, scope)
            items = [str(item) for item in (_json(response).get(key) or [])]
            seen += len(items)
            yield items
            asked = _next(response)
            if asked is not None and _origin(asked) != _origin(url):
                raise _Cut  # a Link to another host: never followed with this host's token
            if seen > limit or (seen == limit and asked is not None):
                raise _Cut
        raise _Cut

    def _request(
        self, client: httpx.Client, method: str, url: str, scope: str, accept: str = JSON
    ) -> httpx.Response:
        origin = _origin(url)
        headers = {"Accept": accept}
        token = self._cached(origin, scope)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = self._send(client, method, url, headers)
        if response.status_code == 401:
            headers["Authorization"] = f"Bearer {self._handshake(client, response, scope)}"
            response = self._send(client, method, url, headers)
            if response.status_code == 401:  # Docker Hub's answer for a repository it lacks
                raise _Absent
        if response.status_code == 404:
            raise _Absent
        if response.status_code == 429:
            raise TooManyRequests(
                f"the registry at {origin} rate-limits these requests (429); retry later"
            )
        if not 200 <= response.status_code < 300:
            raise Unavailable(
                f"the registry at {origin} answered {response.status_code} for {url}: "
                f"{_error_text(response)}; retry later"
            )
        return response

    def _send(
        self, client: httpx.Client, method: str, url: str, headers: dict[str, str]
    ) -> httpx.Response:
        try:
            return client.request(method, url, headers=headers)
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"the registry at {_origin(url)} did not answer ({_one_line(exc)}); check the "
                "mirror in `registries` and that it runs, then retry"
            ) from exc

    def _handshake(self, client: httpx.Client, response: httpx.Response, scope: str) -> str:
        """An anonymous token for the challenge in `response`, cached for its lifetime."""
        origin = _origin(str(response.url))
        scheme, _, params = response.headers.get("www-authenticate", "").partition(" ")
        if scheme.lower() != "bearer":
            raise PermissionDenied(
                f"the registry at {origin} asks for credentials ({scheme or 'no challenge'}); "
                "the crew asks registries anonymously: use a mirror that allows anonymous pulls"
            )
        said = dict(_CHALLENGE.findall(params))
        if not said.get("realm"):
            raise Unavailable(f"the registry at {origin} sent a Bearer challenge with no realm")
        realm = httpx.URL(str(response.url)).join(said["realm"])
        query = {"service": said.get("service", ""), "scope": said.get("scope", scope)}
        asked = str(realm.copy_merge_params(query))
        answer = self._send(client, "GET", asked, {"Accept": JSON})
        if answer.status_code != 200:
            raise PermissionDenied(
                f"the token service at {_origin(asked)} refused an anonymous token for "
                f"{query['scope']} ({answer.status_code}): {_error_text(answer)}"
            )
        body = _json(answer)
        token = str(body.get("token") or body.get("access_token") or "")
        if not token:
            raise Unavailable(f"the token service at {_origin(asked)} sent no token")
        lifetime = float(body.get("expires_in") or 60)
        with self._lock:
            self._tokens[(origin, scope)] = (token, time.monotonic() + lifetime * 0.9)
        return token

    def _cached(self, origin: str, scope: str) -> str:
        with self._lock:
            token, until = self._tokens.get((origin, scope), ("", 0.0))
        return token if time.monotonic() < until else ""


class _Absent(Exception):
    """The registry holds no such repository or manifest (404, or still 401 with a token)."""


class _Cut(Exception):
    """More entries exist than were read."""


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError as exc:
        raise Unavailable(
            f"the registry at {_origin(str(response.url))} answered with no JSON: "
            f"{response.text[:120]!r}"
        ) from exc
    return body if isinstance(body, dict) else {}


def _next(response: httpx.Response) -> str | None:
    found = _NEXT.search(response.headers.get("link", ""))
    if found is None:
        return None
    return str(httpx.URL(str(response.url)).join(found.group(1)))


def _origin(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.netloc.decode()}"


def _error_text(response: httpx.Response) -> str:
    try:
        errors = response.json().get("errors") or []
        return (
            "; ".join(f"{e.get('code')}: {e.get('message')}" for e in errors) or response.text[:200]
        )
    except (ValueError, AttributeError):
        return _one_line(response.text[:200]) or response.reason_phrase


def _one_line(value: object) -> str:
    return " ".join(str(value).split())
