"""Inventory questions answered on a live shop, each in three phrasings (terse, chatty, with a
typo), naming exactly the objects the cluster's state makes true, citing them, saying how sure
the answer is; and never writing anything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker, objects, running, shop

API, WEB, CACHE = "Deployment shop/api", "Deployment shop/web", "StatefulSet shop/cache"


@pytest.fixture(scope="module")
def asker(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Asker]:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    shop(kubectl)
    bulk(kubectl)
    asker = Asker(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("home"))
    yield asker
    assert asker.mutations() == []


def bulk(kubectl: Kubectl) -> None:
    """30 pods that are never scheduled, each with an image of its own."""
    kubectl("create", "namespace", "bulk")
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{n:02}", "namespace": "bulk"},
            "spec": {
                "schedulerName": "no-scheduler",
                "containers": [{"name": "c", "image": f"registry.test/app-{n:02}:1.0"}],
            },
        }
        for n in range(30)
    ]
    kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods})
    )


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [], asked.writes
    return asked


CHECKS = [
    (
        "limits",
        [
            "which workloads have no limits in shop",
            "hey, could you list the apps in the shop namespace that don't set resource limits?",
            "workloads without limts in shpo",
        ],
        {API, CACHE},
    ),
    (
        "probes",
        [
            "workloads without probes in shop",
            "which of my apps in shop are missing health checks?",
            "which workloads in shop have no probse",
        ],
        {API},
    ),
    (
        "readiness",
        [
            "no readiness probe in shop",
            "please show me which deployments and statefulsets lack a readiness probe in shop",
            "which workloads have no readyness probe in shop",
        ],
        {API},
    ),
    (
        "pdb",
        [
            "which workloads have no PDB in shop",
            "which apps in shop would have no disruption budget protecting them?",
            "workloads without a pdb in shpo",
        ],
        {API, CACHE},
    ),
    (
        "latest",
        [
            "which workloads use :latest in shop",
            "is anything in shop still running the latest tag?",
            "which workloads use latest in shpo",
        ],
        {API},
    ),
]


@pytest.mark.parametrize(
    ("check", "text", "expected"),
    [pytest.param(c, t, e, id=f"{c}-{i}") for c, texts, e in CHECKS for i, t in enumerate(texts)],
)
def test_a_check_names_exactly_the_workloads_that_fail_it(
    asker: Asker, check: str, text: str, expected: set[str]
) -> None:
    asked = ask(asker, text)
    assert asked.data["check"] == check
    assert objects(asked) == expected
    assert all(name in asked.text for name in expected)
    assert WEB not in asked.text
    assert asked.text.splitlines()[-1].startswith("Sure: read the pod templates of 3")


@pytest.mark.parametrize(
    "text",
    [
        "what runs as root in shop",
        "which of the shop's workloads are running as the root user?",
        "whcih pods run as root in shpo",
    ],
)
def test_root_is_sure_for_runasuser_0_and_a_maybe_where_nothing_forbids_it(
    asker: Asker, text: str
) -> None:
    asked = ask(asker, text)
    sure = {r["object"] for r in asked.data["rows"] if not r["problems"][0].startswith("may")}
    maybe = {r["object"] for r in asked.data["rows"] if r["problems"][0].startswith("may")}
    assert (sure, maybe) == ({API}, {CACHE})
    assert "the image's USER" in asked.text


@pytest.mark.parametrize(
    "text",
    [
        "what images run in shop",
        "could you list the container images the pods in shop are using?",
        "imags in shpo",
    ],
)
def test_images_are_what_the_pods_run_cited_by_their_workload(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    used = {r["image"]: {u["object"]: u["pods"] for u in r["used_by"]} for r in asked.data["rows"]}
    assert used == {
        "nginx:1.28": {WEB: 2},
        "nginx:latest": {API: 1},
        "redis:7": {CACHE: 1},
        "nginx:1.27": {"Pod shop/stuck": 1},
    }
    assert "nginx:1.27" in asked.text and "Deployment shop/web (2 pods)" in asked.text


@pytest.mark.parametrize(
    "text", ["what image is web running in shop?", "which images does web use in shop"]
)
def test_the_images_of_one_workload_are_its_own(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    used = {r["image"]: {u["object"]: u["pods"] for u in r["used_by"]} for r in asked.data["rows"]}
    assert used == {"nginx:1.28": {WEB: 2}}, asked.text
    assert asked.text.startswith("1 image runs in 2 pods of web in shop:"), asked.text


@pytest.mark.parametrize(
    "text",
    [
        "top 2 pods by memory in shop",
        "hey, which 2 pods in the shop namespace eat the most memory?",
        "top 2 pods by memroy in shpo",
    ],
)
def test_the_heaviest_pods_come_from_metrics_heaviest_first(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    rows = asked.data["rows"]
    assert len(rows) == 2 and asked.data["total"] == 4  # the stuck pod has no metrics
    assert rows[0]["memory_mi"] >= rows[1]["memory_mi"]
    assert "one sample" in asked.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how many pods are running in shop", "4 pods running in shop (of 5)."),
        (
            "could you count the pods that are pending in the shop namespace?",
            "1 pod pending in shop",
        ),
        ("how many deploymnets are in shop", "2 Deployments in shop."),
    ],
)
def test_counts_are_the_clusters(
    asker: Asker, kubectl_shop: Kubectl, text: str, expected: str
) -> None:
    asked = ask(asker, text)
    assert asked.text.startswith(expected), asked.text
    assert len(running(kubectl_shop, "shop")) == 4


@pytest.mark.parametrize(
    ("text", "expected", "pods"),
    [
        ("how many pods does the web deployment have in shop?", "2 pods of web in shop.", None),
        ("list web's pods in shop", "2 pods of web in shop:", {"web"}),
        ("which pods belong to cache in shop", "1 pod of cache in shop:", {"cache"}),
        ("pods of deploy/api in shop", "1 pod of api in shop:", {"api"}),
        ("how many pods has frontend got in shop", "0 pods of frontend in shop.", None),
        ("list the pods of frontend in shop", "No pods of frontend in shop: no pod there", None),
    ],
)
def test_the_pods_of_one_workload_are_its_own(
    asker: Asker, text: str, expected: str, pods: set[str] | None
) -> None:
    asked = ask(asker, text)
    assert asked.text.startswith(expected), asked.text
    if pods is not None:
        owners = {name.rsplit("-", 2 if name.startswith(("web", "api")) else 1)[0]
                  for name in (o.split("/")[1] for o in objects(asked))}  # fmt: skip
        assert owners == pods, objects(asked)


@pytest.mark.parametrize(
    "text",
    [
        "which pods are not ready in shop",
        "are any of the pods in shop not ready?",
        "pods not ready in shpo",
    ],
)
def test_not_ready_lists_only_the_pods_that_are_not(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert objects(asked) == {"Pod shop/stuck"}


def test_a_big_namespace_shows_the_first_rows_and_says_how_many_more(asker: Asker) -> None:
    images = ask(asker, "what images run in bulk")
    assert images.data["total"] == 30 and images.data["shown"] == 10
    assert "(and 20 more images)" in images.text and len(images.text.splitlines()) == 12
    listed = ask(asker, "list the pods in bulk")
    assert listed.data["shown"] == 10 and "and 20 more pods" in listed.text
    assert len(listed.text.splitlines()) == 12


def test_an_agent_without_a_tool_says_what_it_could_not_see(
    shared_sandbox: Sandbox, tmp_path: Path, asker: Asker
) -> None:  # `asker` makes the shop it asks about, whichever test of the module runs first
    platform = Asker(shared_sandbox.kubeconfig, tmp_path, agent="platform")
    asked = platform.ask("which pods use the most memory in shop")
    assert asked.answered is not None and asked.data["sure"] is False
    assert "no `top` tool" in asked.text
    restarts = platform.ask("which pods restarted the most in shop")
    assert restarts.data["sure"] is True and "None of the 5 pods" in restarts.text


@pytest.fixture
def kubectl_shop(shared_sandbox: Sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(shared_sandbox.kubeconfig, tmp_path / "cache")
