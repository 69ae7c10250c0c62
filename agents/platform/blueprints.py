"""Namespace blueprints kept in sync: render, compare with live field by field, fix by PR, confirm.

Per NamespaceBlueprint and covered namespace (by name or class, as for egress): render the
objects (`blueprint_rendering`) for the namespace's owning team (its `kubecrew.io/team` label,
else the most specific Ownership of the namespace); read each live object; report every field
that departs. With `fix`, a git-managed namespace gets one PR per namespace writing
`platform/blueprints/<namespace>.yaml` (every object, one file), merged on an approved decision
of the policy store and synced (`delivery.pull_request`; the notice is about the Namespace,
which the Platform owns). Then the live objects are read again: only that decides `in_sync`.

Not fixed here, reported: missing required labels (they live in the Namespace's own manifest,
which its owners write), a namespace with no owner to bind, and namespaces no repository
manages (the blueprint's fix is a PR).

Several clusters (`clusters`, kubeconfig contexts of the one kube server, as the Cluster
Operator's fleet; `fleet`): every read names its cluster, so each (cluster, namespace) pair is
its own row, with its own drift and its own confirmation from that cluster's live state. A
repository fixes only the cluster its gitops server syncs to (`homes`: repository id ->
context); a cluster that no configured repository syncs to is reported, "report only, no
repository". With no `clusters`, the kube server's default context is read and every
repository serves it, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

import yaml

from agents.platform import coverage, delivery
from agents.platform.blueprint_rendering import COMPARED, Team, missing_labels, render
from agents.platform.coverage import Namespace
from agents.platform.fleet import DEFAULT, Fleet, Unreached, at, named
from agents.platform.rendering import differences
from agents.runtime.errors import AgentError, ToolFailed
from agents.runtime.loop.mutation import Refused
from agents.runtime.toolbox import Toolbox
from core.policy.documents.blueprint import NamespaceBlueprint
from core.policy.documents.priority import Ownership

TEAM_LABEL = "kubecrew.io/team"
Channel = Literal["git", "direct"]


class NamespaceSync(TypedDict):
    cluster: str  # the kubeconfig context read; "" for the kube server's default
    namespace: str
    blueprint: str
    team: str  # the owning team, "" when none is known
    channel: Channel
    repo: str
    drift: list[str]  # field by field, as found when the run began
    delivered: str  # merged, pr-open, refused, no-repo, not git-managed, report-only, reported,
    # nothing to do
    proposal: str
    pr: int
    in_sync: bool  # from live state, looked at after delivery
    why: list[str]  # still out of sync: what differs live, and why the fix fell short
    steps: list[str]


class BlueprintSync(TypedDict):
    blueprints: list[str]
    clusters: list[str]  # the contexts read; [""] for the kube server's default alone
    namespaces: list[NamespaceSync]
    uncovered: list[str]  # "cluster/namespace" in a fleet, the bare name otherwise


async def sync(
    toolbox: Toolbox,
    repos: Mapping[str, Toolbox],
    *,
    namespace: str | None = None,
    fix: bool = True,
    clusters: Sequence[str] = (),
    homes: Mapping[str, str] | None = None,
) -> BlueprintSync:
    """Every covered namespace of every cluster; `homes` maps a repository id to the cluster
    its gitops server syncs to (unlisted: the default context, "")."""
    blueprints = await coverage.documents(toolbox, NamespaceBlueprint)
    owners = await coverage.documents(toolbox, Ownership)
    fleet = Fleet(repos, tuple(clusters), homes or {})
    found = {cluster: await coverage.namespaces(toolbox, cluster) for cluster in fleet.contexts}
    if namespace is not None:
        found = {c: [n for n in names if n.name == namespace] for c, names in found.items()}
        if not any(found.values()):
            raise AgentError(
                f"there is no namespace {namespace!r}: give one `kubectl get ns` lists"
            )
    results: list[NamespaceSync] = []
    uncovered: list[str] = []
    for cluster in fleet.contexts:
        rows: list[NamespaceSync] = []
        for blueprint in blueprints:
            for ns in found[cluster]:
                if blueprint.spec.selects(ns.name, ns.labels):
                    team = owning_team(ns, owners)
                    rows.append(
                        await one(toolbox, fleet, blueprint, ns, team, fix=fix, cluster=cluster)
                    )
        reached = {r["namespace"] for r in rows}
        uncovered += [named(cluster, n.name) for n in found[cluster] if n.name not in reached]
        results += rows
    return BlueprintSync(
        blueprints=[b.metadata.name for b in blueprints],
        clusters=fleet.contexts,
        namespaces=results,
        uncovered=uncovered,
    )


def owning_team(namespace: Namespace, owners: list[Ownership]) -> Team | None:
    """The team its `kubecrew.io/team` label names, else its most specific Ownership's."""
    labelled = namespace.labels.get(TEAM_LABEL)
    if labelled:
        chosen = [o for o in owners if o.spec.team == labelled]
    else:
        scored = [
            (o.spec.specificity(kind="RoleBinding", namespace=namespace.name, labels={}), o)
            for o in owners
        ]
        best = max((score for score, _ in scored), default=-1)
        chosen = [o for score, o in scored if score == best >= 0]
    if not chosen:
        return Team(labelled) if labelled else None
    spec = chosen[0].spec
    people = spec.humans
    return Team(
        spec.team, tuple(people.groups) if people else (), tuple(people.users) if people else ()
    )


async def one(
    toolbox: Toolbox,
    fleet: Fleet,
    blueprint: NamespaceBlueprint,
    ns: Namespace,
    team: Team | None,
    *,
    fix: bool,
    cluster: str = DEFAULT,
) -> NamespaceSync:
    """One namespace of one cluster, fixed only through a repository that syncs to it."""
    want = render(blueprint, ns.name, team)
    path = f"platform/blueprints/{ns.name}.yaml"
    text = manifest_text(want, blueprint.metadata.name)
    reach = fleet.reach(ns.repo, cluster)
    repo = None if isinstance(reach, Unreached) else reach
    unfixable = _unfixable(blueprint, ns, team)
    drift = await live_drift(toolbox, want, context=cluster)
    git_agrees = repo is None or await delivery.read(repo, path) == text
    result = NamespaceSync(
        cluster=cluster, namespace=ns.name, blueprint=blueprint.metadata.name,
        team=team.name if team else "",
        channel="git" if ns.repo else "direct", repo=ns.repo, drift=drift + unfixable,
        delivered="nothing to do", proposal="", pr=0, in_sync=False, why=[], steps=[],
    )  # fmt: skip
    if not drift and git_agrees:
        result["steps"].append("every blueprint object matches live")
        return {**result, "in_sync": not unfixable, "why": unfixable}
    if not fix:
        shown = drift or [f"{path} in git differs from the blueprint"]
        return {**result, "delivered": "reported", "why": shown + unfixable}
    if isinstance(reach, Unreached):
        why = reach.why
        if reach.status == "not git-managed":
            why += ": a blueprint is fixed by PR only"
        return {**result, "delivered": reach.status, "why": [*drift, why, *unfixable]}
    change = delivery.Change(
        path=path, text=text, title=f"Blueprint {blueprint.metadata.name} for namespace {ns.name}",
        target=f"namespace/{ns.name}", namespace=ns.name, branch="platform/blueprint",
        rationale=(
            f"NamespaceBlueprint {blueprint.metadata.name} covers namespace {ns.name} (team "
            f"{team.name if team else 'unknown'}). Live departs from it: " + "; ".join(drift[:6])
            + ". The Platform puts the blueprint's objects back; ask the Platform team to "
            "change the blueprint if the namespace needs other values."
        ),
        cluster=cluster,
    )  # fmt: skip
    try:
        sent = await delivery.pull_request(toolbox, reach, change)
    except (Refused, ToolFailed) as exc:
        sent = delivery.Delivery("refused", why=str(exc))
    after = await live_drift(toolbox, want, context=cluster)
    still = after + ([sent.why] if sent.why and after else []) + unfixable
    return {
        **result, "delivered": sent.status, "proposal": sent.proposal, "pr": sent.pr,
        "in_sync": not after and not unfixable, "why": still,
        "steps": [*sent.steps, f"live now: {len(after)} field(s) differ"],
    }  # fmt: skip


def manifest_text(want: list[dict[str, Any]], blueprint: str) -> str:
    head = (
        f"# Rendered by the kubecrew Platform agent from NamespaceBlueprint {blueprint}.\n"
        "# Change the blueprint, not this file: the Platform puts it back.\n"
    )
    return head + yaml.safe_dump_all(want, sort_keys=False)


async def live_drift(
    toolbox: Toolbox, want: list[dict[str, Any]], *, context: str = ""
) -> list[str]:
    """Field-by-field departures of the live objects in cluster `context` (""; the default)
    from `want`, "Kind ns/name: ..." each."""
    drift: list[str] = []
    for obj in want:
        kind, meta = obj["kind"], obj["metadata"]
        ref = f"{kind} {meta['namespace']}/{meta['name']}"
        fields = COMPARED[kind]
        try:
            live = await toolbox.call(
                "get_resource", kind=kind, name=meta["name"], namespace=meta["namespace"],
                output="fields", fields=fields, **at(context),
            )  # fmt: skip
        except ToolFailed as exc:
            if "not found" not in exc.reason.lower():
                raise
            drift.append(f"{ref}: missing")
            continue
        for field in fields:
            drift += [f"{ref}: {d}" for d in differences(obj.get(field), live.get(field), field)]
    return drift


def _unfixable(blueprint: NamespaceBlueprint, ns: Namespace, team: Team | None) -> list[str]:
    why = [
        f"Namespace {ns.name}: metadata.labels.{key}: missing (add it in the Namespace's manifest)"
        for key in missing_labels(blueprint, ns.labels)
    ]
    if blueprint.spec.teamAccess is not None and (team is None or not (team.groups or team.users)):
        why.append(
            f"Namespace {ns.name}: no Ownership names its team's people, so the team RoleBinding "
            "is not rendered: add an Ownership for the namespace"
        )
    return why
