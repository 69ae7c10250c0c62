"""A small reader of a running sandbox's API, holding nothing but its kubeconfig.

`kubecrew sandbox up` waits on `/readyz` and `status` counts nodes and namespaces; both ask over
HTTP(S) with the kubeconfig's first cluster and bearer token, as any client would, so what they
see is what kubectl with that kubeconfig sees. The fault commands, the demo and the evals drive
the sandbox's admin endpoint (`FAULTS_PATH`) the same way. Every failure (unreadable kubeconfig,
refused connection, error status, non-JSON body) is one `SandboxUnreachable`, chained to its
cause. It knows nothing of sandbox homes or processes, and keeps the token out of its repr so
it cannot leak into a message.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FAULTS_PATH = "/kubecrew/v1/faults"  # the sandbox's admin endpoint: faults added, listed, cleared
CLOCK_PATH = "/kubecrew/v1/clock"  # the sandbox's clock: now, rate, seed


class SandboxUnreachable(Exception):
    """The sandbox API did not answer as expected (refused, timed out, or an error status)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status when the server answered with an error


@dataclass(frozen=True)
class ApiClient:
    server: str
    token: str = field(repr=False)
    ca_pem: bytes | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path) -> ApiClient:
        try:
            config = yaml.safe_load(path.read_text())
            cluster = config["clusters"][0]["cluster"]
            token = config["users"][0]["user"]["token"]
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
            raise SandboxUnreachable(f"cannot read the kubeconfig {path}: {exc}") from exc
        ca = cluster.get("certificate-authority-data")
        return cls(cluster["server"], token, base64.b64decode(ca) if ca else None)

    def get(self, path: str, *, timeout: float = 5.0) -> bytes:
        return self._send("GET", path, None, timeout=timeout)

    def call(self, method: str, path: str, body: object = None, *, timeout: float = 10.0) -> Any:
        """`method path` with a JSON body, the JSON answer back: how the admin endpoint
        (`FAULTS_PATH`) is driven. An error status carries the server's own message."""
        data = None if body is None else json.dumps(body).encode()
        answer = self._send(method, path, data, timeout=timeout)
        try:
            return json.loads(answer) if answer else None
        except json.JSONDecodeError as exc:
            raise SandboxUnreachable(f"{method} {path} did not return JSON") from exc

    def _send(self, method: str, path: str, data: bytes | None, *, timeout: float) -> bytes:
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.server + path, data, headers, method=method)
        context = None
        if self.ca_pem is not None:
            context = ssl.create_default_context(cadata=self.ca_pem.decode())
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
                body: bytes = response.read()
                return body
        except urllib.error.HTTPError as exc:
            message = _message(exc)
            if 400 <= exc.code < 500 and message != exc.reason:
                raise SandboxUnreachable(message, status=exc.code) from exc  # what to fix, alone
            raise SandboxUnreachable(
                f"{method} {path} answered {exc.code}: {message}", status=exc.code
            ) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise SandboxUnreachable(f"{self.server} is not answering: {exc}") from exc

    def get_json(self, path: str) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.get(path))
        except json.JSONDecodeError as exc:
            raise SandboxUnreachable(f"GET {path} did not return JSON") from exc
        return data


def _message(error: urllib.error.HTTPError) -> str:
    """The API's Status message when the body is one, else the HTTP reason."""
    try:
        message = json.loads(error.read()).get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message or error.reason)


@dataclass(frozen=True)
class ClusterCounts:
    nodes: int
    ready_nodes: int
    namespaces: int


def _is_ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def read_counts(client: ApiClient) -> ClusterCounts:
    nodes = client.get_json("/api/v1/nodes").get("items", [])
    namespaces = client.get_json("/api/v1/namespaces").get("items", [])
    return ClusterCounts(len(nodes), sum(map(_is_ready, nodes)), len(namespaces))


def read_clock_rate(client: ApiClient) -> float:
    """Sandbox seconds per real one (1: real time)."""
    return float(client.get_json(CLOCK_PATH).get("rate", 1.0))
