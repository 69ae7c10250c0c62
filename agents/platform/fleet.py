"""The clusters a Platform procedure reads, and which repository may change each of them.

A fleet is several kubeconfig contexts of the one kube server (every kube tool takes
`context`), as the Cluster Operator's: one agent, one identity, one policy store. Blueprints,
egress propagation and audits read each cluster with its own context (`at`, `listed`), name
what they find after its cluster ("east/team-a", `named`), and change a cluster only through a
repository whose gitops server syncs to it (`Fleet.reach`; `homes`: repository id -> context),
since a merge there is applied there and nowhere else. A cluster that no given repository syncs
to is reported only ("report only, no repository"): one repository per cluster is the
conversation's to configure, and a fleet's cluster is never written directly.

With no `clusters`, the kube server's default context ("") is the one cluster, every repository
serves it, and the tools are called without a `context`: exactly as before fleets.

Knows no Kubernetes client and no procedure: which cluster, which repository, which name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agents.runtime.toolbox import Toolbox

DEFAULT = ""  # the kube server's default context: the one cluster when there is no fleet
Json = dict[str, Any]


@dataclass(frozen=True)
class Unreached:
    """Why no given repository may change an object of a cluster, and what to do."""

    status: Literal["report-only", "no-repo", "not git-managed"]
    why: str


@dataclass(frozen=True)
class Fleet:
    """The given repositories (id -> its gitops tools), the clusters read (() for the default
    one) and the context each repository's gitops server syncs to (unlisted: the default)."""

    repos: Mapping[str, Toolbox]
    clusters: tuple[str, ...] = ()
    homes: Mapping[str, str] = field(default_factory=dict)

    @property
    def contexts(self) -> list[str]:
        return list(self.clusters) or [DEFAULT]

    def serving(self, cluster: str) -> dict[str, Toolbox]:
        """The repositories whose merges reach `cluster`: those its gitops server syncs to."""
        if not self.clusters:
            return dict(self.repos)
        home = self.homes.get
        return {repo: tools for repo, tools in self.repos.items() if home(repo, DEFAULT) == cluster}

    def reach(self, repo: str, cluster: str) -> Toolbox | Unreached:
        """The tools of repository `repo` (the object's `kubecrew.io/gitops-repo`, "" when
        none) if it is given and syncs to `cluster`; else why nothing may change it there."""
        serving = self.serving(cluster)
        if repo and repo in serving:
            return serving[repo]
        if cluster and (repo or not serving):
            return Unreached("report-only", unserved(repo, cluster))
        if repo:
            why = (
                f"managed by repository {repo}, which the Platform is not given: add it to the "
                "Platform's repositories"
            )
            return Unreached("no-repo", why)
        return Unreached("not git-managed", "no GitOps repository manages it")


def unserved(repo: str, cluster: str) -> str:
    whose = f"its repository {repo} does not" if repo else "no configured repository"
    return (
        f"cluster {cluster}: {whose} sync to this cluster, so it is reported only (report only, "
        "no repository): configure a GitOps repository whose context is this cluster"
    )


def at(cluster: str) -> dict[str, str]:
    """A kube tool's `context` argument for `cluster`: none for the default one."""
    return {"context": cluster} if cluster else {}


def named(cluster: str, name: str) -> str:
    """What a row of `cluster` is called: "east/team-a" in a fleet, "team-a" otherwise."""
    return f"{cluster}/{name}" if cluster else name


async def listed(
    toolbox: Toolbox,
    kind: str,
    fields: list[str],
    *,
    namespace: str | None = None,
    cluster: str = DEFAULT,
) -> list[Json]:
    """The objects of `kind` in one cluster (in one namespace, or all), with `fields` each."""
    where: dict[str, str] = {"namespace": namespace} if namespace else {}
    got = await toolbox.call(
        "list_resources", kind=kind, output="fields", fields=fields, limit=500,
        **where, **at(cluster),
    )  # fmt: skip
    items: list[Json] = got.get("items", [])
    return items
