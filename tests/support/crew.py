"""The crew options that point a front door at a team's world (tests/support/team.py), as a
person would type them: `crew_of` as a front door builds them, `crew_args` on a command line,
`crew_env` a process environment of its own (its own home, no model, no inherited crew
settings), `start_kubecrew` a long-lived `kubecrew` process in one, `state_of` where such a
process keeps what it learns of a cluster; `prs` reads the pull requests the crew's gitops
server opened beside the repository.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from core.home import cluster_state, current_cluster
from kubecrew.crew import CrewOptions
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import GitopsSettings
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import Team


def crew_of(team: Team) -> CrewOptions:
    """The crew options naming the team's cluster, repository, policies and store, as a front
    door builds them from the command line."""
    assert team.servers.policy is not None and team.servers.kube is not None
    return CrewOptions(
        kubeconfig=team.servers.kube.kubeconfig,
        repo=team.repo,
        policies=team.servers.policy.policies,
        policy_store=str(team.store),
    )


def crew_args(team: Team) -> list[str]:
    """The crew options naming the team's cluster, repository, policies and store."""
    assert team.servers.policy is not None and team.servers.kube is not None
    args = ["--kubeconfig", str(team.servers.kube.kubeconfig), "--repo", str(team.repo)]
    for policies in team.servers.policy.policies:
        args += ["--policies", str(policies)]
    return [*args, "--policy-store", str(team.store)]


def prs(team: Team) -> list[Any]:
    """The pull requests the crew's gitops server opened: its records live beside the
    repository (`GitopsSettings.default_state_dir`), as for `kubecrew heal --repo`."""
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    return LocalProvider(repo, GitopsSettings.default_state_dir(team.repo)).list_prs(state="all")


def state_of(home: Path, kubeconfig: Path) -> Path:
    """Where `kubecrew` with this home keeps what it learns of this kubeconfig's cluster."""
    cluster = current_cluster([kubeconfig])
    assert cluster is not None, f"{kubeconfig} names no cluster"
    return cluster_state(cluster, {"KUBECREW_HOME": str(home)})


def crew_env(home: Path) -> dict[str, str]:
    """A process environment of its own: this home, no model, no inherited crew settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env.pop("KUBECONFIG", None)
    return {**env, "KUBECREW_HOME": str(home), "KUBECREW_MODEL_GUARD": "1", "TERM": "xterm"}


def start_kubecrew(args: list[str], home: Path, log: Path, **env: str) -> subprocess.Popen[str]:
    """The installed `kubecrew *args` as a long-lived process of its own (`crew_env(home)` plus
    `env`), what it says going to the file `log`: a file, not a pipe, so nobody has to keep
    reading it."""
    home.mkdir(parents=True, exist_ok=True)
    with log.open("w") as sink:
        return subprocess.Popen(
            [KUBECREW, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            text=True,
            env={**crew_env(home), **env},
        )
