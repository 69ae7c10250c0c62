"""The sandbox's metrics in the Prometheus text format 0.0.4: what a real cluster's
kube-state-metrics, cAdvisor (kubelet), API server and instrumented applications would expose
together.

    render(cluster) -> str        served as GET /kubecrew/v1/metrics (bearer token, like the API)
    render_api_server(cluster)    the API server's own families alone: GET /metrics, as
                                  kube-apiserver serves them

    text.py            the format: families, HELP/TYPE, label escaping, numbers
    apiserver.py       apiserver_requested_deprecated_apis
    pods.py            kube_pod_* and kube_pod_container_* from Pods
    workloads.py       Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
                       HPAs, PDBs
    infrastructure.py  Nodes, Namespaces, Services, Endpoints, PVs, PVCs
    usage.py           container_* / node_* usage and http_request* traffic per Service

Every scrape first advances `cluster.traffic` to the sandbox clock, so counters grow with sandbox
time, not with how often someone scrapes. Rendering only reads: it writes nothing to the store.
It knows no HTTP; whoever serves it sets `Content-Type: text/plain; version=0.0.4`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox.exposition.apiserver import render_apiserver
from sandbox.exposition.infrastructure import (
    render_namespaces,
    render_nodes,
    render_services,
    render_storage,
)
from sandbox.exposition.pods import render_pods
from sandbox.exposition.text import Exposition
from sandbox.exposition.usage import render_traffic, render_usage
from sandbox.exposition.workloads import KINDS, render_workloads

if TYPE_CHECKING:
    from sandbox.cluster import Cluster

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

__all__ = ["CONTENT_TYPE", "render", "render_api_server"]


def render(cluster: Cluster) -> str:
    cluster.traffic.advance(cluster.clock.seconds())
    store = cluster.store
    out = Exposition()
    render_pods(out, store.list(("", "pods")))
    render_workloads(out, {kind.key: store.list(kind.key) for kind in KINDS})
    render_nodes(out, store.list(("", "nodes")))
    render_namespaces(out, store.list(("", "namespaces")))
    render_services(out, store.list(("", "services")), store.list(("", "endpoints")))
    render_storage(
        out, store.list(("", "persistentvolumeclaims")), store.list(("", "persistentvolumes"))
    )
    render_usage(out, store, cluster.metrics, cluster.traffic)
    render_traffic(out, cluster.traffic)
    render_apiserver(out, cluster.metrics.deprecated_requests)
    return out.text()


def render_api_server(cluster: Cluster) -> str:
    out = Exposition()
    render_apiserver(out, cluster.metrics.deprecated_requests)
    return out.text()
