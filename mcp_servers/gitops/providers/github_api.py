"""GitHub's REST API for one repository: the HTTP side of the GitHub PR provider.

It is kept apart from the provider so that everything about talking to GitHub lives in one
place: the keep-alive client and its headers, `Link` pagination, and the mapping of every HTTP
failure to the tool error tree (`_error`), with messages that say what to do. The provider above
it speaks only in paths relative to `/repos/{owner}/{name}/` and decoded JSON.

The token lives only in the client's headers: it is never put in a message, a URL or an
argument list, and a next-page link to another host is refused rather than followed with it.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import httpx

from core.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ToolError,
    TooManyRequests,
    Unavailable,
)

Json = dict[str, Any]

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
PER_PAGE = 100
MAX_PAGES = 20  # lists stop at the newest 2,000 items: GitHub returns newest first


class GitHubApi:
    """One repository's REST endpoints, reached with one token over one connection pool."""

    def __init__(
        self,
        *,
        slug: str,
        token: str,
        token_env: str,
        api_url: str = DEFAULT_API_URL,
        timeout: float = 30.0,
    ) -> None:
        self.slug = slug
        self._token_env = token_env
        self._base = httpx.URL(api_url.rstrip("/") + f"/repos/{slug}/")
        self._http = httpx.Client(
            base_url=self._base,
            timeout=timeout,
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "Authorization": f"Bearer {token}",
                "User-Agent": "kubecrew-gitops",
            },
        )
        # One keep-alive pool for the server's life, closed when the API object goes away.
        weakref.finalize(self, self._http.close)

    def paged(self, path: str, *, params: Json | None = None, key: str = "") -> list[Json]:
        """Every item of a list endpoint, following `Link: rel="next"` on GitHub's own host."""
        items: list[Json] = []
        url: str | None = path
        query: Json | None = {**(params or {}), "per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            if url is None:
                break
            response = self.call("GET", url, params=query)
            body = _decoded(response)
            items.extend(body[key] if key else body)
            url, query = response.links.get("next", {}).get("url"), None
            if url and _origin(httpx.URL(url)) != _origin(self._base):  # the token goes along
                raise Unavailable(
                    f"GitHub sent a next-page link off {self._base.host}; not followed"
                )
        return items

    def json(self, method: str, path: str, *, json: Json | None = None) -> Any:
        """The decoded JSON answer to one call."""
        return _decoded(self.call(method, path, json=json))

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Json | None = None,
        json: Json | None = None,
        accept: str | None = None,
        tolerate: tuple[int, ...] = (),
    ) -> httpx.Response:
        """One call; a failure (other than the `tolerate`d statuses) raises a `ToolError`."""
        shown = httpx.URL(path).path if "://" in path else f"/repos/{self.slug}/{path}"
        call = f"{method} {shown}"  # names the call in errors; a next-page link is absolute
        headers = {"Accept": accept} if accept else None
        try:
            response = self._http.request(method, path, params=params, json=json, headers=headers)
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"GitHub at {self._base.host} did not answer {call} ({type(exc).__name__}); "
                "retry later"
            ) from exc
        if response.is_success or response.status_code in tolerate:
            return response
        raise self._error(response, call)

    def _error(self, response: httpx.Response, call: str) -> ToolError:
        status, headers, message = response.status_code, response.headers, _message(response)
        limited = headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers
        if status == 401:
            return PermissionDenied(
                f"GitHub refused the token in ${self._token_env} ({message}): it is missing, "
                f"expired or invalid; set {self._token_env} to a token with access to "
                f"{self.slug} and restart the server"
            )
        if status in (403, 429) and (limited or "rate limit" in message.lower()):
            return TooManyRequests(f"GitHub's rate limit stopped {call}: {_when(headers)}")
        if status == 403:
            return PermissionDenied(
                f"GitHub refused {call} ({message}); the token in ${self._token_env} needs "
                f"write access to pull requests, issues and contents of {self.slug}"
            )
        if status == 404:
            return NotFound(
                f"GitHub found nothing at {call}; check the number with list_prs, and that "
                f"the token in ${self._token_env} can see {self.slug}"
            )
        if status in (405, 409, 422):
            return Conflict(f"GitHub refused {call}: {message}")
        if status >= 500:
            return Unavailable(f"GitHub failed {call} ({status} {message}); retry later")
        return InvalidArgument(f"GitHub refused {call} ({status}): {message}")


def _decoded(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:  # a proxy's HTML page, say
        raise Unavailable(f"{response.url.host} answered {response.url.path} with no JSON") from exc


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _message(response: httpx.Response) -> str:
    """GitHub's error message and its validation errors, short."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    parts = [str(body.get("message") or response.reason_phrase)]
    for e in body.get("errors") or []:
        if not isinstance(e, dict):
            parts.append(str(e))  # some endpoints list plain strings
            continue
        parts.append(e.get("message") or f"{e.get('field', '')} {e.get('code', '')}".strip())
    return "; ".join(p for p in parts if p)[:500]


def _when(headers: httpx.Headers) -> str:
    if (after := headers.get("retry-after", "")).isdigit():
        return f"retry in {after} s"
    if (reset := headers.get("x-ratelimit-reset", "")).isdigit():
        wait = max(0, int(reset) - int(time.time()))
        at = time.strftime("%H:%M:%S UTC", time.gmtime(int(reset)))
        return f"the limit resets at {at}; retry in {wait} s"
    return "wait a minute before retrying"
