"""Egress propagation: every org EgressPolicy rendered into every namespace it covers, delivered
where it is not in force, and confirmed from live state (the `propagate-egress` skill as calls).

Per covered namespace: render; look at the live object; when it is missing or differs (or, in a
git-managed namespace, git says otherwise), deliver it (`delivery`: the owners' notice, then a
PR or a gated apply); then look at the live object again. Only that second look decides
`compliant`, so a PR that did not merge, a sync that did not land or an apply the gate refused
leaves the namespace non-compliant with the reason. A namespace already in force is left
alone: no proposal, no PR, nothing for the owners to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict

from agents.platform import coverage, delivery, enforcement, rendering
from agents.platform.coverage import Covered
from agents.platform.delivery import Delivery
from agents.runtime.toolbox import Toolbox

Channel = Literal["git", "direct"]


class NamespaceResult(TypedDict):
    namespace: str
    policy: str
    networkpolicy: str  # namespace/name
    channel: Channel
    repo: str  # the managing repository's id, "" when not git-managed
    before: enforcement.State  # the live object when the run began
    delivered: str  # merged, applied, pr-open, refused, no-repo, or "nothing to do"
    proposal: str  # the notice to the owners (a proposal id), "" when none was needed
    pr: int
    compliant: bool  # the live object matches the rendering, looked at after delivery
    why: list[str]  # why not compliant: the live differences, and why delivery fell short
    steps: list[str]


class Propagation(TypedDict):
    policies: list[str]
    namespaces: list[NamespaceResult]
    uncovered: list[str]  # namespaces no EgressPolicy covers (left untouched)
    unrendered: list[str]  # what no NetworkPolicy can say (DNS names), per policy


async def propagate(
    toolbox: Toolbox, repos: Mapping[str, Toolbox], *, deliver: bool = True
) -> Propagation:
    """Every covered namespace confirmed; with deliver=False only looked at (a question)."""
    policies = await coverage.egress_policies(toolbox)
    found = await coverage.namespaces(toolbox)
    pairs = coverage.covered(policies, found)
    results = [await one(toolbox, repos, pair, deliver=deliver) for pair in pairs]
    reached = {p.namespace.name for p in pairs}
    return Propagation(
        policies=[p.metadata.name for p in policies],
        namespaces=results,
        uncovered=[n.name for n in found if n.name not in reached],
        unrendered=[
            f"{p.metadata.name}: {line}" for p in policies for line in rendering.unrendered(p)
        ],
    )


async def one(
    toolbox: Toolbox, repos: Mapping[str, Toolbox], pair: Covered, *, deliver: bool = True
) -> NamespaceResult:
    policy, namespace = pair.policy, pair.namespace
    want = rendering.render(policy, namespace.name)
    before = await enforcement.look(toolbox, want)
    repo = repos.get(namespace.repo) if namespace.repo else None
    git_says = await _git_agrees(repo, want, policy.metadata.name) if repo else True
    result = NamespaceResult(
        namespace=namespace.name, policy=policy.metadata.name,
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
    rationale = _rationale(pair, before)
    if namespace.repo and repo is None:
        done = Delivery(
            "no-repo", why=f"git-managed by repository {namespace.repo}, which the Platform is "
            "not given: add it to the Platform's repositories",
        )  # fmt: skip
    elif repo is not None:
        done = await delivery.by_pull_request(
            toolbox, repo, want, policy=policy.metadata.name, rationale=rationale
        )
    else:
        done = await delivery.directly(toolbox, want, rationale=rationale)
    after = await enforcement.look(toolbox, want)
    why = list(after.why) + ([done.why] if done.why else [])
    return {
        **result, "delivered": done.status, "proposal": done.proposal, "pr": done.pr,
        "compliant": after.state == "matches", "why": why if after.state != "matches" else [],
        "steps": result["steps"] + done.steps + [f"live NetworkPolicy now {after.state}"],
    }  # fmt: skip


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
