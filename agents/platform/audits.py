"""Audits of the fleet or of one namespace: findings with evidence, fix PRs where a manifest fixes.

The audit reads live state only through the kube tools (workloads, pods, PodDisruptionBudgets,
bindings and roles) and the org's ImagePolicy documents through the policy server, then judges
with `workloads` and `rbac`. Controller-owned pods are judged through their controller (one
finding per Deployment, not one per replica); bare pods are judged themselves.

Two fixes are made, to git-managed workloads (labelled `kubecrew.io/gitops-repo` by the sync),
delivered as egress is (`delivery.pull_request`: the owners' notice, a PR merged on an approved
decision, a sync):
- a missing PodDisruptionBudget: a new manifest next to the workload's;
- containers without requests or limits, in a namespace whose NamespaceBlueprint has a
  LimitRange: the workload's own manifest gets the LimitRange's defaults (`workloads.filled`
  says which and why), field by field, its comments kept. Where no blueprint sets defaults,
  the values are the owners' to choose, and the finding is reported.
Then the audit looks again from live state, so `remaining` says what the cluster has, not what
the PR promised. Everything else is reported: its fix needs values (probes, digests, who should
hold which role) that are the owners' to choose.

Several clusters (`clusters`, kubeconfig contexts of the one kube server; `fleet`): each cluster
is audited alone, read with its context, and every finding and fix carries its `cluster`
("west/ClusterRoleBinding ops" in the report). A fix goes only by a PR to a repository whose
gitops server syncs to the workload's cluster (`homes`); any other is "report only, no
repository", and that cluster's remaining findings are read from its own live state. With no
`clusters`, the default context is audited and nothing says a cluster, as before fleets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import yaml

from agents.platform import coverage, delivery, rbac
from agents.platform.coverage import REPO_LABEL, Namespace
from agents.platform.fleet import DEFAULT, Fleet, Unreached, listed, named
from agents.platform.rendering import MANAGED_LABEL, MANAGER
from agents.platform.workloads import (
    RESOURCE_CHECKS,
    Finding,
    Json,
    filled,
    needs_pdb,
    pod_spec,
    ranked,
)
from agents.runtime.errors import AgentError, ToolFailed
from agents.runtime.loop.mutation import Refused
from agents.runtime.toolbox import Toolbox
from core.errors import ToolError
from core.policy.documents.blueprint import NamespaceBlueprint
from core.policy.documents.images import ImagePolicy
from mcp_servers.gitops.yamledit import Edit, edit

KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Pod")
FIELDS = ["metadata.labels", "metadata.ownerReferences", "spec"]


class Fixed(TypedDict):
    object: str
    check: str  # no-pdb, or the resource checks fixed together: "no-requests,no-limits"
    delivered: str  # merged, pr-open, refused, no-repo, not git-managed, report-only, reported
    proposal: str
    pr: int
    path: str
    why: str
    steps: list[str]
    values: list[str]  # what the fix sets and why: "web requests.memory 128Mi (the ...)"
    cluster: NotRequired[str]  # the kubeconfig context, in a fleet; absent for the one cluster


class Audit(TypedDict):
    scope: str  # "fleet", or the namespace audited
    clusters: NotRequired[list[str]]  # the contexts audited, in a fleet only
    namespaces: list[str]  # "east/team-a" in a fleet
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
    clusters: Sequence[str] = (),
    homes: Mapping[str, str] | None = None,
) -> Audit:
    """The fleet (every cluster's team namespaces) or one namespace (in each cluster that has
    it); `homes` maps a repository id to the context its gitops server syncs to."""
    images = await coverage.documents(toolbox, ImagePolicy)
    blueprints = await coverage.documents(toolbox, NamespaceBlueprint)
    fleet = Fleet(repos, tuple(clusters), homes or {})
    known = {c: {n.name: n for n in await coverage.namespaces(toolbox, c)} for c in fleet.contexts}
    if namespace is not None and not any(namespace in names for names in known.values()):
        every = sorted(named(c, name) for c, names in known.items() for name in names)
        raise AgentError(
            f"there is no team namespace {namespace!r} to audit (system namespaces are not "
            f"audited); the namespaces are: {', '.join(every) or 'none'}"
        )
    notes = [] if images else ["no ImagePolicy: image registries were not checked"]
    done = Audit(scope=namespace or "fleet", namespaces=[], findings=[], fixes=[], remaining=[],
                 notes=notes)  # fmt: skip
    for cluster, names in known.items():
        if namespace is not None and namespace not in names:
            continue
        scope = {n: names[n] for n in ([namespace] if namespace else sorted(names))}
        found, fixes, remaining = await _cluster(
            toolbox, fleet, cluster, scope, images, blueprints, fix=fix, only=namespace
        )
        done["namespaces"] += [named(cluster, n) for n in scope]
        done["findings"] += found
        done["fixes"] += fixes
        done["remaining"] += remaining
    if fleet.clusters:
        done["clusters"] = fleet.contexts
    return {**done, "findings": ranked(done["findings"]), "remaining": ranked(done["remaining"])}


async def _cluster(
    toolbox: Toolbox,
    fleet: Fleet,
    cluster: str,
    scope: Mapping[str, Namespace],
    images: list[ImagePolicy],
    blueprints: list[NamespaceBlueprint],
    *,
    fix: bool,
    only: str | None,
) -> tuple[list[Finding], list[Fixed], list[Finding]]:
    """One cluster's findings, its fixes, and its findings read again after a merged fix."""
    labels = {name: ns.labels for name, ns in scope.items()}
    found, workloads = await look(toolbox, labels, images, blueprints, only=only, cluster=cluster)
    fixes: list[Fixed] = []
    if fix:
        for item in found:
            if item["fix"] == "pr" and item["check"] == "no-pdb":
                fixes.append(await add_pdb(toolbox, fleet, workloads[item["object"]], cluster))
        unsized: dict[str, list[str]] = {}
        for item in found:
            if item["fix"] == "pr" and item["check"] in RESOURCE_CHECKS:
                unsized.setdefault(item["object"], []).append(item["check"])
        for ref, checks in sorted(unsized.items()):
            namespace = workloads[ref][1]["namespace"]
            chosen = limit_range_of(blueprints, namespace, labels[namespace])
            assert chosen is not None  # look marks a resource finding `pr` only then
            fixed = await fill_resources(
                toolbox, fleet, workloads[ref], chosen, sorted(set(checks)), cluster
            )
            fixes.append(fixed)
    if cluster:
        fixes = [{**f, "cluster": cluster} for f in fixes]
    changed = any(f["delivered"] == "merged" for f in fixes)
    if not changed:
        return found, fixes, found
    again, _ = await look(toolbox, labels, images, blueprints, only=only, cluster=cluster)
    return found, fixes, again


async def look(
    toolbox: Toolbox,
    labels: Mapping[str, dict[str, str]],
    images: list[ImagePolicy],
    blueprints: list[NamespaceBlueprint],
    *,
    only: str | None = None,
    cluster: str = DEFAULT,
) -> tuple[list[Finding], dict[str, tuple[str, Json]]]:
    """Every finding in the namespaces of `labels` (name -> the namespace's labels) of one
    cluster, and the workloads by their finding name ("Deployment ns/name") for the fixes.
    `only`, the one namespace audited, narrows the reads and the RBAC to what touches it."""
    rows: dict[str, list[Json]] = {}
    for kind in (*KINDS, "PodDisruptionBudget"):
        fields = ["spec.selector"] if kind == "PodDisruptionBudget" else FIELDS
        got = await listed(toolbox, kind, fields, namespace=only, cluster=cluster)
        rows[kind] = [r for r in got if r.get("namespace") in labels]
    found = await rbac.findings(toolbox, only, cluster=cluster)
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
            judged = pod_spec(ref, pod, base, images=chosen)
            if kind != "Pod" and limit_range_of(blueprints, row["namespace"], ns_labels):
                for item in judged:  # a bare Pod's resources cannot change: only reported
                    if item["check"] in RESOURCE_CHECKS:
                        item["fix"] = "pr"
            found += judged
            pdbs = [p for p in rows["PodDisruptionBudget"] if p["namespace"] == row["namespace"]]
            if (missing := needs_pdb(ref, kind, spec, pdbs)) is not None:
                found.append(missing)
    if cluster:
        found = [{**f, "cluster": cluster} for f in found]
    return ranked(found), workloads


def limit_range_of(
    blueprints: list[NamespaceBlueprint], namespace: str, labels: dict[str, str]
) -> NamespaceBlueprint | None:
    """The first blueprint (by name) covering the namespace with a LimitRange."""
    return next(
        (
            b
            for b in blueprints
            if b.spec.limitRange is not None and b.spec.selects(namespace, labels)
        ),
        None,
    )


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


def _repo(row: Json, fleet: Fleet, cluster: str, done: Fixed, advice: str) -> Toolbox | None:
    """The tools of the repository the workload is synced from, if it syncs to `cluster`; or
    None with `done` saying why nothing can be changed and what to do."""
    reach = fleet.reach((row.get("metadata.labels") or {}).get(REPO_LABEL, ""), cluster)
    if not isinstance(reach, Unreached):
        return reach
    done["why"] = f"{done['object']}: {reach.why}; {advice}"
    done["delivered"] = reach.status
    return None


async def add_pdb(
    toolbox: Toolbox, fleet: Fleet, workload: tuple[str, Json], cluster: str = DEFAULT
) -> Fixed:
    kind, row = workload
    ref = f"{kind} {row['namespace']}/{row['name']}"
    path = f"platform/audits/{row['namespace']}/pdb-{row['name']}.yaml"
    done = Fixed(object=ref, check="no-pdb", delivered="not git-managed", proposal="", pr=0,
                 path=path, why="", steps=[], values=[])  # fmt: skip
    repo = _repo(row, fleet, cluster, done, "add a PodDisruptionBudget with its manifests")
    if repo is None:
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
        cluster=cluster,
    )
    try:
        sent = await delivery.pull_request(toolbox, repo, change)
    except (Refused, ToolFailed) as exc:
        return {**done, "delivered": "refused", "why": str(exc)}
    return {**done, "delivered": sent.status, "proposal": sent.proposal, "pr": sent.pr,
            "why": sent.why, "steps": sent.steps}  # fmt: skip


async def fill_resources(
    toolbox: Toolbox,
    fleet: Fleet,
    workload: tuple[str, Json],
    blueprint: NamespaceBlueprint,
    checks: list[str],
    cluster: str = DEFAULT,
) -> Fixed:
    """The workload's manifest with its containers' missing requests and limits set to the
    blueprint's LimitRange defaults, by one PR. Read from git, not live: git is what the PR
    changes, and a value git already holds is the owners' and stays."""
    kind, row = workload
    ref, namespace = f"{kind} {row['namespace']}/{row['name']}", row["namespace"]
    done = Fixed(object=ref, check=",".join(checks), delivered="not git-managed", proposal="",
                 pr=0, path="", why="", steps=[], values=[])  # fmt: skip
    advice = "set its containers' requests and limits with its manifests"
    repo = _repo(row, fleet, cluster, done, advice)
    if repo is None:
        return done
    repo_id = (row.get("metadata.labels") or {}).get(REPO_LABEL, "")
    hits = await repo.call("find_manifest", kind=kind, name=row["name"], namespace=namespace)
    plain = [h for h in hits.get("found", []) if not h.get("rendered_by")]
    if not plain:
        return {**done, "delivered": "reported", "why": (
            f"no plain manifest of {repo_id} defines {ref} (a kustomization renders it, or it "
            "is not in git): set its requests and limits where it is defined"
        )}  # fmt: skip
    path = str(plain[0]["file"])
    text = await delivery.read(repo, path)
    limits = blueprint.spec.limitRange
    assert limits is not None
    edits: list[Edit] = []
    for container in _containers(text, kind, row["name"]):
        at = f"spec.template.spec.containers[name={container['name']}].resources"
        for key, (value, why) in filled(container, limits).items():
            edits.append(Edit(f"{at}.{key}", value))
            done["values"].append(f"{container['name']} {key} {value} ({why})")
    try:
        new_text = edit(text, edits, kind=kind, name=row["name"]) if edits else text
    except ToolError as exc:
        return {**done, "delivered": "reported", "path": path, "why": f"{path}: {exc.message}"}
    said = "; ".join(done["values"]) or "nothing: git sets them already"
    source = f"NamespaceBlueprint {blueprint.metadata.name}'s LimitRange"
    change = delivery.Change(
        path=path,
        text=new_text,
        title=f"Requests and limits for {ref}",
        target=f"{kind.lower()}/{row['name']}",
        namespace=namespace,
        rationale=(
            f"Audit: containers of {ref} set no requests or limits ({', '.join(checks)}). The "
            f"Platform writes {source} defaults into its manifest: {said}. They are what the "
            f"API server gives any container in {namespace} that sets none, so the pods keep "
            "what they get; now they are in git, where the owners see and tune them."
        ),
        branch="platform/audit-resources",
        live_object=_document(new_text, kind, row["name"]),
        cluster=cluster,
    )
    try:
        sent = await delivery.pull_request(toolbox, repo, change)
    except (Refused, ToolFailed) as exc:
        return {**done, "delivered": "refused", "path": path, "why": str(exc)}
    chose = f"set from {source} defaults: {said}"
    return {**done, "delivered": sent.status, "proposal": sent.proposal, "pr": sent.pr,
            "path": path, "why": sent.why, "steps": [chose, *sent.steps]}  # fmt: skip


def _document(text: str, kind: str, name: str) -> dict[str, Any] | None:
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict) or doc.get("kind") != kind:
            continue
        if (doc.get("metadata") or {}).get("name") == name:
            return doc
    return None


def _containers(text: str, kind: str, name: str) -> list[Json]:
    doc = _document(text, kind, name) or {}
    template = ((doc.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [c for c in template.get("containers") or [] if isinstance(c, dict) and c.get("name")]
