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

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ToolError,
    TooManyRequests,
    Unavailable,
)

if TYPE_CHECKING:  # imported on first use: a server lists its tools without the client
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

    def api(self, context: str | None = None) -> Api:
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
