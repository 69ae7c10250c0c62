"""`access_review` reads who may do what from the cluster's RBAC objects, and agrees with the API
server's own authorizer (`kubectl auth can-i --as`) on every question asked: RoleBindings to
ClusterRoles count only in their namespace, `pods` does not grant `pods/log`, resourceNames
limit a grant to those names, aggregated ClusterRoles grant what they aggregate. An identity
that cannot read RBAC is told what to grant; the agents' own RBAC (deploy/agents) can."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools, identity_kubeconfig
from tests.support.kubectl import Kubectl

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "agents"
AGGREGATED = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: pod-reapers
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {kubecrew.test/aggregate-to-reapers: "true"}
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: pod-reaper-part
  labels: {kubecrew.test/aggregate-to-reapers: "true"}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["delete"]
"""


@pytest.fixture
def rbac(sandbox: Sandbox, kubectl: Kubectl) -> KubeTools:
    """alice edits shop, bob views shop, the group shop-admins administers staging, the
    ServiceAccount shop/robot reads pod logs in shop, carol deletes pods everywhere, dave may
    patch only the Deployment web in shop, erin holds an aggregated ClusterRole in shop."""
    for namespace in ("shop", "staging"):
        kubectl("create", "namespace", namespace)
    kubectl("create", "serviceaccount", "robot", "-n", "shop")
    shop = ("-n", "shop")
    kubectl("create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice", *shop)
    kubectl("create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob", *shop)
    kubectl(
        "create",
        "rolebinding",
        "admins",
        "--clusterrole=admin",
        "--group=shop-admins",
        "-n",
        "staging",
    )
    kubectl("create", "role", "log-reader", "--verb=get", "--resource=pods/log", *shop)
    kubectl(
        "create",
        "rolebinding",
        "robot-logs",
        "--role=log-reader",
        "--serviceaccount=shop:robot",
        *shop,
    )
    kubectl("create", "clusterrole", "pod-deleter", "--verb=delete", "--resource=pods")
    kubectl(
        "create", "clusterrolebinding", "carol-deletes", "--clusterrole=pod-deleter", "--user=carol"
    )
    kubectl(
        "create",
        "role",
        "web-patcher",
        "--verb=patch",
        "--resource=deployments",
        "--resource-name=web",
        *shop,
    )
    kubectl("create", "rolebinding", "dave-web", "--role=web-patcher", "--user=dave", *shop)
    kubectl("apply", "-f", "-", input=AGGREGATED)
    kubectl(
        "create", "rolebinding", "erin-reaps", "--clusterrole=pod-reapers", "--user=erin", *shop
    )
    return KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig))


def who(tools: KubeTools, **arguments: Any) -> set[str]:
    answer = tools.ok("access_review", **arguments)
    assert answer["partial"] == []
    return {
        f"{s['kind']} {s.get('namespace', '') + '/' if s.get('namespace') else ''}{s['name']}"
        for s in answer["subjects"]
    }


MASTERS = "Group system:masters"  # cluster-admin, bound on every cluster


def test_who_can_names_exactly_the_subjects_the_bindings_grant(rbac: KubeTools) -> None:
    assert who(rbac, verb="delete", resource="pods", namespace="shop") == {
        MASTERS,
        "User alice",
        "User carol",
        "User erin",
    }
    # view reads logs but never secrets; the robot's Role grants pods/log, not pods
    assert who(rbac, verb="get", resource="logs", namespace="shop") == {
        MASTERS,
        "User alice",
        "User bob",
        "ServiceAccount shop/robot",
    }
    assert who(rbac, verb="get", resource="secrets", namespace="shop") == {MASTERS, "User alice"}
    assert who(rbac, verb="get", resource="pods", namespace="shop") == {
        MASTERS,
        "User alice",
        "User bob",
    }
    # the group's RoleBinding is in staging: it grants nothing in shop
    assert who(rbac, verb="delete", resource="secrets", namespace="staging") == {
        MASTERS,
        "Group shop-admins",
    }


def test_who_can_anywhere_labels_each_grant_with_its_namespace(rbac: KubeTools) -> None:
    answer = rbac.ok("access_review", verb="delete", resource="po")
    scopes = {s["name"]: {v["scope"] for v in s["via"]} for s in answer["subjects"]}
    assert scopes == {
        "system:masters": {"cluster"},
        "carol": {"cluster"},
        "alice": {"shop"},
        "erin": {"shop"},
        "shop-admins": {"staging"},
    }
    # a cluster-scoped resource: RoleBindings grant nothing, whatever their ClusterRole says
    assert who(rbac, verb="list", resource="nodes", namespace="shop") == {MASTERS}


def test_a_grant_limited_to_resource_names_says_so(rbac: KubeTools, kubectl: Kubectl) -> None:
    answer = rbac.ok("access_review", verb="patch", resource="deploy", namespace="shop")
    dave = next(s for s in answer["subjects"] if s["name"] == "dave")
    assert dave["limited"] and dave["via"][0]["only_names"] == ["web"]
    may = rbac.ok(
        "access_review", verb="patch", resource="deployments", namespace="shop", subject="dave"
    )
    assert may["allowed"] is False and may["only_some_names"]
    said = kubectl.run(
        "auth", "can-i", "patch", "deployment/web", "-n", "shop", "--as", "dave", check=False
    )
    assert said.stdout.strip() == "yes"


QUESTIONS = [
    ("alice", "delete", "pods", "shop"),
    ("alice", "delete", "pods", "staging"),
    ("alice", "patch", "deployments/scale", "shop"),
    ("bob", "patch", "deployments/scale", "shop"),
    ("bob", "get", "pods/log", "shop"),
    ("bob", "get", "secrets", "shop"),
    ("carol", "delete", "pods", "staging"),
    ("carol", "list", "pods", "staging"),
    ("erin", "delete", "pods", "shop"),
    ("erin", "delete", "pods", "staging"),
    ("system:serviceaccount:shop:robot", "get", "pods/log", "shop"),
    ("system:serviceaccount:shop:robot", "get", "pods", "shop"),
    ("alice", "list", "nodes", ""),
    ("dave", "patch", "deployments", "shop"),
]


@pytest.mark.parametrize("question", [pytest.param(q, id="-".join(q)) for q in QUESTIONS])
def test_may_agrees_with_the_api_servers_authorizer(
    rbac: KubeTools, kubectl: Kubectl, question: tuple[str, str, str, str]
) -> None:
    subject, verb, resource, namespace = question
    answer = rbac.ok(
        "access_review", verb=verb, resource=resource, subject=subject, namespace=namespace or None
    )
    where = ("-n", namespace) if namespace else ()
    plural, _, sub = resource.partition("/")  # kubectl reads TYPE/NAME: a subresource is a flag
    flags = (*where, *((f"--subresource={sub}",) if sub else ()))
    said = kubectl.run("auth", "can-i", verb, plural, *flags, "--as", subject, check=False)
    assert answer["allowed"] == (said.stdout.strip() == "yes"), answer


def test_a_subjects_rights_are_what_can_i_list_shows(rbac: KubeTools, kubectl: Kubectl) -> None:
    answer = rbac.ok("access_review", subject="alice", namespace="shop", limit=500)
    ours = {
        (resource, verb)
        for rule in answer["rules"]
        for resource in rule.get("resources", [])
        for verb in rule["verbs"]
    }
    listed = kubectl("auth", "can-i", "--list", "-n", "shop", "--as", "alice")
    theirs = set()
    for line in listed.splitlines()[1:]:
        columns = line.split()
        if columns and not columns[0].startswith("["):
            verbs = line[line.rindex("[") + 1 : line.rindex("]")].split()
            theirs |= {(columns[0], verb) for verb in verbs}
    assert ours == theirs
    assert any(r["implicit"] and "system:authenticated" in r["through"] for r in answer["rules"])


def test_a_name_bindings_know_as_a_group_is_read_as_that_group(rbac: KubeTools) -> None:
    answer = rbac.ok("access_review", subject="shop-admins", namespace="staging")
    assert answer["subject"] == {"kind": "Group", "name": "shop-admins"}
    assert any(r["via"].startswith("RoleBinding staging/admins") for r in answer["rules"])
    robot = rbac.ok(
        "access_review", subject="shop/robot", verb="get", resource="logs", namespace="shop"
    )
    assert robot["allowed"] and robot["grants"][0]["through"] == "ServiceAccount shop/robot"


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        pytest.param({}, "give verb and resource", id="nothing"),
        pytest.param({"verb": "fly", "resource": "pods"}, "verb 'fly'", id="verb"),
        pytest.param({"verb": "get", "resource": "gizmos"}, "no resource type", id="resource"),
        pytest.param({"subject": "a;b"}, "subject 'a;b'", id="subject"),
        pytest.param({"subject": "sa:robot"}, "NAMESPACE/NAME", id="service-account"),
    ],
)
def test_a_malformed_question_is_refused_saying_what_to_write(
    rbac: KubeTools, arguments: dict[str, Any], says: str
) -> None:
    assert says in rbac.fails("access_review", **arguments)


def test_an_identity_that_cannot_read_rbac_is_told_what_to_grant(nobody: KubeTools) -> None:
    message = nobody.fails("access_review", verb="delete", resource="pods")
    assert "clusterrolebindings" in message and "grant it get/list" in message


@pytest.mark.parametrize("agent", ["dev-team", "cluster-operator"])
def test_the_agents_own_rbac_lets_them_answer_access_questions(
    rbac: KubeTools, sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, agent: str
) -> None:
    kubectl("create", "namespace", "kubecrew-system")
    kubectl("apply", "-f", str(DEPLOY / f"{agent}.yaml"))
    token = kubectl("create", "token", agent, "-n", "kubecrew-system").strip()
    own = KubeTools(
        KubeSettings(
            kubeconfig=identity_kubeconfig(
                sandbox.kubeconfig, token, tmp_path / f"{agent}.kubeconfig"
            )
        )
    )
    assert who(own, verb="delete", resource="pods", namespace="shop") == who(
        rbac, verb="delete", resource="pods", namespace="shop"
    )
    itself = own.ok(
        "access_review", subject=f"kubecrew-system/{agent}", verb="list", resource="rolebindings"
    )
    assert itself["allowed"], itself
