"""Views across objects: top, rollout status and history, can_i, and the cluster overview.

Each view is what a person would otherwise assemble from several kubectl calls (`kubectl top`,
`rollout status`, `rollout history`, `auth can-i`, `describe nodes`), computed from the same API
answers. Built on `Reads`, so redaction, the namespace allow-list and bounds apply unchanged.
Rollout wording follows kubectl's messages, because people and models already know them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core import quantity
from core.connection import Api, Json
from core.errors import InvalidArgument, NotFound
from mcp_servers.common import arguments, bounds
from mcp_servers.common.cache import CachedApi, summaries
from mcp_servers.common.cache.summaries import PodSummary
from mcp_servers.kube import progress, rollouts
from mcp_servers.kube.reads import Reads
from mcp_servers.kube.resources import Resource

MiB = 2**20
UNHEALTHY_LIMIT = 20
FIRST_LIST_S = 120.0  # the overview waits this long for a pods cache's first list, not beside it
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
         "escalate", "bind", "impersonate", "use", "approve", "sign", "*")  # fmt: skip


class Views:
    def __init__(self, reads: Reads) -> None:
        self.reads = reads

    def top(
        self,
        what: str = "pods",
        *,
        namespace: str | None = None,
        sort_by: str = "cpu",
        limit: int = bounds.DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        if what not in ("pods", "nodes") or sort_by not in ("cpu", "memory"):
            raise InvalidArgument("top: what is 'pods' or 'nodes', sort_by is 'cpu' or 'memory'")
        api = self.reads.api(context)
        resource = self.reads.catalog.resolve(api, f"{what}.metrics.k8s.io")
        found = self.reads.objects(api, resource, namespace if what == "pods" else None)
        allocatable: dict[str, Json] = {}
        if what == "nodes":
            nodes = self.reads.objects(api, self.reads.catalog.resolve(api, "nodes"), None)
            allocatable = {n["metadata"]["name"]: n["status"].get("allocatable", {}) for n in nodes}
        table = []
        for m in found:
            usage: dict[str, float] = {"cpu": 0.0, "memory": 0.0}
            for part in m.get("containers") or [m]:
                for key in usage:
                    usage[key] += quantity.amount((part.get("usage") or {}).get(key))
            row: Json = {"name": m["metadata"]["name"]}
            if m["metadata"].get("namespace"):
                row["namespace"] = m["metadata"]["namespace"]
            row["cpu_m"] = round(usage["cpu"] * 1000)
            row["memory_mi"] = round(usage["memory"] / MiB)
            if what == "nodes":
                alloc = allocatable.get(row["name"], {})
                row["cpu_percent"] = _percent(usage["cpu"], quantity.amount(alloc.get("cpu")))
                row["memory_percent"] = _percent(
                    usage["memory"], quantity.amount(alloc.get("memory"))
                )
            table.append(row)
        table.sort(key=lambda r: r["cpu_m" if sort_by == "cpu" else "memory_mi"], reverse=True)
        return _paged(table, limit=limit, offset=offset, what=f"{what} metrics")

    def rollout_status(
        self,
        name: str,
        *,
        namespace: str | None = None,
        kind: str = "deployment",
        context: str | None = None,
    ) -> Json:
        word = progress.kind_of(kind)
        api = self.reads.fresh(context)  # whether a rollout is done is asked to decide
        resource = self.reads.catalog.resolve(api, f"{word}s.apps")
        return progress.status_of(word, self.reads.object(api, resource, name, namespace))

    def rollout_history(
        self, name: str, *, namespace: str | None = None, context: str | None = None
    ) -> Json:
        api = self.reads.fresh(context)  # asked before a rollback: the current revisions
        deployment = self.reads.object(
            api, self.reads.catalog.resolve(api, "deployments.apps"), name, namespace
        )
        scope = deployment["metadata"]["namespace"]
        sets = self.reads.objects(api, self.reads.catalog.resolve(api, "replicasets.apps"), scope)
        revisions = []
        for number, rs in rollouts.revisions(deployment, sets).items():
            meta = rs["metadata"]
            containers = rs.get("spec", {}).get("template", {}).get("spec", {}).get("containers")
            revisions.append(
                {
                    "revision": number,
                    "replicaset": meta["name"],
                    "images": [c.get("image") for c in containers or []],
                    "change_cause": (meta.get("annotations") or {}).get(rollouts.CHANGE_CAUSE, ""),
                    "replicas": rs.get("status", {}).get("replicas", 0),
                    "created": meta.get("creationTimestamp", ""),
                }
            )
        revisions.sort(key=lambda r: r["revision"])
        current = str(rollouts.revision(deployment) or "")
        return {"deployment": name, "current_revision": current, "revisions": revisions[-20:]}

    def can_i(
        self,
        verb: str,
        resource: str,
        *,
        namespace: str | None = None,
        name: str = "",
        subresource: str = "",
        context: str | None = None,
    ) -> Json:
        if verb not in VERBS:
            raise InvalidArgument(f"verb {verb!r}: use one of {', '.join(VERBS)}")
        if name:
            arguments.name(name)
        if subresource:
            arguments.kind(subresource, argument="subresource")
        api = self.reads.api(context)
        found = self.reads.catalog.resolve(api, resource)
        attributes: dict[str, Any] = {
            "verb": verb,
            "group": found.group,
            "resource": found.plural,
            "subresource": subresource,
            "name": name,
        }
        if found.namespaced:
            attributes["namespace"] = self.reads.namespace(namespace)
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}},
        }
        answer = api.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body=review,
            what="a self subject access review",
        )
        status = answer.get("status", {})
        return {
            "allowed": bool(status.get("allowed")),
            "verb": verb,
            "resource": found.label,
            **({"namespace": attributes["namespace"]} if "namespace" in attributes else {}),
            "reason": status.get("reason", ""),
        }

    def overview(self, *, context: str | None = None) -> Json:
        """Nodes with what their pods request, and what is unhealthy: from the pods cache's
        summaries when it has them (no pod decoded but the unhealthy shown), else one pass
        over the pods, page by page, so 50,000 of them never sit in memory at once."""
        api = self.reads.api(context)
        catalog = self.reads.catalog
        nodes = self.reads.objects(api, catalog.resolve(api, "nodes"), None)
        deployments = self.reads.objects(api, catalog.resolve(api, "deployments.apps"), None)
        pods = catalog.resolve(api, "pods")
        tally = self._summed(api, pods) or self._walked(api, pods)
        requested, placed = tally.requested, tally.placed
        bad_pods, unhealthy, pod_count = tally.bad_pods, tally.unhealthy, tally.pods
        node_rows = []
        for node in nodes:
            row = self.reads.row(api, node, kind="Node")
            alloc = node.get("status", {}).get("allocatable", {})
            sums = requested.get(row["name"], {"cpu": 0.0, "memory": 0.0})
            row["pods"] = placed.get(row["name"], 0)
            row["cpu_requested_percent"] = _percent(sums["cpu"], quantity.amount(alloc.get("cpu")))
            row["memory_requested_percent"] = _percent(
                sums["memory"], quantity.amount(alloc.get("memory"))
            )
            node_rows.append(row)
        bad_deployments = [
            self.reads.row(api, d, kind="Deployment")
            for d in deployments
            if d.get("status", {}).get("availableReplicas", 0)
            < d.get("spec", {}).get("replicas", 1)
        ]
        version = api.request("GET", "/version", what="the API server's version")
        answer: Json = {
            "server_version": str(version.get("gitVersion") or ""),
            "nodes": bounds.page(node_rows, limit=bounds.MAX_LIMIT, what="nodes").items,
            "node_count": len(nodes),
            "pod_count": pod_count,
            "deployment_count": len(deployments),
            "unhealthy_deployments": bad_deployments[:UNHEALTHY_LIMIT],
            "unhealthy_pods": bad_pods,
        }
        if len(bad_deployments) > UNHEALTHY_LIMIT or unhealthy > UNHEALTHY_LIMIT:
            answer["note"] = (
                f"{len(bad_deployments)} unhealthy deployments and {unhealthy} unhealthy pods "
                f"in all, {UNHEALTHY_LIMIT} of each shown; use list_resources per namespace"
            )
        return answer

    def _summed(self, api: Api, pods: Resource) -> _Tally | None:
        """The tally from the pods cache's summaries, None when a cache cannot give them all."""
        if not isinstance(api, CachedApi):
            return None
        tally, bad = _Tally(), []
        for scope in self.reads.scopes(pods, None):
            summarized = api.summaries(pods.path(scope), wait=FIRST_LIST_S)
            if summarized is None:
                return None
            for key, summary in summarized:
                if not isinstance(summary, PodSummary) or not self.reads.settings.allows(key[0]):
                    continue
                tally.add(summary)
                if summary.unhealthy:
                    bad.append(key)
        for namespace, name in sorted(bad):
            if len(tally.bad_pods) == UNHEALTHY_LIMIT:
                break
            try:
                pod = api.get(pods.path(namespace, name), what=f"pod {namespace}/{name}")
            except NotFound:
                continue  # gone since the summaries were read
            tally.bad_pods.append(self.reads.row(api, pod, kind="Pod"))
        return tally

    def _walked(self, api: Api, pods: Resource) -> _Tally:
        """The tally from one pass over every pod, page by page."""
        tally = _Tally()
        for pod in self.reads.each(api, pods, None):
            summary = summaries.pod(pod)
            tally.add(summary)
            if summary.unhealthy and len(tally.bad_pods) < UNHEALTHY_LIMIT:
                tally.bad_pods.append(self.reads.row(api, pod, kind="Pod"))
        return tally


@dataclass
class _Tally:
    """The pods of the overview: how many, which are unhealthy (the first UNHEALTHY_LIMIT
    rows), and per node how many it holds and what the running ones request."""

    pods: int = 0
    unhealthy: int = 0
    bad_pods: list[Json] = field(default_factory=list)
    placed: dict[str, int] = field(default_factory=dict)
    requested: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, summary: PodSummary) -> None:
        self.pods += 1
        self.unhealthy += summary.unhealthy
        if not summary.node:
            return
        self.placed[summary.node] = self.placed.get(summary.node, 0) + 1
        if summary.running:
            sums = self.requested.setdefault(summary.node, {"cpu": 0.0, "memory": 0.0})
            sums["cpu"] += summary.cpu
            sums["memory"] += summary.memory


def _percent(used: float, total: float) -> int | None:
    return round(100 * used / total) if total else None


def _paged(table: list[Json], *, limit: int, offset: int, what: str) -> Json:
    chosen = bounds.page(table, limit=limit, offset=offset, what=what)
    answer: Json = {"total": chosen.total, "offset": chosen.offset, "items": chosen.items}
    if chosen.note:
        answer["note"] = chosen.note
    return answer
