"""History questions answered from rollout revisions, events and the audit log of a live
namespace, each in three phrasings (terse, chatty, a typo in a name): what changed in a
namespace (and nothing of another), what changed to one object, and a Deployment's rollout
history. Asking writes nothing: the audit log holds only the one write the test made."""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import pytest

from agents.runtime.roles import load_role
from agents.runtime.toolbox import open_toolbox
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker, objects

WEB = "Deployment staging/web"


def deployment(name: str, namespace: str, image: str) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": name, "image": image}],
                },
            },
        },
    }


@pytest.fixture(scope="module")
def asker(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Asker]:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    for namespace in ("staging", "shop"):
        kubectl("create", "namespace", namespace)
    items = [
        deployment("web", "staging", "nginx:1.26"),
        deployment("api", "shop", "nginx:1.27"),
        deployment("broken", "staging", "nginx:9.99"),
    ]
    kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    )
    for image in ("nginx:1.27", "nginx:1.28"):
        kubectl("rollout", "status", "deployment/web", "-n", "staging", "--timeout=60s")
        kubectl("set", "image", "deployment/web", f"web={image}", "-n", "staging")
    kubectl("rollout", "status", "deployment/web", "-n", "staging", "--timeout=60s")
    asker = Asker(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("home"))

    async def scale() -> None:  # one gated write, which the audit log records
        async with open_toolbox(load_role("dev_team"), asker.servers) as toolbox:
            await toolbox.call("scale", name="web", namespace="staging", replicas=2)

    anyio.run(scale)
    assert len(asker.mutations()) == 1
    yield asker
    assert len(asker.mutations()) == 1  # the questions added none


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [], asked.writes
    return asked


@pytest.mark.parametrize(
    "text",
    [
        "what changed in staging in the last hour",
        "hey, did anything happen in the staging namespace today?",
        "what changed in stagign in the last hour",
    ],
)
def test_a_namespaces_changes_are_its_revisions_writes_and_warnings(
    asker: Asker, text: str
) -> None:
    asked = ask(asker, text)
    assert objects(asked) == {WEB, "Deployment staging/broken"}  # nothing of shop
    sources = {(r["object"], r.get("source")) for r in asked.data["rows"] if "object" in r}
    assert {(WEB, "rollout"), (WEB, "audit"), ("Deployment staging/broken", "rollout")} <= sources
    revisions = [
        r["what"] for r in asked.data["rows"] if r.get("source") == "rollout" and r["object"] == WEB
    ]
    assert len(revisions) == 3 and "revision 3 rolled out (nginx:1.28)" in asked.text
    assert asked.data["events"]["warnings"] >= 1 and "broken" in asked.text
    assert "scale" in asked.text and "(applied)" in asked.text
    assert asked.data["sure"], asked.text


@pytest.mark.parametrize(
    "text",
    [
        "recent changes to web in staging",
        "so what happened to the web deployment in staging lately?",
        "what changed to wbe in staging",
    ],
)
def test_an_objects_changes_are_its_own(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert asked.data["target"] == WEB
    assert objects(asked) == {WEB}
    assert len([r for r in asked.data["rows"] if r.get("source") == "rollout"]) == 3
    assert any(r.get("source") == "audit" for r in asked.data["rows"])
    assert "broken" not in asked.text


@pytest.mark.parametrize(
    "text",
    [
        "rollout history of web in staging",
        "could you show me the revisions of web in staging please?",
        "rollout history of wbe",
    ],
)
def test_the_rollout_history_lists_the_revisions_newest_first(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    rows = asked.data["rows"]
    assert [r["revision"] for r in rows] == [3, 2, 1]
    assert [r["images"] for r in rows] == [["nginx:1.28"], ["nginx:1.27"], ["nginx:1.26"]]
    assert "revision 3 (current): nginx:1.28" in asked.text


def test_a_name_that_matches_nothing_lists_what_exists(asker: Asker) -> None:
    asked = ask(asker, "recent changes to checkout in staging")
    assert asked.data["clarify"] is True
    assert "nothing called 'checkout'" in asked.text and WEB in asked.text
