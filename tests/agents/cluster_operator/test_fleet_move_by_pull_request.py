"""A fleet move where git defines one side: two live sandboxes as contexts of one kubeconfig
(east, whose GitOps repository the crew holds and syncs there; west, busy, no repository).

The decided move scales east's api up by a pull request that edits the replicas in git, merged
under east's own proposal and synced, so the sync agrees with the move instead of undoing it;
then west's api, which no repository defines, is scaled down by the kube gate's write. Checked
on both clusters' objects and on the repository afterwards. A Deployment another repository
manages in a cluster the crew's repository does not reach is never written directly.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import yaml

from agents.cluster_operator.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.fleet import fleet_kubeconfig
from tests.support.fleet_moves import BUSY, IDLE, pending, replicas
from tests.support.gitops import git
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

REPO_LABEL = "kubecrew.io/gitops-repo"


def east_repo(root: Path) -> Path:
    """The repository that defines east's shop: the api Deployment at one replica."""
    repo = root / "east-gitops"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "api.yaml").write_text(IDLE)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "east")
    return repo


def in_git(repo: Path) -> int:
    docs = [d for d in yaml.safe_load_all(git(repo, "show", "main:shop/api.yaml")) if d]
    return int(next(d for d in docs if d["kind"] == "Deployment")["spec"]["replicas"])


def survey(operator: Operator, servers: Servers) -> Outcome:
    async def run() -> Outcome:
        async with conversation(
            servers, Deterministic(), home=operator.home, clusters=("east", "west")
        ) as talk:
            return await talk.fleet()

    return anyio.run(run)


def test_the_side_git_defines_moves_by_pull_request(
    sandbox: Sandbox, west: Sandbox, operator: Operator, kubectl: Kubectl, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("apply", "-f", "-", input=BUSY)
    kubectl("apply", "-f", "-", input=IDLE)
    eventually(lambda: pending(west_kubectl) == 1, what="west's fourth api pod pending")
    operator.kubeconfig = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
    )
    repo = east_repo(tmp_path)
    servers = operator.servers()
    servers = Servers(
        kube=servers.kube, policy=servers.policy,
        gitops=GitopsSettings(repo=repo, state_dir=tmp_path / "prs",
                              kubeconfig=operator.kubeconfig, context="east"),
    )  # fmt: skip

    outcome = survey(operator, servers)

    [move] = outcome.data["moves"]
    assert move["state"] == "done", outcome.answer
    assert (replicas(kubectl), replicas(west_kubectl)) == (3, 2), outcome.answer
    assert in_git(repo) == 3  # git says what east runs: the next sync keeps the move
    east_api = kubectl.json("get", "deploy", "api", "-n", "shop")
    assert east_api["metadata"]["labels"].get(REPO_LABEL), "east's api is applied by the sync"
    assert move["ways"]["east"].startswith("PR #1, merged and synced"), move
    assert move["ways"]["west"] == "gated write (scale)", move
    applied = [r.summary for r in operator.mutations() if r.result == "applied"]
    assert [a.split(" under ")[0] for a in applied if "scale Deployment" in a] == [
        "scale: scale Deployment shop/api in cluster west 4 -> 2 replicas directly"
    ], applied  # east was written by its sync, never by a direct scale

    again = survey(operator, servers)  # done once: no second PR, no second write
    assert again.data["imbalance"] is False
    assert in_git(repo) == 3 and replicas(kubectl) == 3


def test_a_side_another_repository_manages_is_never_written_directly(
    sandbox: Sandbox, west: Sandbox, operator: Operator, kubectl: Kubectl, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("apply", "-f", "-", input=BUSY)
    kubectl("apply", "-f", "-", input=IDLE)
    kubectl("label", "deploy/api", "-n", "shop", f"{REPO_LABEL}=east-apps")
    eventually(lambda: pending(west_kubectl) == 1, what="west's fourth api pod pending")
    operator.kubeconfig = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
    )

    outcome = survey(operator, operator.servers())  # the crew holds no repository at all

    [move] = outcome.data["moves"]
    assert move["state"] == "proposed", outcome.answer
    assert any("repository east-apps defines it in cluster east" in s for s in move["steps"])
    assert (replicas(kubectl), replicas(west_kubectl)) == (1, 4)
    assert [r for r in operator.mutations() if r.result == "applied"] == []
