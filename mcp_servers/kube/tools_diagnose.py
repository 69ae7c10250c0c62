"""The `diagnose` and `recommend` tools of the kube server: findings and fixes, read-only.

Thin: validate the arguments, pick the scope (one object, a namespace, or the cluster), run
`diagnosis.diagnose` and (for `recommend`) its playbooks, and return bounded JSON. Neither tool
changes anything; fixes are proposals the write tools (or a person) apply, and each names the
write-tool calls (`steps`) that apply it. With `registries`, the image playbook may ask them
which tags exist. `partial` lists what could not be read (with the HTTP status), so a diagnosis
under a failing API server says what it did not see.
"""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp import FastMCP

from core.connection import Clusters
from core.errors import InvalidArgument, PermissionDenied
from mcp_servers.common import arguments
from mcp_servers.common.bounds import page
from mcp_servers.common.tools import READ_ONLY, off_loop
from mcp_servers.kube.diagnosis import Diagnosis, diagnose
from mcp_servers.kube.diagnosis.findings import ObjectRef, as_dict
from mcp_servers.kube.diagnosis.recommend import recommend
from mcp_servers.kube.registries import Registries
from mcp_servers.kube.settings import KubeSettings

_KINDS = {
    "pod": "Pod",
    "pods": "Pod",
    "po": "Pod",
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "daemonset": "DaemonSet",
    "daemonsets": "DaemonSet",
    "ds": "DaemonSet",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "job": "Job",
    "jobs": "Job",
    "cronjob": "CronJob",
    "cronjobs": "CronJob",
    "cj": "CronJob",
    "service": "Service",
    "services": "Service",
    "svc": "Service",
    "ingress": "Ingress",
    "ingresses": "Ingress",
    "ing": "Ingress",
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "pvc": "PersistentVolumeClaim",
    "node": "Node",
    "nodes": "Node",
    "no": "Node",
    "horizontalpodautoscaler": "HorizontalPodAutoscaler",
    "horizontalpodautoscalers": "HorizontalPodAutoscaler",
    "hpa": "HorizontalPodAutoscaler",
    "poddisruptionbudget": "PodDisruptionBudget",
    "poddisruptionbudgets": "PodDisruptionBudget",
    "pdb": "PodDisruptionBudget",
    "networkpolicy": "NetworkPolicy",
    "networkpolicies": "NetworkPolicy",
    "netpol": "NetworkPolicy",
}
_SEVERITIES = ("critical", "high", "medium", "low")


def register(
    mcp: FastMCP, clusters: Clusters, settings: KubeSettings, registries: Registries | None = None
) -> None:
    def run(
        kind: str | None, name: str | None, namespace: str | None, context: str | None
    ) -> Diagnosis:
        target = None
        if kind or name:
            if not (kind and name):
                raise InvalidArgument("give both kind and name to diagnose one object, or neither")
            canonical = _KINDS.get(arguments.kind(kind).lower())
            if canonical is None:
                raise InvalidArgument(
                    f"kind {kind!r} has no analyzer; use one of {sorted(set(_KINDS.values()))}"
                )
            if canonical != "Node" and not namespace:
                raise InvalidArgument(f"{canonical} is namespaced: give its namespace too")
            target = ObjectRef(
                canonical, arguments.name(name), "" if canonical == "Node" else namespace or ""
            )
        if namespace:
            settings.check_namespace(arguments.namespace(namespace))
        scope = None if target is not None and target.kind == "Node" else namespace
        if scope is None and settings.namespaces is not None and target is None:
            raise PermissionDenied(
                "this server may only look at the namespaces "
                f"{', '.join(settings.namespaces)}: diagnose one of them, not the whole cluster"
            )
        api = clusters.api(context, stale_ok=True)  # a diagnosis may be a moment old
        return diagnose(api, namespace=scope, target=target, registry=registries)

    @mcp.tool(name="diagnose", annotations=READ_ONLY)
    async def diagnose_tool(
        namespace: str | None = None,
        kind: str | None = None,
        name: str | None = None,
        min_severity: str = "low",
        limit: int = 20,
        offset: int = 0,
        context: str | None = None,
    ) -> dict[str, Any]:
        """Find what is wrong, with evidence and confidence, highest severity first. Scope: one
        object (kind + name + namespace), a namespace, or the whole cluster (no namespace).
        `partial` names the reads that failed (resource and HTTP status): findings that need
        them are left out, never guessed."""
        if min_severity not in _SEVERITIES:
            raise InvalidArgument(f"min_severity must be one of {', '.join(_SEVERITIES)}")
        result = await off_loop(run, kind, name, namespace, context)
        cut = _SEVERITIES.index(min_severity)
        kept = [f for f in result.findings if _SEVERITIES.index(f.severity) <= cut]
        chosen = page(kept, limit=limit, offset=offset, what="findings")
        return {
            "scope": _scope(kind, name, namespace),
            "findings": [as_dict(f) for f in chosen.items],
            "total": chosen.total,
            "note": chosen.note,
            "partial": result.snapshot.notes,
        }

    @mcp.tool(name="recommend", annotations=READ_ONLY)
    async def recommend_tool(
        namespace: str | None = None,
        kind: str | None = None,
        name: str | None = None,
        limit: int = 10,
        offset: int = 0,
        context: str | None = None,
    ) -> dict[str, Any]:
        """Ranked concrete fixes (a patch to a named object, a manifest to create, a rollback or
        a cordon and drain) for what `diagnose` finds in the same scope, each with expected
        effect, risk, evidence and `steps`: the write-tool calls (tool and arguments) that
        apply it, in order. Nothing is applied."""
        result = await off_loop(run, kind, name, namespace, context)
        fixes = recommend(result.findings, result.snapshot)
        chosen = page(fixes, limit=limit, offset=offset, what="fixes")
        return {
            "scope": _scope(kind, name, namespace),
            "fixes": [as_dict(f) for f in chosen.items],
            "total": chosen.total,
            "note": chosen.note,
            "findings_without_fix": sorted(
                {f.code for f in result.findings} - {f.finding for f in fixes}
            ),
            "partial": result.snapshot.notes,
        }


def _scope(kind: str | None, name: str | None, namespace: str | None) -> str:
    if kind and name:
        return f"{kind} {name}" + (f" in {namespace}" if namespace else "")
    return f"namespace {namespace}" if namespace else "cluster"
