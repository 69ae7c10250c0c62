"""One crew configuration for every front door (`kubecrew.crew`): the six options each of ask,
chat, heal, watch and slack takes, the crew file that fills in what the command line leaves
unsaid (the command line wins), the servers an agent gets from them, the one-line errors for a
repository that is not one and policies that do not load."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from core.errors import InvalidArgument, NotFound
from core.policy.settings import SHIPPED
from kubecrew.cli.main import app
from kubecrew.crew import CrewOptions, resolve
from tests.support.crew import crew_env
from tests.support.gitops import git
from tests.support.mcp_hosts import KUBECREW

COMMANDS = ["ask", "chat", "heal", "watch", "slack"]
OPTIONS = ["--kubeconfig", "--context", "--repo", "--policies", "--policy-store", "--prometheus"]
BAD_POLICY = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: broken}
spec: {approvalz: []}
"""


def kubeconfig(path: Path, server: str) -> Path:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    made.mkdir()
    return made


def repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_every_front_door_takes_the_crew_options(command: str) -> None:
    shown = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    for option in OPTIONS:
        assert option in shown.output, f"{command} --help lacks {option}"


def test_the_crew_file_fills_in_what_the_command_line_leaves_unsaid(home: Path) -> None:
    shop = repo(home / "gitops" / "shop")
    kubeconfig(home / "cluster.yaml", "https://127.0.0.1:6443")
    crew = {
        "kubeconfig": "cluster.yaml",  # relative: read from the crew file's folder
        "context": "from-file",
        "repo": "gitops/shop",
        "policies": [str(SHIPPED)],
        "policy_store": str(home / "store.sqlite"),
        "prometheus": "http://prometheus:9090",
    }
    (home / "crew.yaml").write_text(yaml.safe_dump(crew))
    environ = {"KUBECREW_HOME": str(home)}

    resolved = resolve(CrewOptions(context="typed", prometheus="http://other:9090"), environ)

    assert resolved.context == "typed" and resolved.prometheus == "http://other:9090"
    assert resolved.kubeconfig == home / "cluster.yaml" and resolved.repo == shop
    assert resolved.policies == (SHIPPED,) and resolved.policy_store == str(home / "store.sqlite")
    servers = resolved.servers("dev_team")
    assert servers.kube is not None and servers.policy is not None and servers.gitops is not None
    assert (servers.kube.agent, servers.kube.policies) == ("dev_team", (SHIPPED,))
    assert servers.kube.policy_store == servers.policy.store == str(home / "store.sqlite")
    assert (servers.policy.agent, servers.gitops.repo) == ("dev_team", shop)
    assert servers.gitops.state_dir == home / "gitops" / "shop.kubecrew"
    assert servers.metrics is not None
    assert servers.metrics.prometheus_url == "http://other:9090"


def test_without_a_crew_file_every_agent_is_still_gated_by_the_default_policies(
    home: Path,
) -> None:
    resolved = resolve(CrewOptions(), {"KUBECREW_HOME": str(home)})
    servers = resolved.servers("cluster_operator")
    assert resolved.policies  # ./policies here, else the shipped ones
    assert servers.kube is not None and servers.kube.policies == resolved.policies
    assert servers.kube.agent == "cluster_operator"
    assert servers.policy is not None and servers.policy.agent == "cluster_operator"
    assert servers.policy.store is None  # the store every kubecrew command opens by default
    assert servers.gitops is None and servers.metrics is None


def test_an_agent_speaks_as_its_own_identity_for_the_crew_files_cluster(home: Path) -> None:
    cluster = kubeconfig(home / "sandbox" / "kubeconfig", "https://127.0.0.1:7443")
    own = kubeconfig(home / "kubeconfigs" / "dev-team.yaml", "https://127.0.0.1:7443")
    (home / "crew.yaml").write_text(yaml.safe_dump({"kubeconfig": str(cluster)}))
    environ = {"KUBECREW_HOME": str(home)}

    from_file = resolve(CrewOptions(), environ)
    dev_team, operator = from_file.servers("dev_team").kube, from_file.servers("platform").kube
    assert dev_team is not None and dev_team.kubeconfig == own
    assert operator is not None and operator.kubeconfig == cluster  # none installed for it

    typed = resolve(CrewOptions(kubeconfig=cluster), environ).servers("dev_team").kube
    assert typed is not None and typed.kubeconfig == cluster  # the person said which


def test_a_repo_that_is_not_git_and_a_malformed_crew_file_say_what_to_fix(home: Path) -> None:
    plain = home / "not-a-repo"
    plain.mkdir()
    with pytest.raises(NotFound, match=r"--repo .*not-a-repo is not a git repository; give"):
        resolve(CrewOptions(repo=plain), {"KUBECREW_HOME": str(home)})
    (home / "crew.yaml").write_text("kubeconfig: x\nrepository: y\n")
    with pytest.raises(InvalidArgument, match=r"unknown key\(s\) repository; the keys are"):
        resolve(CrewOptions(), {"KUBECREW_HOME": str(home)})


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, *args], capture_output=True, text=True, env=crew_env(home), timeout=60
    )


@pytest.mark.parametrize(
    "args",
    [["ask", "why is web failing?"], ["heal", "web"], ["watch"], ["chat"], ["slack"]],
    ids=COMMANDS,
)
def test_a_bad_repo_is_one_line_on_every_front_door(args: list[str], home: Path) -> None:
    done = _run([*args, "--repo", str(home)], home)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --repo {home} is not a git"), lines


def test_policies_that_do_not_load_are_one_line(home: Path) -> None:
    (home / "broken.yaml").write_text(BAD_POLICY)
    done = _run(["heal", "web", "--policies", str(home / "broken.yaml")], home)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: policies do not load: "), lines
    assert "broken.yaml" in lines[0] and "approvalz" in lines[0]
