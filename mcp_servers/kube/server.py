"""The kube MCP server: FastMCP tools over the read engine, plus diagnosis (`tools_diagnose`).

Thin on purpose: each tool validates nothing itself and computes nothing itself; it hands its
arguments to `Reads` / `Views` (which check them against `common.arguments` and the namespace
allow-list) off the event loop, so one slow 5,000-pod list never stalls the session's other
calls. The bounded reads (a page of a list, one object, its description, events) are first tried
on the loop with every request forbidden: answered whole from the watch-backed caches
(`common.cache`), they skip the thread hops; otherwise they run in a worker thread as the rest.
Errors are the `core.errors` tree; FastMCP turns them into `isError` results whose text is the
error's message, which says what to do next.

Every tool here only reads, so each is annotated readOnly, non-destructive and idempotent; a
cluster is a closed domain (its objects, not the open internet), so openWorldHint is False;
`image_tags` asks image registries (`registries.py`, the settings' mirrors), which may be.
`apiserver_metrics` reads one metric of the API server's own /metrics (`apiserver_metrics.py`).
`--read-only` (settings.read_only) matters for the write tools, which register elsewhere.
With policies (settings.policies), the write tools register behind the policy gate (`gate`),
which is imported only then: a server without policies loads no policy code at all, and reads
never pass through the gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.server.fastmcp import FastMCP

from core.connection import Json
from core.errors import InvalidArgument, NotFound
from mcp_servers.common.bounds import DEFAULT_LIMIT
from mcp_servers.common.cache import CachedClusters
from mcp_servers.common.tools import READ_ONLY, cached_or_off_loop, new_server, off_loop
from mcp_servers.common.watched import WatchedClusters
from mcp_servers.kube import tools_diagnose, tools_drain, tools_watch, tools_write
from mcp_servers.kube.access import Access
from mcp_servers.kube.apiserver_metrics import family as metric_family
from mcp_servers.kube.reads import Output, Reads
from mcp_servers.kube.registries import MAX_TAGS, Registries
from mcp_servers.kube.resources import Catalog
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.views import Views
from mcp_servers.kube.writes import Writes

if TYPE_CHECKING:
    from mcp_servers.kube.gate import Gate

INSTRUCTIONS = """Read a Kubernetes cluster. Every tool takes an optional `context` (kubeconfig
context; default: the current one). Lists are paged: when a `note` is present, call again with
`offset` or a narrower selector. Secret values are never shown (keys are). Start with `overview`
for the cluster, `list_resources` / `describe` for objects, `events` and `logs` for why."""


def build(settings: KubeSettings) -> FastMCP:
    clusters = (
        CachedClusters(settings.kubeconfig, settings.context, namespaces=settings.namespaces)
        if settings.cache
        else WatchedClusters(settings.kubeconfig, settings.context)
    )
    registries = Registries(settings.registries, clusters)  # asks none when the map is empty
    catalog = Catalog()  # one discovery cache per server, for reads and writes alike
    mcp = new_server("kubecrew-kube", INSTRUCTIONS)
    writes = Writes(clusters, settings, catalog)
    gate = _gate(settings, writes)
    reads = Reads(clusters, settings, catalog)
    register_reads(mcp, reads)
    register_apiserver_metrics(mcp, reads)
    tools_diagnose.register(mcp, clusters, settings, registries)
    register_registries(mcp, registries)
    tools_watch.register(mcp, clusters, settings)
    # drain_plan always, drain unless read-only
    tools_drain.register(mcp, clusters, settings, gate=gate)
    if not settings.read_only:
        tools_write.register(mcp, writes, gate=gate)
    return mcp


def _gate(settings: KubeSettings, writes: Writes) -> Gate | None:
    if settings.read_only or not settings.policies:
        return None
    from mcp_servers.kube.gate import Gate

    return Gate.open(settings, writes)


def register_reads(mcp: FastMCP, reads: Reads) -> None:
    views = Views(reads)

    @mcp.tool(annotations=READ_ONLY)
    async def list_resources(
        kind: str,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        output: Output = "summary",
        fields: list[str] | None = None,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        """List objects of a kind (`pods`, `deploy`, `svc`, `Node`, `deployments.apps`, CRDs).
        namespace omitted: all (allowed) namespaces. output: `summary` rows (status columns, as
        kubectl get), `yaml`, or `fields` with dotted paths like `status.phase` or
        `spec.containers[*].image`. Paged with limit/offset."""
        return await cached_or_off_loop(
            reads.list_objects,
            kind,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            output=output,
            fields=fields,
            limit=limit,
            offset=offset,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def get_resource(
        kind: str,
        name: str,
        namespace: str | None = None,
        output: Output = "yaml",
        fields: list[str] | None = None,
        context: str | None = None,
    ) -> Json:
        """One object as `yaml` (default), a `summary` row, or selected `fields` (dotted paths).
        namespace defaults to `default` for namespaced kinds."""
        return await cached_or_off_loop(
            reads.get,
            kind,
            name,
            namespace=namespace,
            output=output,
            fields=fields,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def describe(
        kind: str, name: str, namespace: str | None = None, context: str | None = None
    ) -> Json:
        """Status summary, conditions, owner chain (pod -> ReplicaSet -> Deployment), containers
        (pods), and the most recent events of one object."""
        return await cached_or_off_loop(
            reads.describe, kind, name, namespace=namespace, context=context
        )

    @mcp.tool(annotations=READ_ONLY)
    async def events(
        namespace: str | None = None,
        kind: str = "",
        name: str = "",
        type: str = "",
        reason: str = "",
        since_seconds: int | None = None,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        """Events, newest first, filtered by involved object (kind, name), type (Normal or
        Warning), reason (BackOff, FailedScheduling, ...) and age (since_seconds)."""
        return await cached_or_off_loop(
            reads.events,
            namespace=namespace,
            kind=kind,
            name=name,
            type=type,
            reason=reason,
            since_seconds=since_seconds,
            limit=limit,
            offset=offset,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def logs(
        pod: str,
        namespace: str | None = None,
        container: str = "",
        previous: bool = False,
        tail: int = 200,
        since_seconds: int | None = None,
        grep: str = "",
        context: str | None = None,
    ) -> Json:
        """The last `tail` lines of a container's log (previous=True: the crashed instance's),
        optionally only lines containing `grep` (plain, case-insensitive substring)."""
        return await off_loop(
            reads.logs,
            pod,
            namespace=namespace,
            container=container,
            previous=previous,
            tail=tail,
            since_seconds=since_seconds,
            grep=grep,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def top(
        what: str = "pods",
        namespace: str | None = None,
        sort_by: str = "cpu",
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        """CPU (millicores) and memory (MiB) in use, from metrics.k8s.io: what=`pods` or `nodes`
        (nodes also as a percentage of allocatable). sort_by `cpu` or `memory`."""
        return await off_loop(
            views.top,
            what,
            namespace=namespace,
            sort_by=sort_by,
            limit=limit,
            offset=offset,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def rollout_status(
        name: str,
        namespace: str | None = None,
        kind: str = "deployment",
        context: str | None = None,
    ) -> Json:
        """Whether a rollout is done, as `kubectl rollout status` words it: kind is
        deployment (default), statefulset or daemonset."""
        return await off_loop(
            views.rollout_status, name, namespace=namespace, kind=kind, context=context
        )

    @mcp.tool(annotations=READ_ONLY)
    async def rollout_history(
        name: str, namespace: str | None = None, context: str | None = None
    ) -> Json:
        """A Deployment's revisions (from its ReplicaSets): images, change cause, replicas."""
        return await off_loop(views.rollout_history, name, namespace=namespace, context=context)

    @mcp.tool(annotations=READ_ONLY)
    async def can_i(
        verb: str,
        resource: str,
        namespace: str | None = None,
        name: str = "",
        subresource: str = "",
        context: str | None = None,
    ) -> Json:
        """Whether this server's identity may `verb` a `resource` (kubectl auth can-i)."""
        return await off_loop(
            views.can_i,
            verb,
            resource,
            namespace=namespace,
            name=name,
            subresource=subresource,
            context=context,
        )

    access = Access(reads)

    @mcp.tool(annotations=READ_ONLY)
    async def access_review(
        verb: str = "",
        resource: str = "",
        namespace: str | None = None,
        subject: str | None = None,
        limit: int = DEFAULT_LIMIT,
        context: str | None = None,
    ) -> Json:
        """Who may `verb` a `resource` (`pods`, `secrets`, `logs` or `pods/log`, `deploy`) in
        a namespace (omitted: anywhere), from the cluster's Roles, ClusterRoles and bindings as
        the RBAC authorizer reads them. With `subject` (a user `alice`, `group:NAME`, or a
        ServiceAccount `NAMESPACE/NAME`): yes or no for verb+resource, else every rule it holds
        (kubectl auth can-i --list --as)."""
        return await off_loop(
            access.review,
            verb,
            resource,
            namespace=namespace,
            subject=subject,
            limit=limit,
            context=context,
        )

    @mcp.tool(annotations=READ_ONLY)
    async def overview(context: str | None = None) -> Json:
        """The cluster at a glance: the API server's version, nodes with capacity vs
        requested CPU/memory, and the workloads and pods that are not healthy."""
        return await off_loop(views.overview, context=context)


def register_apiserver_metrics(mcp: FastMCP, reads: Reads) -> None:
    """`apiserver_metrics`: one metric of the API server's own /metrics (apiserver_metrics.py)."""

    @mcp.tool(annotations=READ_ONLY)
    async def apiserver_metrics(
        name: str, limit: int = DEFAULT_LIMIT, offset: int = 0, context: str | None = None
    ) -> Json:
        """One metric of the API server's own /metrics (kubectl get --raw /metrics): its help,
        type and samples with their labels, e.g. `apiserver_requested_deprecated_apis` (the
        deprecated API versions requested since the API server started)."""

        def read() -> Json:
            return metric_family(reads.api(context), name, limit=limit, offset=offset)

        return await off_loop(read)


# A registry may be on the open internet (a mirror of `direct`), unlike the cluster.
OPEN_READ = READ_ONLY.model_copy(update={"openWorldHint": True})


def register_registries(mcp: FastMCP, registries: Registries) -> None:
    """`image_tags`: what an image's registry holds, through the mirrors the settings name."""

    def tags(image: str, limit: int, context: str | None) -> Json:
        if not 1 <= limit <= MAX_TAGS:
            raise InvalidArgument(f"limit must be between 1 and {MAX_TAGS}")
        listed = registries.tags(image, limit=limit, context=context)
        if not listed.found:
            raise NotFound(
                f"the registry has no repository {listed.repository} (asked {listed.source}); "
                "check the image's name"
            )
        answer: Json = {
            "repository": listed.repository,
            "tags": list(listed.tags),
            "source": listed.source,
        }
        if not listed.complete:
            answer["note"] = f"the first {limit} tags; more exist: ask with a larger limit"
        return answer

    @mcp.tool(annotations=OPEN_READ)
    async def image_tags(image: str, limit: int = 200, context: str | None = None) -> Json:
        """The tags an image's repository really has, from its registry (OCI distribution API,
        through the configured mirrors): `nginx` or `ghcr.io/org/app:1.2` (the tag is ignored).
        Answers {repository, tags, source}; an error when no registry is configured for it."""
        return await off_loop(tags, image, limit, context)
