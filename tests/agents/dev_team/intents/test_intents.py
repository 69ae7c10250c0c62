"""The intent grammar reads paraphrases, and names resolve against what the cluster holds:
exact, typo, a word of a hyphenated name, namespace inferred when unique, a clarifying question
when two objects match or none does."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agents.dev_team.intents import Clarify, Target, parse, resolve
from agents.runtime.roles import load_role
from agents.runtime.toolbox import Servers, open_toolbox
from kubecrew.channels.frontdoor import route
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl


@pytest.mark.parametrize(
    ("question", "subject", "namespace"),
    [
        ("why is web failing", ("web",), None),
        ("What's wrong with my web service?", ("web",), None),
        ("web keeps crashing, why?", ("web",), None),
        ("is checkout broken?", ("checkout",), None),
        ("diagnose web in shop", ("web",), "shop"),
        ("shop/web is down", ("web",), "shop"),
        ("why does the checkout api keep restarting in namespace staging", ("checkout", "api"),
         "staging"),
        # how it is doing, asked with no word of trouble: the same diagnosis
        ("is web up?", ("web",), None),
        ("what is the status of web in shop?", ("web",), "shop"),
        ("check web", ("web",), None),
        ("how is web doing?", ("web",), None),
    ],
)  # fmt: skip
def test_paraphrases_parse_to_a_diagnosis_of_the_subject(
    question: str, subject: tuple[str, ...], namespace: str | None
) -> None:
    intent = parse(question)
    assert (intent.kind, intent.subject, intent.namespace) == ("diagnose", subject, namespace)


@pytest.mark.parametrize("text", ["is web up?", "check web", "how is web doing?"])
def test_how_a_named_workload_is_doing_reaches_the_dev_team(text: str) -> None:
    assert route(text) == "dev_team", text
    assert route("hello, can you help?") is None  # nothing named: the front door asks who


def test_a_request_no_cue_names_is_unsupported() -> None:
    assert parse("make web a sandwich").kind == "unsupported"
    assert parse("why is web failing", namespace="prod").namespace == "prod"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("has web drifted from git?", "drift"),
        ("someone edited web by hand, reconcile it", "drift"),
        ("fix the drift of web", "drift"),
        ("right-size web for me", "rightsize"),
        ("is web over-provisioned?", "rightsize"),
        ("resize checkout", "rightsize"),
        ("probe web", "probe"),
        ("write a prober for checkout", "probe"),
        ("why is the readiness probe of web failing", "diagnose"),
        ("make checkout survive a node failure", "resilience"),
        ("harden web", "resilience"),
        ("add a pdb to web", "resilience"),
    ],
)
def test_task_cues_name_their_work_and_the_workload(question: str, kind: str) -> None:
    intent = parse(question)
    assert intent.kind == kind
    assert intent.subject[-1] in ("web", "checkout")


def workload(kind: str, name: str, namespace: str) -> dict[str, object]:
    spec = {"containers": [{"name": "main", "image": "nginx:1.27"}], "nodeName": "ghost-node"}
    template = {"metadata": {"labels": {"app": name}}, "spec": spec}
    body: dict[str, object] = {"selector": {"matchLabels": {"app": name}}, "template": template}
    if kind == "StatefulSet":
        body["serviceName"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 0, **body},
    }


def service(name: str, namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80}]},
    }


@pytest.fixture(scope="module")
def cluster(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Path:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    for namespace in ("shop", "staging"):
        kubectl("create", "namespace", namespace)
    objects = [
        workload("Deployment", "web", "shop"),
        service("web", "shop"),
        workload("Deployment", "web", "staging"),
        workload("Deployment", "checkout-api", "shop"),
        workload("StatefulSet", "orders-db", "shop"),
        service("frontend", "staging"),
    ]
    kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    )
    return shared_sandbox.kubeconfig


def resolved(kubeconfig: Path, question: str, namespace: str | None = None) -> Target | Clarify:
    async def go() -> Target | Clarify:
        servers = Servers(kube=KubeSettings(kubeconfig=kubeconfig))
        async with open_toolbox(load_role("dev_team"), servers) as toolbox:
            return await resolve(parse(question, namespace=namespace), toolbox)

    return anyio.run(go)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        pytest.param("why is web failing in shop", Target("Deployment", "web", "shop"), id="ns"),
        pytest.param("whats wrong with wbe in staging", Target("Deployment", "web", "staging"),
                     id="typo"),
        pytest.param("is checkout broken?", Target("Deployment", "checkout-api", "shop"),
                     id="word-of-name"),
        pytest.param("orders-bd keeps crashing, why?", Target("StatefulSet", "orders-db", "shop"),
                     id="statefulset-typo"),
        pytest.param("why is the frontend failing", Target("Service", "frontend", "staging"),
                     id="service-ns-inferred"),
    ],
)  # fmt: skip
def test_names_resolve_to_the_one_object_meant(
    cluster: Path, question: str, expected: Target
) -> None:
    assert resolved(cluster, question) == expected


def test_a_name_in_two_namespaces_asks_which_one(cluster: Path) -> None:
    answer = resolved(cluster, "why is web failing?")
    assert isinstance(answer, Clarify)
    assert set(answer.options) == {
        Target("Deployment", "web", "shop"),
        Target("Deployment", "web", "staging"),
    }
    assert "Deployment web in shop" in answer.question and "in staging" in answer.question
    assert resolved(cluster, "why is web failing?", namespace="staging") == Target(
        "Deployment", "web", "staging"
    )


def test_an_unknown_name_lists_what_exists(cluster: Path) -> None:
    answer = resolved(cluster, "why is billing failing")
    assert isinstance(answer, Clarify)
    assert "nothing called 'billing'" in answer.question
    assert "Deployment checkout-api in shop" in answer.question
    assert "kubernetes" not in answer.question  # the API server's Service is no workload
