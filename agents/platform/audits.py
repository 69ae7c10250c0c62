"""Audits of the fleet or of one namespace: findings with evidence, fix PRs where a manifest fixes.

The audit reads live state only through the kube tools (workloads, pods, PodDisruptionBudgets,
bindings and roles) and the org's ImagePolicy documents through the policy server, then judges
with `workloads` and `rbac`. Controller-owned pods are judged through their controller (one
finding per Deployment, not one per replica); bare pods are judged themselves.

The one fix it makes is a missing PodDisruptionBudget of a git-managed workload (labelled
`kubecrew.io/gitops-repo` by the sync): a new manifest next to the workload's, delivered as
egress is (`delivery.pull_request`: the owners' notice, a PR merged on an approved decision, a
sync). Then the audit looks again from live state, so `remaining` says what the cluster has,
not what the PR promised. Everything else is reported: its fix needs values (limits, probes,
digests, who should hold which role) that are the owners' to choose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

import yaml

from agents.platform import coverage, delivery, rbac
from agents.platform.coverage import REPO_LABEL, SYSTEM
from agents.platform.rendering import MANAGED_LABEL, MANAGER
from agents.platform.workloads import Finding, Json, needs_pdb, pod_spec, ranked
from agents.runtime.errors import AgentError, ToolFailed
from agents.runtime.loop.mutation import Refused
from agents.runtime.toolbox import Toolbox
from mcp_servers.policy.documents.images import ImagePolicy

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Pod")
FIELDS = ["metadata.labels", "metadata.ownerReferences", "spec"]


class Fixed(TypedDict):
    object: str
    check: str
    delivered: str  # merged, pr-open, refused, no-repo, not git-managed
    proposal: str
    pr: int
    path: str
    why: str
    steps: list[str]


class Audit(TypedDict):
    scope: str  # "fleet", or the namespace audited
    namespaces: list[str]
    findings: list[Finding]  # as found when the run began, most severe first
    fixes: list[Fixed]
    remaining: list[Finding]  # looked at again from live state after the fixes
    notes: list[str]


async def audit(
    toolbox: Toolbox,
    repos: Mapping[str, Toolbox],
    *,
    namespace: str | None = None,
    fix: bool = True,
) -> Audit:
    images = await coverage.documents(toolbox, ImagePolicy)
    known = {n.name: n for n in await coverage.namespaces(toolbox)}
    if namespace is not None and namespace not in known:
        raise AgentError(
            f"there is no team namespace {namespace!r} to audit (system namespaces are not "
            f"audited); the namespaces are: {', '.join(sorted(known)) or 'none'}"
        )
    scope = [namespace] if namespace else sorted(known)
    labels = {name: known[name].labels for name in scope}
    found, workloads = await look(toolbox, labels, images)
    fixes: list[Fixed] = []
    if fix:
        for item in found:
            if item["fix"] == "pr" and item["check"] == "no-pdb":
                fixes.append(await add_pdb(toolbox, repos, workloads[item["object"]]))
    changed = any(f["delivered"] == "merged" for f in fixes)
    remaining = (await look(toolbox, labels, images))[0] if changed else found
    notes = [] if images else ["no ImagePolicy: image registries were not checked"]
    return Audit(scope=namespace or "fleet", namespaces=scope, findings=found, fixes=fixes,
                 remaining=remaining, notes=notes)  # fmt: skip


async def look(
    toolbox: Toolbox, labels: Mapping[str, dict[str, str]], images: list[ImagePolicy]
) -> tuple[list[Finding], dict[str, tuple[str, Json]]]:
    """Every finding in the namespaces of `labels` (name -> the namespace's labels), and the
    workloads by their finding name ("Deployment ns/name") for the fixes."""
    only = next(iter(labels)) if len(labels) == 1 else None
    rows: dict[str, list[Json]] = {}
    for kind in (*KINDS, "PodDisruptionBudget"):
        fields = ["spec.selector"] if kind == "PodDisruptionBudget" else FIELDS
        rows[kind] = [
            r for r in await _list(toolbox, kind, fields, only) if r["namespace"] in labels
        ]
    found = await rbac.findings(toolbox, only)
    workloads: dict[str, tuple[str, Json]] = {}
    for kind in KINDS:
        for row in rows[kind]:
            if kind == "Pod" and row.get("metadata.ownerReferences"):
                continue  # judged through its controller
            ref = f"{kind} {row['namespace']}/{row['name']}"
            workloads[ref] = (kind, row)
            spec: Json = row.get("spec") or {}
            ns_labels = labels[row["namespace"]]
            chosen = [p.spec for p in images if p.spec.selects(row["namespace"], ns_labels)]
            base = "spec" if kind == "Pod" else "spec.template.spec"
            pod = spec if kind == "Pod" else (spec.get("template") or {}).get("spec") or {}
            found += pod_spec(ref, pod, base, images=chosen)
            pdbs = [p for p in rows["PodDisruptionBudget"] if p["namespace"] == row["namespace"]]
            if (missing := needs_pdb(ref, kind, spec, pdbs)) is not None:
                found.append(missing)
    return ranked(found), workloads


def pdb_for(kind: str, row: Json) -> dict[str, Any]:
    """One pod of the workload down at a time, selected as the workload selects its pods."""
    spec = row.get("spec") or {}
    template = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    selector = spec.get("selector") or {"matchLabels": template}
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {
            "name": row["name"],
            "namespace": row["namespace"],
            "labels": {MANAGED_LABEL: MANAGER},
        },
        "spec": {"maxUnavailable": 1, "selector": selector},
    }


async def add_pdb(
    toolbox: Toolbox, repos: Mapping[str, Toolbox], workload: tuple[str, Json]
) -> Fixed:
    kind, row = workload
    ref = f"{kind} {row['namespace']}/{row['name']}"
    path = f"platform/audits/{row['namespace']}/pdb-{row['name']}.yaml"
    done = Fixed(object=ref, check="no-pdb", delivered="not git-managed", proposal="", pr=0,
                 path=path, why="", steps=[])  # fmt: skip
    repo_id = (row.get("metadata.labels") or {}).get(REPO_LABEL, "")
    repo = repos.get(repo_id)
    if not repo_id or repo is None:
        done["why"] = (
            f"{ref} is not managed by a GitOps repository the Platform is given"
            + (f" ({repo_id})" if repo_id else "")
            + ": add a PodDisruptionBudget with its manifests"
        )
        done["delivered"] = "no-repo" if repo_id else "not git-managed"
        return done
    want = pdb_for(kind, row)
    replicas = (row.get("spec") or {}).get("replicas")
    change = delivery.Change(
        path=path,
        text=(
            f"# Added by the kubecrew Platform agent's audit: {ref} runs {replicas} replicas.\n"
            "# At most one of its pods is disrupted at a time (drains, upgrades).\n"
            + yaml.safe_dump(want, sort_keys=False)
        ),
        title=f"PodDisruptionBudget for {ref}",
        target=f"poddisruptionbudget/{row['name']}",
        namespace=row["namespace"],
        rationale=(
            f"Audit: {ref} runs {replicas} replicas and no PodDisruptionBudget covers it, so a "
            "node drain or upgrade may evict them all at once. The Platform adds one that lets "
            "one pod go at a time (maxUnavailable: 1)."
        ),
        branch="platform/audit-pdb",
        live_object=want,
    )
    try:
        sent = await delivery.pull_request(toolbox, repo, change)
    except (Refused, ToolFailed) as exc:
        return {**done, "delivered": "refused", "why": str(exc)}
    return {**done, "delivered": sent.status, "proposal": sent.proposal, "pr": sent.pr,
            "why": sent.why, "steps": sent.steps}  # fmt: skip


async def _list(
    toolbox: Toolbox, kind: str, fields: list[str], namespace: str | None
) -> list[Json]:
    where = {"namespace": namespace} if namespace else {}
    listed = await toolbox.call(
        "list_resources", kind=kind, output="fields", fields=fields, limit=500, **where
    )
    return [r for r in listed.get("items", []) if r.get("namespace") not in SYSTEM]
