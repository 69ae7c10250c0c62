"""A fleet of sandboxes as one kubeconfig: each sandbox a context of its own (its cluster and
its user under the context's name), as `kubectl config` merges them, the first one current.

For the Platform agent's fleet tests: `platform_fleet` makes a `Platform`'s own sandbox east and
a second one west, with the team repository's gitops server syncing to east only; `across`
opens one conversation over both, as a schedule would; `by_cluster` reads a procedure's rows by
(cluster, namespace)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
import yaml

from agents.platform.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from tests.support.platform_agent import REPO, Platform

FLEET = ("east", "west")


def fleet_kubeconfig(path: Path, clusters: dict[str, Path]) -> Path:
    """One kubeconfig naming every sandbox as a context of its own, as `kubectl config` merges."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [],
                              "users": [], "contexts": []}  # fmt: skip
    for name, source in clusters.items():
        config = yaml.safe_load(source.read_text())
        merged["clusters"].append({"name": name, "cluster": config["clusters"][0]["cluster"]})
        merged["users"].append({"name": name, "user": config["users"][0]["user"]})
        context = {"cluster": name, "user": name, "namespace": "default"}
        merged["contexts"].append({"name": name, "context": context})
    merged["current-context"] = next(iter(clusters))
    path.write_text(yaml.safe_dump(merged))
    return path


def platform_fleet(platform: Platform, west: Path, root: Path) -> Path:
    """The Platform's sandbox as east and the `west` kubeconfig's as west, in one kubeconfig
    the Platform reads; the team repository's gitops server syncs to east alone."""
    fleet = fleet_kubeconfig(root / "fleet.kubeconfig", {"east": platform.kubeconfig, "west": west})
    platform.kubeconfig = fleet
    platform.gitops = dataclasses.replace(platform.gitops, kubeconfig=fleet, context="east")
    return fleet


def across(platform: Platform, call: str, *args: Any) -> Outcome:
    """One conversation over east and west, the team repository given: `call` on it."""

    async def go() -> Outcome:
        async with conversation(
            platform.servers(), Deterministic(), repos={REPO: platform.gitops},
            home=platform.home, clusters=FLEET,
        ) as talk:  # fmt: skip
            platform.last = talk
            outcome: Outcome = await getattr(talk, call)(*args)
            return outcome

    return anyio.run(go)


def by_cluster(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(row["cluster"], row["namespace"]): row for row in result["namespaces"]}
