"""A namespace's frame asked of the Platform in words (a namespace with a quota, default limits,
pod security, access granted and revoked), each carried out through policy, a dry run, the
gated apply and validation, and read back from the API server."""

from __future__ import annotations

from typing import Any

from tests.support.kubectl import Kubectl
from tests.support.platform_agent import Platform


def _get(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    return dict(kubectl.json("get", *args))


def test_a_namespace_with_its_frame_as_people_ask(platform: Platform, kubectl: Kubectl) -> None:
    done = platform.ask("create namespace team-c with a quota of 4 cpus, 8Gi memory and 20 pods")
    assert done.data.get("outcome") == "done", done.answer
    assert _get(kubectl, "namespace", "team-c")["status"]["phase"] == "Active"
    assert _get(kubectl, "resourcequota", "quota", "-n", "team-c")["spec"]["hard"] == {
        "pods": "20", "requests.cpu": "4", "requests.memory": "8Gi"}  # fmt: skip

    done = platform.ask("please set default limits in team-c to 500m cpu and 512Mi memory")
    assert done.data.get("outcome") == "done", done.answer
    [item] = _get(kubectl, "limitrange", "limits", "-n", "team-c")["spec"]["limits"]
    assert item["default"] == {"cpu": "500m", "memory": "512Mi"}

    done = platform.ask("enforce restricted pod security in teem-c")
    assert done.data.get("outcome") == "done", done.answer
    labels = _get(kubectl, "namespace", "team-c")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_access_is_granted_and_revoked_as_people_ask(platform: Platform, kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "apps")
    done = platform.ask("let carol read logs in apps")
    assert done.data.get("outcome") == "done", done.answer
    can = kubectl.run("auth", "can-i", "get", "pods", "--subresource=log", "-n", "apps",
                      "--as=carol", check=False)  # fmt: skip
    assert can.stdout.strip() == "yes"
    cannot = kubectl.run("auth", "can-i", "delete", "pods", "-n", "apps", "--as=carol",
                         check=False)  # fmt: skip
    assert cannot.stdout.strip() == "no"

    done = platform.ask("could you give bob edit access to the apps namespace?")
    assert done.data.get("outcome") == "done", done.answer
    can = kubectl.run("auth", "can-i", "patch", "deployments", "-n", "apps", "--as=bob",
                      check=False)  # fmt: skip
    assert can.stdout.strip() == "yes"

    kubectl("create", "serviceaccount", "reader-sa", "-n", "apps")
    done = platform.ask("Create a read-only role for pods bound to my reader-sa service account "
                        "in the apps namespace.")  # fmt: skip
    assert done.data.get("outcome") == "done", done.answer
    account = "--as=system:serviceaccount:apps:reader-sa"
    for verb, wanted in (("list", "yes"), ("get", "yes"), ("delete", "no"), ("create", "no")):
        said = kubectl.run("auth", "can-i", verb, "pods", "-n", "apps", account, check=False)
        assert said.stdout.strip() == wanted, (verb, said.stdout)

    asked = platform.ask("revoke carol's access to apps", thread="r")
    assert asked.clarifying and "reply 'yes'" in asked.answer, asked.answer
    done = platform.ask("yes", thread="r")
    assert done.data.get("outcome") == "done", done.answer
    gone = kubectl.run("auth", "can-i", "get", "pods", "--subresource=log", "-n", "apps",
                       "--as=carol", check=False)  # fmt: skip
    assert gone.stdout.strip() == "no"


def test_a_service_account_is_made_then_given_access(platform: Platform, kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "ci")
    done = platform.ask("create a service account ci-bot in namespace ci")
    assert done.data.get("outcome") == "done", done.answer
    assert _get(kubectl, "serviceaccount", "ci-bot", "-n", "ci")["metadata"]["name"] == "ci-bot"
    account = "--as=system:serviceaccount:ci:ci-bot"
    said = kubectl.run("auth", "can-i", "list", "pods", "-n", "ci", account, check=False)
    assert said.stdout.strip() == "no"  # an identity, with no right of its own

    done = platform.ask("give the service account ci-bot permission to list pods in ci")
    assert done.data.get("outcome") == "done", done.answer
    said = kubectl.run("auth", "can-i", "list", "pods", "-n", "ci", account, check=False)
    assert said.stdout.strip() == "yes"
    again = platform.ask("add a serviceaccount named ci-bot to ci")
    assert "exists already" in again.answer, again.answer


def test_a_frame_change_for_a_namespace_that_does_not_exist_is_asked_about(
    platform: Platform,
) -> None:
    outcome = platform.ask("set a quota of 10 pods on nowhere")
    assert outcome.clarifying and "create it first" in outcome.answer, outcome.answer
    assert platform.mutations() == [] if hasattr(platform, "mutations") else True
