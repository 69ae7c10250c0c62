"""A scenario's fleet: the model of its other clusters (`world.clusters`, each a sandbox of its
own beside the main one), the rules their names keep, and the one kubeconfig naming them all.

A cluster of a fleet is a kubeconfig context of the crew's one kube server, as a crew file's
`clusters` names them: the merged kubeconfig is what an operator's looks like after `kubectl
config` merges theirs, each cluster's server and user under the context's name, the main cluster
first and current, so a tool that names no context acts in the main cluster as in a world of
one. The harness's own readers keep each sandbox's admin kubeconfig.

Nothing here starts a sandbox or knows the crew: `kubecrew.evals.world` does both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, Field

from kubecrew.evals.checks import ON_CLUSTER, Objective, Settle, Strict

MAIN_CLUSTER = "east"  # the main sandbox's context in a fleet that does not name it


def _dns_label(name: str) -> str:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", name):
        raise ValueError(
            f"{name!r} is not a DNS label (a cluster's kubeconfig context here): lower-case "
            "letters, digits and '-', starting and ending with a letter or digit, 63 at most"
        )
    return name


ClusterName = Annotated[str, AfterValidator(_dns_label)]


class Member(Strict):
    """Another cluster of the fleet: a sandbox of its own of `nodes` nodes (the sandbox's
    default size), its clock at `rate` (else the world's), these manifests applied as the main
    world's are, then its `settle` states reached; the kubeconfig context called `name`."""

    name: ClusterName
    nodes: Annotated[int, Field(ge=1, le=20)] = 3
    rate: Annotated[float, Field(gt=0, le=100)] | None = None
    manifests: list[dict[str, Any]] = []
    settle: list[Settle] = []


def naming_problem(main: str | None, members: Sequence[Member]) -> str | None:
    """What is wrong with the fleet's names, if anything: a main name without a fleet, or two
    clusters of one name (the main one's is `main`, else MAIN_CLUSTER)."""
    if main is not None and not members:
        return "cluster_name names the main cluster of a fleet: give clusters too"
    seen = {main or MAIN_CLUSTER: "the main cluster's (cluster_name, default east)"}
    for i, member in enumerate(members):
        if member.name in seen:
            return (
                f"clusters[{i}].name {member.name!r} is already {seen[member.name]}: "
                "give each cluster a name of its own"
            )
        seen[member.name] = f"clusters[{i}]'s"
    return None


def unknown_clusters(fleet: Sequence[str], objectives: Sequence[Objective]) -> list[str]:
    """One `field.path: reason` line per objective reading a cluster the world does not have."""
    problems = []
    for i, goal in enumerate(objectives):
        for check in ON_CLUSTER:
            named = getattr(getattr(goal, check), "cluster", None)
            if named is None or named in fleet:
                continue
            why = (
                f"{named!r} is not a cluster of this world ({', '.join(fleet)})"
                if fleet
                else f"{named!r} names a cluster, and this world has one: give world.clusters"
            )
            problems.append(f"objectives[{i}].{check}.cluster: {why}")
    return problems


def kubeconfig(path: Path, clusters: Mapping[str, Path]) -> Path:
    """One kubeconfig at `path` naming each cluster's server and user (from its own kubeconfig,
    name -> path) as a context of that name, the first one current."""
    merged: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [],
    }  # fmt: skip
    for name, source in clusters.items():
        config = yaml.safe_load(source.read_text())
        current = _current(config)
        server = _named(config, "clusters", current["cluster"])
        user = _named(config, "users", current["user"])
        merged["clusters"].append({"name": name, "cluster": server["cluster"]})
        merged["users"].append({"name": name, "user": user["user"]})
        context = {"cluster": name, "user": name, "namespace": "default"}
        merged["contexts"].append({"name": name, "context": context})
    merged["current-context"] = next(iter(clusters))
    # it holds every cluster's bearer token: readable by its owner only, as each source is
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        out.write(yaml.safe_dump(merged))
    return path


def _current(config: dict[str, Any]) -> dict[str, Any]:
    """The current context's cluster and user names in a kubeconfig."""
    chosen = config.get("current-context")
    for entry in config.get("contexts") or []:
        if entry["name"] == chosen:
            return dict(entry["context"])
    return dict(config["contexts"][0]["context"])


def _named(config: dict[str, Any], section: str, name: str) -> dict[str, Any]:
    found = [entry for entry in config.get(section) or [] if entry["name"] == name]
    if not found:
        raise ValueError(f"the kubeconfig names no {section[:-1]} {name!r}")
    return dict(found[0])
