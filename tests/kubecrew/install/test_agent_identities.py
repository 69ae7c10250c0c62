"""The agents' kubeconfigs work with real kubectl, grant exactly what each role needs, and the Dev
Team's diagnosis answers right while speaking as its own ServiceAccount.

One sandbox serves the module (read-mostly); the cordon test puts its node back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubecrew.install.footprint import Request, install
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl


@pytest.fixture(scope="module")
def identities(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kubecrew-home") / "kubeconfigs"
    install(Request(kubeconfig=shared_sandbox.kubeconfig, out=out))
    return out


@pytest.fixture
def as_agent(identities: Path, tmp_path: Path) -> Iterator[dict[str, Kubectl]]:
    yield {
        agent: Kubectl(identities / f"{agent}.yaml", tmp_path / f"cache-{agent}")
        for agent in ("dev-team", "cluster-operator", "platform")
    }


def test_dev_team_lists_pods_everywhere_and_is_who_it_says(as_agent: dict[str, Kubectl]) -> None:
    pods = as_agent["dev-team"].run("get", "pods", "-A")
    assert pods.returncode == 0, pods.stderr
    whoami = as_agent["dev-team"]("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami == "system:serviceaccount:kubecrew-system:dev-team"


CAN_I = [
    ("dev-team", ("patch", "nodes"), "no"),
    ("dev-team", ("list", "secrets", "-A"), "no"),
    ("dev-team", ("get", "secrets", "-n", "default"), "no"),
    ("dev-team", ("patch", "deployments", "-n", "shop"), "yes"),
    ("dev-team", ("create", "jobs", "-n", "shop"), "yes"),
    ("dev-team", ("get", "pods", "--subresource=log", "-n", "shop"), "yes"),
    ("dev-team", ("delete", "deployments", "-n", "shop"), "yes"),
    ("dev-team", ("delete", "namespaces"), "no"),
    ("dev-team", ("delete", "secrets", "-n", "shop"), "no"),
    ("dev-team", ("create", "services", "-n", "shop"), "yes"),
    ("dev-team", ("patch", "poddisruptionbudgets", "-n", "shop"), "yes"),
    ("dev-team", ("create", "namespaces"), "no"),
    ("dev-team", ("create", "rolebindings", "-n", "shop"), "no"),
    ("dev-team", ("create", "pods", "--subresource=eviction", "-n", "shop"), "no"),
    ("cluster-operator", ("patch", "nodes"), "yes"),
    ("cluster-operator", ("create", "pods", "--subresource=eviction", "-n", "shop"), "yes"),
    ("cluster-operator", ("delete", "pods", "-n", "shop"), "no"),
    ("cluster-operator", ("list", "secrets", "-A"), "no"),
    ("cluster-operator", ("update", "poddisruptionbudgets", "-n", "shop"), "no"),
    ("platform", ("create", "pods", "--subresource=eviction", "-n", "shop"), "no"),
    ("platform", ("patch", "networkpolicies", "-n", "shop"), "yes"),
    ("platform", ("list", "clusterrolebindings"), "yes"),
    ("platform", ("create", "rolebindings", "-n", "shop"), "yes"),
    ("platform", ("bind", "clusterroles/edit"), "yes"),
    ("platform", ("bind", "clusterroles/cluster-admin"), "no"),
    ("platform", ("create", "namespaces"), "yes"),
    ("platform", ("create", "resourcequotas", "-n", "shop"), "yes"),
    ("platform", ("create", "deployments", "-n", "shop"), "no"),
    ("platform", ("patch", "nodes"), "no"),
    ("platform", ("list", "secrets", "-A"), "no"),
]


@pytest.mark.parametrize(
    ("agent", "question", "answer"),
    [pytest.param(*case, id=f"{case[0]}-{case[2]}-{'-'.join(case[1])}") for case in CAN_I],
)
def test_each_agent_may_do_what_its_tools_need_and_no_more(
    as_agent: dict[str, Kubectl], agent: str, question: tuple[str, ...], answer: str
) -> None:
    said = as_agent[agent].run("auth", "can-i", *question, check=False)
    assert said.stdout.strip() == answer, said.stderr


def test_every_agent_may_use_the_policy_store_and_no_other_account_may(
    as_agent: dict[str, Kubectl], shared_kubectl: Kubectl
) -> None:
    for kubectl in as_agent.values():
        said = kubectl("auth", "can-i", "create", "proposals.kubecrew.io", "-n", "kubecrew-system")
        assert said.strip() == "yes"
        deleting = kubectl.run(
            "auth", "can-i", "delete", "auditrecords.kubecrew.io", "-n", "kubecrew-system",
            check=False,
        )  # fmt: skip
        assert deleting.stdout.strip() == "no"
    default = shared_kubectl.run(
        "auth", "can-i", "create", "proposals.kubecrew.io", "-n", "kubecrew-system",
        "--as", "system:serviceaccount:kubecrew-system:default", check=False,
    )  # fmt: skip
    assert default.stdout.strip() == "no"


def test_cluster_operator_cordons_and_dev_team_may_not(
    as_agent: dict[str, Kubectl], shared_kubectl: Kubectl
) -> None:
    refused = as_agent["dev-team"].run("cordon", "node-2", check=False)
    assert 'cannot patch resource "nodes"' in refused.stderr  # kubectl 1.37 still exits 0
    assert shared_kubectl("get", "node", "node-2", "-o", "jsonpath={.spec.unschedulable}") == ""
    try:
        assert "node/node-2 cordoned" in as_agent["cluster-operator"]("cordon", "node-2")
    finally:
        shared_kubectl("uncordon", "node-2")
