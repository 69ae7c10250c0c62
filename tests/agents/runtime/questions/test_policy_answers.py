"""Policy questions answered by a dry run of the policy store (`evaluate_action`), each in
three phrasings: scaling web below the shop's minimum is countered, in staging it is allowed,
deleting it in the shop is refused and needs a shop admin; a name in two namespaces is asked
back, a scale without a number asks how many. Nothing changes: no replica, no audit record,
no proposal."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.server import Sandbox
from tests.support.changes import WEB
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker


@pytest.fixture(scope="module")
def kubectl(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    for namespace in ("shop", "staging"):
        kubectl("create", "namespace", namespace)
        kubectl("apply", "-f", "-", input=WEB % {"ns": namespace})
        kubectl("rollout", "status", "deploy/web", "-n", namespace, "--timeout=60s")
    return kubectl


@pytest.fixture(scope="module")
def asker(
    kubectl: Kubectl, shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Asker]:
    asker = Asker(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("home"))
    yield asker
    assert asker.audit() == []  # a dry run records nothing, and nothing was written
    for namespace in ("shop", "staging"):
        assert kubectl.json("get", "deploy", "web", "-n", namespace)["spec"]["replicas"] == 2


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [], asked.writes
    return asked


@pytest.mark.parametrize(
    "text",
    [
        "may I scale web to 1 in shop?",
        "would policy let us scale the web deployment in shop down to 1 replica?",
        "can I scale wbe to 1 in shop",
    ],
)
def test_scaling_below_the_shops_minimum_is_countered(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert asked.data["verdict"] == "counter" and asked.data["target"] == "Deployment shop/web"
    assert asked.text.startswith("Not as asked: policy counters scale Deployment shop/web 2 -> 1")
    assert "It would accept: 3 replicas." in asked.text
    assert "CapacityPolicy shop-min-capacity / rule min-replicas" in asked.text
    assert "nothing was changed or recorded" in asked.text


@pytest.mark.parametrize(
    "text",
    [
        "may I scale web to 1 in staging?",
        "hey, is it ok if we take web in staging down to one replica?",
        "scaling wbe to 1 in staging, would that be allowed?",
    ],
)
def test_the_same_scale_in_staging_is_allowed(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert asked.data["verdict"] == "allow"
    assert asked.text.startswith("Yes: policy allows scale Deployment staging/web 2 -> 1")


@pytest.mark.parametrize(
    "text",
    [
        "would policy allow deleting web in shop?",
        "is it ok to delete the web deployment in the shop namespace?",
        "can we delete wbe in shop",
    ],
)
def test_deleting_in_the_shop_is_refused_and_names_who_approves(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert asked.data["verdict"] == "reject"
    assert asked.text.startswith("No: policy rejects delete Deployment shop/web")
    assert "group shop-admins" in asked.text


def test_the_answer_says_as_whom_it_was_judged(asker: Asker) -> None:
    own = ask(asker, "can the dev team restart web in staging?")
    assert (
        own.data["verdict"] == "allow" and own.text.splitlines()[-2] == "Judged as agent dev_team."
    )
    other = ask(asker, "can alice restart web in staging?")
    assert "not as alice" in other.text


def test_a_name_in_two_namespaces_is_asked_back(asker: Asker) -> None:
    asked = ask(asker, "may I scale web to 1?")
    assert asked.data["clarify"] is True and "verdict" not in asked.data
    assert "Deployment shop/web" in asked.text and "Deployment staging/web" in asked.text


def test_a_scale_without_a_number_asks_how_many(asker: Asker) -> None:
    asked = ask(asker, "may I scale web in staging?")
    assert asked.text.startswith("To how many replicas would you scale Deployment staging/web")
    assert "(it runs 2 now)" in asked.text
