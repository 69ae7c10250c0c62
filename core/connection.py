"""Reaching a cluster: a kubeconfig, a context per call, raw JSON over the official client.

`Clusters` loads a kubeconfig once and keeps one `kubernetes.client.ApiClient` per context
(created on first use); every tool takes an optional `context` and falls back to the current one.
Requests go through `ApiClient.call_api` with `_preload_content=False` and come back as plain JSON
dicts: the same bytes a real API server sends, without building thousands of model objects (the
5,000-pod list is the case that matters). Kubernetes errors become the tool error tree here, once:
a 403 names the verb and resource the identity lacks, a 404 says what was not found.

The engine never knows whether the cluster is the sandbox or a real one: it has a kubeconfig.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import (
    Conflict,
    Expired,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ToolError,
    TooManyRequests,
    Unavailable,
)

if TYPE_CHECKING:  # imported on first use: a server lists its tools without the client
    import urllib3
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

Json = dict[str, Any]

# urllib3 warns once per connection retry; the call's final failure is what reaches the caller
# (Unavailable, naming the cluster and what to check), so the retries' lines are only noise on
# the terminal of every front door.
logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)


# How often the kubeconfig's credentials are re-applied. The client's refresh hook re-applies the
# whole kubeconfig user before every request (re-setting the host re-reads proxy settings from the
# whole environment): 0.1 ms of a 0.7 ms get, three times that on a process that was idle. It
# renews an expiring token 5 minutes ahead of its expiry, so running it every 10 s loses nothing.
REFRESH_EVERY_S = 10.0

# The crew reasons in the cluster's own time (node Lease renewals: `cluster_now`), so it asks
# for the cluster's stamps as they are. A real API server ignores the header; the sandbox, whose
# clock may run faster than life, otherwise shows its stamps moved onto the wall clock, as
# kubectl and scripts that compare them with `date` need (sandbox/timeframe.py).
CLOCK_HEADER = ("Kubecrew-Clock", "cluster")

REQUEST_TIMEOUT_S = 30.0  # a request's whole time, connection included


class WouldWait(Exception):
    """A request was about to go out where none may (`no_waiting`): run the call where it may
    wait. Not a ToolError: nothing catches it on its way up."""


_NO_WAITING = contextvars.ContextVar("no_waiting", default=False)


def may_wait() -> bool:
    """Whether this call may wait (for a request, or for a cache to catch up)."""
    return not _NO_WAITING.get()


@contextlib.contextmanager
def no_waiting() -> Iterator[None]:
    """Within, every request raises `WouldWait` instead of going out: for running a read on
    an event loop when its answers may all come from caches, and elsewhere when not."""
    token = _NO_WAITING.set(True)
    try:
        yield
    finally:
        _NO_WAITING.reset(token)


def _refresh_at_most_every(seconds: float, configuration: client.Configuration) -> None:
    refresh = configuration.refresh_api_key_hook
    if refresh is None:
        return
    due = 0.0

    def throttled(conf: client.Configuration) -> None:
        nonlocal due
        now = time.monotonic()
        if now >= due:
            refresh(conf)  # which installs its own hook again: put this one back
            conf.refresh_api_key_hook = throttled
            due = now + seconds

    configuration.refresh_api_key_hook = throttled


@dataclass
class Clusters:
    """The clusters a kubeconfig names, one API client per context."""

    kubeconfig: Path | None = None  # None: $KUBECONFIG or ~/.kube/config, as kubectl does
    default_context: str | None = None  # None: the kubeconfig's current context
    refresh_every: float = REFRESH_EVERY_S  # seconds between re-applications of credentials
    _clients: dict[str, client.ApiClient] = field(default_factory=dict)

    def contexts(self) -> tuple[list[str], str]:
        """The context names and the current one."""
        from kubernetes import config

        found, current = config.list_kube_config_contexts(
            config_file=str(self.kubeconfig) if self.kubeconfig else None
        )
        return [c["name"] for c in found], str(current["name"])

    def api(self, context: str | None = None, *, stale_ok: bool = False) -> Api:
        """The API of `context` (None: the default one). `stale_ok`: the caller takes an answer
        a moment old (a diagnosis, an overview), which a subclass that keeps watch-backed caches
        may give from them; here every read asks the API server."""
        from kubernetes import client, config

        if self.default_context is None:  # the current context, as the kubeconfig said at start
            self.default_context = self.contexts()[1]
        name = context or self.default_context
        if name not in self._clients:
            names, _ = self.contexts()
            if name not in names:
                raise InvalidArgument(
                    f"no context {name!r} in the kubeconfig; known contexts: {', '.join(names)}"
                )
            configuration = client.Configuration()
            config.load_kube_config(
                config_file=str(self.kubeconfig) if self.kubeconfig else None,
                context=name,
                client_configuration=configuration,
            )
            _refresh_at_most_every(self.refresh_every, configuration)
            api_client = client.ApiClient(configuration)
            api_client.set_default_header(*CLOCK_HEADER)
            self._clients[name] = api_client
        return Api(self._clients[name], name)

    def server(self, context: str | None = None) -> tuple[str, str | bool]:
        """The context's API server URL and how the kubeconfig verifies it: a CA file, True
        (the system's trust store) or False (insecure-skip-tls-verify), for a client of another
        service on that server (the sandbox's registries), which never gets the credentials."""
        from kubernetes import config

        try:
            configuration = self.api(context).client.configuration
        except config.ConfigException as exc:
            raise InvalidArgument(f"the kubeconfig cannot be read: {exc}") from exc
        verify: str | bool = configuration.ssl_ca_cert or bool(configuration.verify_ssl)
        return str(configuration.host).rstrip("/"), verify

    def close(self) -> None:
        for api_client in self._clients.values():
            api_client.close()
        self._clients.clear()


@dataclass(frozen=True)
class Api:
    """One context's API, spoken as JSON."""

    client: client.ApiClient
    context: str

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
        """`method path` with `query`; the decoded JSON answer, or a ToolError saying why not.
        `what` names the object for error messages ("deployment web in shop"); `timeout` bounds
        the whole request in seconds."""
        accept = "application/json"
        data = self._call(method, path, query, body, content_type, accept, what, timeout)
        return json.loads(data) if data else {}

    def get(self, path: str, *, what: str = "", **query: Any) -> Json:
        return self.request("GET", path, query=query, what=what)

    def watch(
        self, path: str, *, what: str = "", timeout_seconds: int = 300, **query: Any
    ) -> Watch:
        """A watch on the collection at `path` (`resourceVersion`, `allowWatchBookmarks`,
        selectors in `query`), open once this returns: its events as they come, until the API
        server ends it after `timeout_seconds` or `Watch.close` is called from another thread.
        A resourceVersion the server no longer keeps is `Expired`, here or while iterating."""
        if _NO_WAITING.get():
            raise WouldWait(f"WATCH {path}")
        import urllib3
        from kubernetes.client.exceptions import ApiException

        params = [("watch", "true"), ("timeoutSeconds", str(timeout_seconds))]
        params += [(k, _param(v)) for k, v in query.items() if v not in (None, "")]
        try:
            method, url, headers, body, post = self.client.param_serialize(
                "GET",
                path,
                query_params=params,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            answer = self.client.call_api(
                method, url, headers, body, post, _request_timeout=(10, timeout_seconds + 30)
            )
            if not 200 <= answer.status < 300:
                answer.read()
                raise ApiException(http_resp=answer)
        except ApiException as exc:
            raise _tool_error(exc, "WATCH", path, what) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise Unavailable(
                f"the cluster of context {self.context!r} did not answer a watch ({exc})"
            ) from exc
        return Watch(answer.response, what or path)

    def text(self, path: str, *, what: str = "", **query: Any) -> str:
        """A text answer, such as `pods/log`, with the same error mapping."""
        data = self._call("GET", path, query, None, "application/json", "text/plain", what)
        return data.decode("utf-8", "replace")

    def _call(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        body: Any,
        content_type: str,
        accept: str,
        what: str,
        timeout: float = REQUEST_TIMEOUT_S,
    ) -> bytes:
        if _NO_WAITING.get():
            raise WouldWait(f"{method} {path}")
        import urllib3
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": accept, "Content-Type": content_type}
        params = [(k, _param(v)) for k, v in (query or {}).items() if v not in (None, "")]
        try:
            method, url, headers, body, post = self.client.param_serialize(
                method,
                path,
                query_params=params,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = self.client.call_api(
                method, url, headers, body, post, _request_timeout=timeout
            )
            data = response.read()
            if not 200 <= response.status < 300:
                raise ApiException(http_resp=response)
        except ApiException as exc:
            raise _tool_error(exc, method, path, what) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise Unavailable(
                f"the cluster of context {self.context!r} did not answer ({exc}); "
                "check that it is running and the kubeconfig points at it"
            ) from exc
        return bytes(data or b"")


class Watch:
    """An open watch: iterate for (type, object) pairs: ADDED, MODIFIED, DELETED, BOOKMARK."""

    def __init__(self, response: urllib3.HTTPResponse, what: str) -> None:
        self.response = response
        self.what = what

    def __iter__(self) -> Iterator[tuple[str, Json]]:
        import urllib3

        try:
            for line in self.response:
                if not line.strip():
                    continue
                event = json.loads(line)
                kind, obj = str(event.get("type")), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Expired(f"{self.what}: {obj.get('message', 'too old')}")
                    raise Unavailable(f"the watch on {self.what} failed: {obj.get('message')}")
                yield kind, obj
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise Unavailable(f"the watch on {self.what} broke off ({exc})") from exc
        finally:
            self.response.release_conn()

    def close(self) -> None:
        """End the watch; safe from another thread, which the iterating one then notices."""
        with contextlib.suppress(RuntimeError, ValueError):  # ended already, or broken off
            self.response.shutdown()


def _param(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value


def _tool_error(exc: ApiException, method: str, path: str, what: str) -> ToolError:
    message = _status_message(exc)
    subject = what or path
    if exc.status == 403:
        return PermissionDenied(
            f"permission denied: {message} (the identity of this server may not "
            f"{_verb(method)} {subject}; ask a cluster admin for RBAC that allows it)"
        )
    if exc.status == 404:
        return NotFound(f"{subject} was not found: {message}")
    if exc.status == 409:
        return Conflict(f"{subject}: {message}")
    if exc.status == 429:
        return TooManyRequests(f"{subject}: {message}")
    if exc.status == 410:
        return Expired(f"{subject}: {message}")
    if exc.status in (400, 422):
        return InvalidArgument(f"{subject}: {message}")
    if exc.status == 401:
        return PermissionDenied(
            f"the cluster refused the credentials of this kubeconfig: {message}"
        )
    return Unavailable(f"{subject}: the API answered {exc.status}: {message}")


def _status_message(exc: ApiException) -> str:
    """The Status message, with its causes (an eviction's names the disruption budget)."""
    try:
        status = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        return str(exc.reason or exc.status)
    causes = (status.get("details") or {}).get("causes") or []
    messages = [str(c["message"]) for c in causes if c.get("message")]
    message = str(status.get("message") or exc.reason or exc.status)
    return "; ".join([message, *[m for m in messages if m not in message]])


def _verb(method: str) -> str:
    return {"GET": "read", "POST": "create", "PUT": "update", "PATCH": "patch"}.get(
        method, method.lower()
    )
