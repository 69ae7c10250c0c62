"""kubectl and identity: `auth can-i`, `auth whoami`, ServiceAccount tokens and RBAC denials.

The least-privileged user is a ServiceAccount bound to a Role that grants only `get,list pods`
in its namespace; it reaches the sandbox through its own kubeconfig, made with kubectl's
`config set-credentials`, as a user would make one.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.sandbox.kubectl.readers import Reader, make_reader
from tests.sandbox.kubectl.suite import header, rows
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl


@pytest.fixture(scope="module")
def reader(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Reader:
    """One reader for the module's read-only tests, with a pod `web` in its namespace."""
    home = tmp_path_factory.mktemp("reader")
    admin = Kubectl(shared_sandbox.kubeconfig, home / "admin-cache")
    admin("create", "namespace", "reader-home")
    admin("run", "web", "--image=nginx:1.27", "-n", "reader-home")
    return make_reader(admin, "reader-home", home)


@pytest.fixture
def own_reader(shared_kubectl: Kubectl, namespace: str, tmp_path: Path) -> Reader:
    """A reader of this test's own, for tests that change it."""
    return make_reader(shared_kubectl, namespace, tmp_path)


# -- can-i -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        pytest.param(["create", "deployments"], id="create-deployments"),
        pytest.param(["*", "*"], id="everything"),
        pytest.param(["delete", "nodes"], id="delete-nodes"),
        pytest.param(["get", "secrets", "-A"], id="secrets-everywhere"),
        pytest.param(["get", "/healthz"], id="non-resource-url"),
    ],
)
def test_auth_can_i_answers_yes_for_the_admin(shared_kubectl: Kubectl, question: list[str]) -> None:
    done = shared_kubectl.run("auth", "can-i", *question)
    assert (done.returncode, done.stdout) == (0, "yes\n")


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        pytest.param(["get", "pods"], "yes", id="get-pods"),
        pytest.param(["list", "pods"], "yes", id="list-pods"),
        pytest.param(["get", "pods/web"], "yes", id="get-one-pod"),
        pytest.param(["watch", "pods"], "no", id="watch-pods"),
        pytest.param(["delete", "pods"], "no", id="delete-pods"),
        pytest.param(["get", "pods", "--subresource=log"], "no", id="pod-logs"),
        pytest.param(["get", "secrets"], "no", id="get-secrets"),
        pytest.param(["list", "deployments.apps"], "no", id="list-deployments"),
        pytest.param(["get", "pods", "-n", "default"], "no", id="other-namespace"),
        pytest.param(["create", "selfsubjectaccessreviews"], "yes", id="ask-itself"),
    ],
)
def test_can_i_follows_sa_role(reader: Reader, question: list[str], answer: str) -> None:
    done = reader.kubectl.run("auth", "can-i", *question, check=False)
    assert (done.stdout, done.returncode) == (f"{answer}\n", 0 if answer == "yes" else 1)


def test_auth_can_i_about_a_cluster_scoped_resource_warns_and_answers_no(
    reader: Reader,
) -> None:
    done = reader.kubectl.run("auth", "can-i", "get", "nodes", check=False)
    assert (done.stdout, done.returncode) == ("no\n", 1)
    assert "Warning: resource 'nodes' is not namespace scoped" in done.stderr


def test_auth_can_i_list_shows_the_granted_rules(reader: Reader) -> None:
    listed = reader.kubectl("auth", "can-i", "--list")
    assert header(listed) == ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]
    granted = {r["Resources"]: r["Verbs"] for r in rows(listed) if r["Resources"]}
    assert granted == {
        "pods": "[get list]",
        # From the system:basic-user ClusterRole every authenticated user is bound to.
        "selfsubjectreviews.authentication.k8s.io": "[create]",
        "selfsubjectaccessreviews.authorization.k8s.io": "[create]",
        "selfsubjectrulesreviews.authorization.k8s.io": "[create]",
    }
    urls = {r["Non-Resource URLs"] for r in rows(listed) if not r["Resources"]}
    assert {"[/api]", "[/apis]", "[/version]", "[/healthz]"} <= urls


def test_auth_can_i_list_for_the_admin_includes_everything(shared_kubectl: Kubectl) -> None:
    listed = rows(shared_kubectl("auth", "can-i", "--list"))
    assert {
        "Resources": "*.*",
        "Non-Resource URLs": "[]",
        "Resource Names": "[]",
        "Verbs": "[*]",
    } in listed


# -- whoami ----------------------------------------------------------------------------------


def whoami(kubectl: Kubectl, *flags: str) -> dict[str, str]:
    table = kubectl(*flags, "auth", "whoami")
    assert header(table) == ["ATTRIBUTE", "VALUE"]
    return {r["ATTRIBUTE"]: r["VALUE"] for r in rows(table)}


def test_auth_whoami_names_the_admin(shared_kubectl: Kubectl) -> None:
    assert whoami(shared_kubectl) == {
        "Username": "kubecrew-admin",
        "Groups": "[system:masters system:authenticated]",
    }


def test_auth_whoami_names_the_service_account(shared_kubectl: Kubectl, reader: Reader) -> None:
    uid = shared_kubectl.json("get", "sa", "reader", "-n", reader.namespace)["metadata"]["uid"]
    expected = {
        "Username": reader.username,
        "UID": uid,
        "Groups": f"[system:serviceaccounts system:serviceaccounts:{reader.namespace} "
        "system:authenticated]",
    }
    assert whoami(reader.kubectl).items() >= expected.items()
    # The same identity with the token given on the command line to the admin's kubeconfig.
    assert whoami(shared_kubectl, f"--token={reader.token}").items() >= expected.items()


def _jti(token: str) -> str:
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return str(claims["jti"])


def test_auth_whoami_shows_the_token_credential_id(reader: Reader) -> None:
    shown = whoami(reader.kubectl)
    assert shown["Extra: authentication.kubernetes.io/credential-id"] == (
        f"[JTI={_jti(reader.token)}]"
    )


# -- denials ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["get", "secrets"],
            'secrets is forbidden: User "{user}" cannot list resource "secrets" in API group "" '
            'in the namespace "{ns}"',
            id="get-secrets",
        ),
        pytest.param(
            ["get", "secret", "token"],
            'secrets "token" is forbidden: User "{user}" cannot get resource "secrets" in API '
            'group "" in the namespace "{ns}"',
            id="get-one-secret",
        ),
        pytest.param(
            ["delete", "pod", "web"],
            'pods "web" is forbidden: User "{user}" cannot delete resource "pods" in API group '
            '"" in the namespace "{ns}"',
            id="delete-pod",
        ),
        pytest.param(
            ["get", "nodes"],
            'nodes is forbidden: User "{user}" cannot list resource "nodes" in API group "" at '
            "the cluster scope",
            id="get-nodes",
        ),
        pytest.param(
            ["get", "deployments"],
            'deployments.apps is forbidden: User "{user}" cannot list resource "deployments" in '
            'API group "apps" in the namespace "{ns}"',
            id="list-deployments",
        ),
        pytest.param(
            ["logs", "web"],
            'pods "web" is forbidden: User "{user}" cannot get resource "pods/log" in API group '
            '"" in the namespace "{ns}"',
            id="pod-logs",
        ),
    ],
)
def test_sa_forbidden_beyond_role(
    shared_kubectl: Kubectl, reader: Reader, args: list[str], message: str
) -> None:
    done = reader.kubectl.fails(*args)
    expected = message.format(user=reader.username, ns=reader.namespace)
    assert done.stderr.strip().splitlines()[-1] == f"Error from server (Forbidden): {expected}"
    assert shared_kubectl.json("get", "pod", "web", "-n", reader.namespace)["metadata"]["name"]


def test_service_account_reads_pods_its_role_grants(
    shared_kubectl: Kubectl, reader: Reader
) -> None:
    assert reader.kubectl("get", "pods", "-o", "name") == "pod/web\n"
    assert reader.kubectl.json("get", "pod", "web")["spec"]["containers"][0]["image"] == (
        "nginx:1.27"
    )


@pytest.mark.parametrize(
    "token",
    [
        pytest.param("not-a-token", id="garbage"),
        pytest.param("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", id="forged-jwt"),
    ],
)
def test_unknown_token_is_unauthorized(shared_kubectl: Kubectl, token: str) -> None:
    # With discovery cached kubectl prints the server's Status message; on a cold cache the
    # failed discovery makes it print client-go's generic text instead, as against any cluster.
    shared_kubectl("get", "namespaces")
    done = shared_kubectl.fails(f"--token={token}", "get", "pods")
    assert done.stderr.strip().splitlines()[-1] == (
        "error: You must be logged in to the server (Unauthorized)"
    )


def test_token_stops_working_when_its_service_account_is_deleted(
    shared_kubectl: Kubectl, own_reader: Reader
) -> None:
    assert own_reader.kubectl("auth", "can-i", "get", "pods") == "yes\n"
    shared_kubectl("delete", "serviceaccount", "reader", "-n", own_reader.namespace)
    done = own_reader.kubectl.fails("get", "pods")
    assert "error: You must be logged in to the server (Unauthorized)" in done.stderr


# -- impersonation (--as): not supported by the sandbox yet ----------------------------------


def test_admin_impersonating_the_service_account_gets_its_rights(
    shared_kubectl: Kubectl, reader: Reader
) -> None:
    done = shared_kubectl.fails(f"--as={reader.username}", "get", "secrets", "-n", reader.namespace)
    assert f'User "{reader.username}" cannot list resource "secrets"' in done.stderr


def test_admin_impersonating_a_user_is_that_user_in_whoami(shared_kubectl: Kubectl) -> None:
    assert whoami(shared_kubectl, "--as=alice", "--as-group=devs") == {
        "Username": "alice",
        "Groups": "[devs system:authenticated]",
    }


def test_service_account_may_not_impersonate(reader: Reader) -> None:
    done = reader.kubectl.fails("--as=alice", "get", "pods")
    assert done.stderr.strip() == (
        f'Error from server (Forbidden): users "alice" is forbidden: User "{reader.username}" '
        'cannot impersonate resource "users" in API group "" at the cluster scope'
    )
