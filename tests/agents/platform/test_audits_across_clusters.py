"""Audits across two live sandboxes named as contexts of one kubeconfig (east, west).

team-a runs the same two-replica Deployment without a PodDisruptionBudget on both: on east it
comes from the team's repository, whose gitops server syncs to east; on west it was applied by
hand, labelled as if from that repository. Only west grants a service account cluster-admin.
The fleet's audit reads each cluster with its own context: the over-grant is found and named as
west's, and nowhere else; east's missing PDB is fixed by a merged and synced PR, confirmed on
east's live objects, while west's, which no given repository syncs to, is reported only and
west is left as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubecrew.demo.shop import deployment
from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.fleet import across, platform_fleet
from tests.support.kubectl import Kubectl
from tests.support.platform_agent import CLASS, REPO, Platform

WEB = deployment("web", replicas=2, cpu="10m", namespace="team-a")
REPO_LABEL = f"kubecrew.io/gitops-repo={REPO}"


@pytest.fixture
def west(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=tmp_path / "west", nodes=1, rate=RATE)) as running:
        yield running


def where(result: dict[str, Any], key: str, obj: str, check: str) -> list[str]:
    """The clusters in whose `key` (findings, remaining) `obj` has a `check` finding."""
    return sorted(
        f.get("cluster", "") for f in result[key] if f["object"] == obj and f["check"] == check
    )


def test_each_cluster_is_audited_on_its_own_and_fixed_only_through_its_repository(
    platform: Platform, west: Sandbox, tmp_path: Path
) -> None:
    platform_fleet(platform, west.kubeconfig, tmp_path)
    platform.add_to_git("web.yaml", WEB)
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("create", "namespace", "team-a")
    west_kubectl("label", "namespace", "team-a", f"{CLASS}=team", REPO_LABEL)
    west_kubectl("apply", "-f", "-", input=WEB)
    west_kubectl("label", "deployment", "web", "-n", "team-a", REPO_LABEL)
    west_kubectl("create", "serviceaccount", "deployer", "-n", "team-a")
    west_kubectl("create", "clusterrolebinding", "team-a-deployer",
                 "--clusterrole=cluster-admin", "--serviceaccount=team-a:deployer")  # fmt: skip

    outcome = across(platform, "ask", "audit the fleet")
    result = outcome.data
    assert outcome.task == "audit" and result["clusters"] == ["east", "west"], outcome.answer
    assert {"east/team-a", "east/team-b", "west/team-a"} <= set(result["namespaces"])

    over = [f for f in result["findings"] if f["object"] == "ClusterRoleBinding team-a-deployer"]
    assert [(f["cluster"], f["check"]) for f in over] == [("west", "rbac-cluster-admin")], over
    assert over[0]["value"] == "ServiceAccount team-a/deployer"
    assert "[critical] rbac-cluster-admin: west/ClusterRoleBinding team-a-deployer" in (
        outcome.answer
    )
    assert where(result, "findings", "Deployment team-a/web", "no-pdb") == ["east", "west"]

    fixes = {f["cluster"]: f for f in result["fixes"] if f["object"] == "Deployment team-a/web"}
    assert fixes["east"]["delivered"] == "merged" and fixes["east"]["pr"] == 1, outcome.answer
    assert platform.proposal(fixes["east"]["proposal"]).proposal.action.target.cluster == "east"
    assert fixes["west"]["delivered"] == "report-only" and fixes["west"]["pr"] == 0
    assert f"its repository {REPO} does not sync to this cluster" in fixes["west"]["why"]
    assert "Fix for west/Deployment team-a/web (no-pdb): report only, no repository" in (
        outcome.answer
    )

    # Checked on each cluster's objects: east has the PDB from git, west has none.
    live = platform.kubectl.json("get", "pdb", "web", "-n", "team-a")
    assert live["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert live["metadata"]["labels"]["kubecrew.io/gitops-repo"] == REPO
    assert west_kubectl("get", "pdb", "-n", "team-a").strip() == ""
    assert where(result, "remaining", "Deployment team-a/web", "no-pdb") == ["west"]
