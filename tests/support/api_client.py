"""A raw HTTPS client of a sandbox's Kubernetes API, for tests of the wire itself.

`api_client(sandbox)` speaks as the kubeconfig's admin user and trusts the sandbox's CA, so a
test sends exactly the bytes it means to (duplicate keys, deep nesting, odd content types) and
reads exactly what came back: status code, `Status` body and `Warning` headers. `status_of`
checks an error answer is a well-formed Kubernetes `Status` and returns it.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any

import httpx
import yaml

from sandbox.server import Sandbox

JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}
STRATEGIC_PATCH = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY_PATCH = {"Content-Type": "application/apply-patch+yaml"}


def api_client(sandbox: Sandbox, *, timeout: float = 30) -> httpx.Client:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    token = config["users"][0]["user"]["token"]
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    return httpx.Client(
        base_url=sandbox.url,
        verify=ssl.create_default_context(cadata=ca.decode()),
        timeout=timeout,
        headers={"Authorization": f"Bearer {token}"},
    )


def status_of(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert body["kind"] == "Status", body
    assert body["code"] == response.status_code, body
    return body


def warnings_of(response: httpx.Response) -> list[str]:
    """The texts of the `Warning: 299 - "..."` headers, as client-go prints them."""
    texts = []
    for header in response.headers.get_list("warning"):
        text = header.split(" ", 2)[2]
        texts.append(text[1:-1].replace('\\"', '"').replace("\\\\", "\\"))
    return texts


def deployment(name: str, *, replicas: Any = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
