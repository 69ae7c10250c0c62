"""Egress propagation: every org EgressPolicy rendered into every namespace it covers, delivered
where it is not in force, and confirmed from live state (the `propagate-egress` skill as calls).

Per covered namespace: render; look at the live object; when it is missing or differs (or, in a
git-managed namespace, git says otherwise), deliver it (`delivery`: the owners' notice, then a
PR or a gated apply); then look at the live object again. Only that second look decides
`compliant`, so a PR that did not merge, a sync that did not land or an apply the gate refused
leaves the namespace non-compliant with the reason. A namespace already in force is left
alone: no proposal, no PR, nothing for the owners to read.

Several clusters (`clusters`, kubeconfig contexts of the one kube server; `fleet`): each
cluster's namespaces are found, rendered and confirmed from that cluster's live state, so each
(cluster, namespace) pair is its own row, "east/team-a". A namespace is delivered to only by a
PR to a repository whose gitops server syncs to its cluster (`homes`); any other is reported,
never written: a cluster no given repository syncs to is "report only, no repository", and a
namespace no repository manages is "not git-managed" (the gated apply serves the one cluster
only). With no `clusters`, the default context is the one cluster, as it always was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from agents.platform import coverage, delivery, enforcement, rendering
from agents.platform.coverage import Covered
from agents.platform.delivery import Delivery
from agents.platform.fleet import Fleet, Unreached, named
from agents.runtime.toolbox import Toolbox

Channel = Literal["git", "direct"]


class NamespaceResult(TypedDict):
    cluster: str  # the kubeconfig context read; "" for the kube server's default
    namespace: str
    policy: str
    networkpolicy: str  # namespace/name
    channel: Channel
    repo: str  # the managing repository's id, "" when not git-managed
    before: enforcement.State  # the live object when the run began
    delivered: str  # merged, applied, pr-open, refused, no-repo, report-only, not git-managed
    # (in a fleet), or "nothing to do"
    proposal: str  # the notice to the owners (a proposal id), "" when none was needed
    pr: int
    compliant: bool  # the live object matches the rendering, looked at after delivery
    why: list[str]  # why not compliant: the live differences, and why delivery fell short
    steps: list[str]


class Propagation(TypedDict):
    policies: list[str]
    clusters: list[str]  # the contexts read; [""] for the kube server's default alone
    namespaces: list[NamespaceResult]
    uncovered: list[str]  # namespaces no EgressPolicy covers (left untouched), "east/scratch"
    # in a fleet
    unrendered: list[str]  # what no NetworkPolicy can say (DNS names), per policy


async def propagate(
    toolbox: Toolbox,
    repos: Mapping[str, Toolbox],
    *,
    deliver: bool = True,
    clusters: Sequence[str] = (),
    homes: Mapping[str, str] | None = None,
) -> Propagation:
    """Every covered namespace of every cluster confirmed; with deliver=False only looked at
    (a question). `homes` maps a repository id to the context its gitops server syncs to."""
    policies = await coverage.egress_policies(toolbox)
    fleet = Fleet(repos, tuple(clusters), homes or {})
    results: list[NamespaceResult] = []
    uncovered: list[str] = []
    for cluster in fleet.contexts:
        found = await coverage.namespaces(toolbox, cluster)
        pairs = coverage.covered(policies, found)
        results += [await one(toolbox, fleet, pair, deliver=deliver, cluster=cluster)
                    for pair in pairs]  # fmt: skip
        reached = {p.namespace.name for p in pairs}
        uncovered += [named(cluster, n.name) for n in found if n.name not in reached]
    return Propagation(
        policies=[p.metadata.name for p in policies],
        clusters=fleet.contexts,
        namespaces=results,
        uncovered=uncovered,
        unrendered=[
            f"{p.metadata.name}: {line}" for p in policies for line in rendering.unrendered(p)
        ],
    )


async def one(
    toolbox: Toolbox, fleet: Fleet, pair: Covered, *, deliver: bool = True, cluster: str = ""
) -> NamespaceResult:
    """One namespace of one cluster: looked at, delivered to where it may be, looked at again."""
    policy, namespace = pair.policy, pair.namespace
    want = rendering.render(policy, namespace.name)
    before = await enforcement.look(toolbox, want, cluster=cluster)
    reach = fleet.reach(namespace.repo, cluster)
    repo = None if isinstance(reach, Unreached) else reach
    git_says = await _git_agrees(repo, want, policy.metadata.name) if repo else True
    result = NamespaceResult(
        cluster=cluster, namespace=namespace.name, policy=policy.metadata.name,
        networkpolicy=f"{namespace.name}/{want['metadata']['name']}",
        channel="git" if namespace.repo else "direct", repo=namespace.repo, before=before.state,
        delivered="nothing to do", proposal="", pr=0, compliant=False, why=[], steps=[],
    )  # fmt: skip
    if before.state == "matches" and git_says:
        result["steps"].append("live NetworkPolicy matches the rendering: nothing to do")
        return {**result, "compliant": True}
    result["steps"].append(f"live NetworkPolicy {before.state}: " + "; ".join(before.why))
    if not deliver:
        why = before.why or [f"{delivery.manifest_path(want)} in git differs from the rendering"]
        return {**result, "why": why}
    done = await _deliver(toolbox, reach, want, pair, before, cluster=cluster)
    after = await enforcement.look(toolbox, want, cluster=cluster)
    why = list(after.why) + ([done.why] if done.why else [])
    return {
        **result, "delivered": done.status, "proposal": done.proposal, "pr": done.pr,
        "compliant": after.state == "matches", "why": why if after.state != "matches" else [],
        "steps": result["steps"] + done.steps + [f"live NetworkPolicy now {after.state}"],
    }  # fmt: skip


async def _deliver(
    toolbox: Toolbox,
    reach: Toolbox | Unreached,
    want: dict[str, Any],
    pair: Covered,
    before: enforcement.Live,
    *,
    cluster: str,
) -> Delivery:
    """By PR through the repository that reaches the namespace; where none manages it, by the
    gated apply in the one cluster and not at all in a fleet's; else not at all, saying why."""
    rationale = _rationale(pair, before)
    if not isinstance(reach, Unreached):
        return await delivery.by_pull_request(
            toolbox, reach, want, policy=pair.policy.metadata.name, rationale=rationale,
            cluster=cluster,
        )  # fmt: skip
    if reach.status != "not git-managed":
        return Delivery(reach.status, why=reach.why)
    if not cluster:
        return await delivery.directly(toolbox, want, rationale=rationale)
    return Delivery(reach.status, why=(
        f"{reach.why} in cluster {cluster}: across clusters the Platform delivers only by a PR "
        "to a repository that syncs to the cluster, never by a direct write"
    ))  # fmt: skip


async def _git_agrees(repo: Toolbox, want: dict[str, object], policy: str) -> bool:
    text = await delivery.read(repo, delivery.manifest_path(want))
    return text == delivery.manifest_text(want, policy)


def _rationale(pair: Covered, before: enforcement.Live) -> str:
    policy, ns = pair.policy, pair.namespace.name
    allowed = "; ".join(f"{d.name}: {d.describe()}" for d in policy.spec.destinations)
    found = "is missing" if before.state == "missing" else "differs: " + "; ".join(before.why[:5])
    return (
        f"Org EgressPolicy {policy.metadata.name} covers namespace {ns}: its pods may reach only "
        f"{allowed}. The NetworkPolicy {rendering.object_name(policy)} enforcing it {found}. "
        "The Platform delivers it now; workloads needing other destinations must ask the "
        "Platform team to change the EgressPolicy."
    )
