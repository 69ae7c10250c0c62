"""Agents speak as their own ServiceAccount: the one decision (`agents.runtime.identity`) and the
Dev Team's "why is web failing?" answered right through it.

The decision reads files only, so it is checked with kubeconfigs written to a temporary home; the
diagnosis runs on a sandbox where `kubecrew install` wrote the agents' kubeconfigs under
`$KUBECREW_HOME`, with no kubeconfig given to the conversation, as `kubecrew ask` runs it.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import yaml

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.errors import ToolFailed
from agents.runtime.identity import kube_for
from agents.runtime.toolbox import Servers
from kubecrew.install.footprint import Request, install
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.broken_web import assert_names_the_cause, image_typo
from tests.support.diagnosis import NS, Doctor
from tests.support.kubectl import Kubectl


def kubeconfig(path: Path, server: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    kubeconfig(tmp_path / "home" / "kubeconfigs" / "dev-team.yaml", "https://cluster-a:6443")
    return tmp_path / "home"


def environ(home: Path, *default: Path) -> dict[str, str]:
    return {"KUBECREW_HOME": str(home), "KUBECONFIG": ":".join(str(p) for p in default)}


def test_the_agent_file_is_used_for_the_cluster_the_default_kubeconfig_reaches(
    home: Path, tmp_path: Path
) -> None:
    default = kubeconfig(tmp_path / "admin", "https://cluster-a:6443/")
    chosen = kube_for("dev_team", KubeSettings(read_only=True), environ(home, default))
    assert chosen == KubeSettings(kubeconfig=home / "kubeconfigs" / "dev-team.yaml", read_only=True)


def test_with_no_default_kubeconfig_the_agent_file_is_the_cluster(
    home: Path, tmp_path: Path
) -> None:
    chosen = kube_for("dev_team", KubeSettings(), environ(home, tmp_path / "missing"))
    assert chosen is not None and chosen.kubeconfig == home / "kubeconfigs" / "dev-team.yaml"


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(KubeSettings(kubeconfig=Path("/elsewhere")), id="explicit-kubeconfig"),
        pytest.param(KubeSettings(context="prod"), id="explicit-context"),
    ],
)
def test_an_explicit_kubeconfig_or_context_wins(
    home: Path, tmp_path: Path, given: KubeSettings
) -> None:
    default = kubeconfig(tmp_path / "admin", "https://cluster-a:6443")
    assert kube_for("dev_team", given, environ(home, default)) is given


def test_a_file_for_another_cluster_or_another_agent_is_not_used(
    home: Path, tmp_path: Path
) -> None:
    elsewhere = kubeconfig(tmp_path / "admin", "https://cluster-b:6443")
    same = kubeconfig(tmp_path / "admin-a", "https://cluster-a:6443")
    kube = KubeSettings()
    assert kube_for("dev_team", kube, environ(home, elsewhere)) is kube  # a sandbox long gone
    assert kube_for("platform", kube, environ(home, same)) is kube  # nothing installed for it
    assert kube_for("dev_team", None, environ(home, same)) is None


def test_the_dev_team_diagnoses_web_as_its_own_service_account(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "kubecrew-home"
    install(Request(kubeconfig=sandbox.kubeconfig, out=home / "kubeconfigs"))
    monkeypatch.setenv("KUBECREW_HOME", str(home))
    monkeypatch.setenv("KUBECONFIG", str(sandbox.kubeconfig))
    kubectl("create", "namespace", NS)
    fault = image_typo(kubectl)
    Doctor(sandbox).finding(fault.code, namespace=NS, kind="deployment", name="web")

    async def ask() -> tuple[Outcome, str]:
        async with conversation(
            Servers(kube=KubeSettings()), Deterministic(), home=tmp_path / "agent"
        ) as talk:
            outcome = await talk.ask("why is web failing?")
            try:  # who the kube server speaks as: the admin could read this Secret list
                await talk.toolbox.call("list_resources", kind="secrets", namespace=NS)
            except ToolFailed as refused:
                return outcome, refused.message
            return outcome, "listed the secrets"

    outcome, secrets = anyio.run(ask)

    assert outcome.target == {"kind": "Deployment", "name": "web", "namespace": NS}
    assert_names_the_cause(outcome.answer, fault)
    assert 'User "system:serviceaccount:kubecrew-system:dev-team" cannot list' in secrets
