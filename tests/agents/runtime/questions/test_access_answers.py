"""Access questions answered from the cluster's RBAC, asked as the Dev Team agent's own
ServiceAccount (its RBAC in deploy/agents must let it read the RBAC objects), each in three
phrasings: who may do something, may one subject do it (agreeing with the API server's own
`kubectl auth can-i`), what a subject or one of the crew's agents may do. Nothing is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kube_tools import identity_kubeconfig
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker

DEPLOY = Path(__file__).resolve().parents[4] / "deploy" / "agents"
MASTERS = "Group system:masters"


@pytest.fixture(scope="module")
def world(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    for namespace in ("shop", "staging", "kubecrew-system"):
        kubectl("create", "namespace", namespace)
    for agent in ("dev-team", "cluster-operator"):
        kubectl("apply", "-f", str(DEPLOY / f"{agent}.yaml"))
    kubectl(
        "create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice", "-n", "shop"
    )
    kubectl("create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob", "-n", "shop")
    kubectl(
        "create",
        "rolebinding",
        "admins",
        "--clusterrole=admin",
        "--group=shop-admins",
        "-n",
        "staging",
    )
    kubectl("create", "clusterrole", "pod-deleter", "--verb=delete", "--resource=pods")
    kubectl(
        "create", "clusterrolebinding", "carol-deletes", "--clusterrole=pod-deleter", "--user=carol"
    )
    return kubectl


@pytest.fixture(scope="module")
def asker(
    world: Kubectl, shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Asker]:
    home = tmp_path_factory.mktemp("home")
    token = world("create", "token", "dev-team", "-n", "kubecrew-system").strip()
    own = identity_kubeconfig(shared_sandbox.kubeconfig, token, home / "dev-team.kubeconfig")
    asker = Asker(own, home)
    yield asker
    assert asker.mutations() == []


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [] and asked.data["sure"], asked.text
    return asked


def subjects(asked: Asked) -> set[str]:
    return {
        f"{s['kind']} {s['namespace'] + '/' if s.get('namespace') else ''}{s['name']}"
        for s in asked.data["rows"]
    }


DEV_TEAM = "ServiceAccount kubecrew-system/dev-team"  # deletes what a person asks and confirms
DELETERS = {MASTERS, "User alice", "User carol", DEV_TEAM}
WHO = [
    ("who can delete pods in shop", DELETERS),
    ("hey, who is actually allowed to delete the pods in the shop namespace?", DELETERS),
    ("who can delete pods in shpo", DELETERS),
    ("who may read secrets in staging", {MASTERS, "Group shop-admins"}),
    ("who has access to the secrets in staging?", {MASTERS, "Group shop-admins"}),
    ("who may read secrtes in staging", {MASTERS, "Group shop-admins"}),
    (
        "who can read logs in shop",
        {MASTERS, "User alice", "User bob", DEV_TEAM},
    ),
]


@pytest.mark.parametrize(("text", "expected"), WHO, ids=[t for t, _ in WHO])
def test_who_can_lists_exactly_the_subjects_rbac_grants(
    asker: Asker, text: str, expected: set[str]
) -> None:
    asked = ask(asker, text)
    assert subjects(asked) == expected
    assert all(s.partition(" ")[2] in asked.text for s in expected)
    assert "RoleBinding" in asked.text  # each cites the binding that grants


MAY = [
    ("can bob scale deployments in shop?", ("bob", "patch", "deployments", "scale", "shop")),
    (
        "is alice allowed to scale the deployments in the shop namespace?",
        ("alice", "patch", "deployments", "scale", "shop"),
    ),
    (
        "can alice scale deploymnets in staging",
        ("alice", "patch", "deployments", "scale", "staging"),
    ),
    (
        "does carol have permission to delete pods in staging?",
        ("carol", "delete", "pods", "", "staging"),
    ),
    (
        "can the dev team agent read the pod logs in shop?",
        ("system:serviceaccount:kubecrew-system:dev-team", "get", "pods", "log", "shop"),
    ),
    (
        "may the dev team delete pods in shop",
        ("system:serviceaccount:kubecrew-system:dev-team", "delete", "pods", "", "shop"),
    ),
]


@pytest.mark.parametrize(("text", "request_"), MAY, ids=[t for t, _ in MAY])
def test_may_answers_as_the_api_server_would(
    asker: Asker, world: Kubectl, text: str, request_: tuple[str, str, str, str, str]
) -> None:
    subject, verb, resource, sub, namespace = request_
    asked = ask(asker, text)
    flags = [f"--subresource={sub}"] if sub else []
    said = world.run(
        "auth", "can-i", verb, resource, *flags, "-n", namespace, "--as", subject, check=False
    ).stdout.strip()
    assert asked.data["allowed"] is (said == "yes")
    assert asked.text.startswith("Yes:" if said == "yes" else "No:")


@pytest.mark.parametrize(
    "text",
    [
        "what can alice do in shop",
        "so what exactly is alice allowed to do in the shop namespace?",
        "what can alice do in shpo",
    ],
)
def test_a_persons_rights_are_the_rules_bound_to_them(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    rows = asked.data["rows"]
    assert rows and all(r["via"] == "RoleBinding shop/alice-edit -> ClusterRole edit" for r in rows)
    assert any("deployments.apps" in r["resources"] and "patch" in r["verbs"] for r in rows)
    assert "every signed-in identity" in asked.text


@pytest.mark.parametrize(
    "text",
    [
        "what may the dev-team agent do",
        "tell me what the dev team agent is allowed to do, please",
        "what can the devteam agent do",
    ],
)
def test_an_agents_rights_join_its_tools_and_its_rbac(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert asked.data["agent"] == "dev_team"
    assert {"scale", "set_image", "rollout_undo"} <= set(asked.data["writes"])
    assert asked.text.startswith("Agent dev_team acts as ServiceAccount kubecrew-system/dev-team")
    assert "(patch deployments.apps): RBAC allows it everywhere" in asked.text
    assert any("ClusterRole kubecrew-dev-team" in r["via"] for r in asked.data["rows"])


def test_another_agents_rights_come_from_its_own_bindings(asker: Asker) -> None:
    asked = ask(asker, "what can the cluster operator agent do?")
    assert "ServiceAccount kubecrew-system/cluster-operator" in asked.text
    assert "cordon, taint, uncordon (patch nodes): RBAC allows it everywhere" in asked.text
    assert "drain (create pods/eviction): RBAC allows it everywhere" in asked.text


def test_the_person_asking_is_not_guessed(asker: Asker) -> None:
    asked = ask(asker, "can I delete pods in shop?")
    assert asked.text.startswith("I cannot tell which identity you use")
    assert subjects(asked) == DELETERS
