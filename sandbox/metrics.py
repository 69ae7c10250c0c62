"""Resource usage served as metrics.k8s.io/v1beta1 (what `kubectl top` reads), and the API
server's own record of deprecated API requests (`deprecated_requests`).

The simulator reports usage per container and per node; the API serves PodMetrics and NodeMetrics
built from it. Usage is not stored as API objects: it changes constantly and nobody watches it,
exactly as metrics-server keeps it in memory. The deprecated requests are kept in memory too, as
kube-apiserver keeps its gauges: a restarted sandbox starts with none (sandbox.exposition
renders them as `apiserver_requested_deprecated_apis`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.clock import Clock
from sandbox.deprecations import DeprecatedRequests

API_VERSION = "metrics.k8s.io/v1beta1"


@dataclass(frozen=True)
class Usage:
    cpu: str  # a Quantity, e.g. "250m"
    memory: str  # e.g. "128Mi"

    def to_dict(self) -> dict[str, str]:
        return {"cpu": self.cpu, "memory": self.memory}


class MetricsBook:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._pods: dict[tuple[str, str], tuple[dict[str, Usage], dict[str, str], str]] = {}
        self._nodes: dict[str, tuple[Usage, str]] = {}
        self.deprecated_requests = DeprecatedRequests()

    def record_pod(
        self,
        namespace: str,
        name: str,
        containers: dict[str, Usage],
        labels: dict[str, str] | None = None,
    ) -> None:
        self._pods[(namespace, name)] = (containers, labels or {}, self.clock.timestamp())

    def record_node(self, name: str, usage: Usage) -> None:
        self._nodes[name] = (usage, self.clock.timestamp())

    def forget_pod(self, namespace: str, name: str) -> None:
        self._pods.pop((namespace, name), None)

    def pods(self, namespace: str | None) -> list[dict[str, Any]]:
        return [
            self._pod(ns, name)
            for ns, name in sorted(self._pods)
            if namespace is None or ns == namespace
        ]

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._pod(namespace, name) if (namespace, name) in self._pods else None

    def nodes(self) -> list[dict[str, Any]]:
        return [self._node(name) for name in sorted(self._nodes)]

    def node(self, name: str) -> dict[str, Any] | None:
        return self._node(name) if name in self._nodes else None

    def _pod(self, namespace: str, name: str) -> dict[str, Any]:
        containers, labels, stamp = self._pods[(namespace, name)]
        return {
            "kind": "PodMetrics",
            "apiVersion": API_VERSION,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "creationTimestamp": stamp,
                "labels": labels,
            },
            "timestamp": stamp,
            "window": "30s",
            "containers": [{"name": c, "usage": u.to_dict()} for c, u in containers.items()],
        }

    def _node(self, name: str) -> dict[str, Any]:
        usage, stamp = self._nodes[name]
        return {
            "kind": "NodeMetrics",
            "apiVersion": API_VERSION,
            "metadata": {"name": name, "creationTimestamp": stamp},
            "timestamp": stamp,
            "window": "30s",
            "usage": usage.to_dict(),
        }
