"""Shared builders for the kubectl reading tests (test_kubectl_discovery, test_kubectl_get,
test_kubectl_get_watch, test_kubectl_describe_events_explain).

What may live here: manifests and timestamps those modules feed kubectl, and readers of kubectl's
plain output. What the whole kubectl suite shares lives in suite.py; tests, and builders only
one module uses, belong in the modules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def utc_timestamp() -> str:
    """Now, written the way Kubernetes writes timestamps."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, namespace: str, *, node: str = "", **labels: str) -> dict[str, Any]:
    """A Pod manifest; with `node`, created already bound, as when its creator picks the node."""
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def names(output: str) -> set[str]:
    return set(output.split())
