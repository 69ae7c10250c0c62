"""Events and the cluster at a glance, asked in people's words on a sandbox: Warnings of a
Deployment whose image does not exist, the events of one workload (its pods' included, nobody
else's), and the overview (version, nodes, what is unhealthy) checked against kubectl; never
writing anything."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker, writing_nothing
from tests.support.waiting import eventually

NAMESPACE = "seen"


@pytest.fixture(scope="module")
def kubectl(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    kubectl("create", "namespace", NAMESPACE)
    kubectl("create", "deployment", "web", "--image=nginx:0.0.0-no-such-tag", "-n", NAMESPACE)
    kubectl("create", "deployment", "api", "--image=nginx:1.27", "-n", NAMESPACE)

    def settled() -> bool:
        events = kubectl.json("get", "events", "-n", NAMESPACE)["items"]
        pulled = {e["involvedObject"]["name"].rsplit("-", 2)[0] for e in events
                  if e["reason"] in ("Pulled", "Started")}  # fmt: skip
        failed = any(e["type"] == "Warning" and e["involvedObject"]["name"].startswith("web-")
                     for e in events)  # fmt: skip
        return "api" in pulled and failed

    eventually(settled, what="api started and web's image pull failing")
    return kubectl


@pytest.fixture(scope="module")
def asker(
    kubectl: Kubectl, shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Asker]:
    home = tmp_path_factory.mktemp("home")
    yield from writing_nothing(Asker(shared_sandbox.kubeconfig, home, agent="cluster_operator"))


def ask(asker: Asker, text: str, family: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [] and asked.data["family"] == family, asked.text
    return asked


@pytest.mark.parametrize(
    "text",
    [
        f"show me the warnings in the {NAMESPACE} namespace",
        f"any warning events in {NAMESPACE}?",
        f"kubectl get events -n {NAMESPACE}, warnings only",
    ],
)
def test_warnings_of_a_namespace_are_its_warning_events(asker: Asker, text: str) -> None:
    asked = ask(asker, text, "events")
    rows = asked.data["rows"]
    assert rows and {row["type"] for row in rows} == {"Warning"}, asked.text
    assert all(row["namespace"] == NAMESPACE for row in rows)
    assert any(row["object"].startswith("Pod/web-") for row in rows)
    assert "Warning" in asked.text and "Pod web-" in asked.text


def test_the_events_of_a_workload_are_its_pods_and_replica_sets_and_no_one_elses(
    asker: Asker, kubectl: Kubectl
) -> None:
    asked = ask(asker, f"what events did api have in {NAMESPACE}?", "events")
    objects = {row["object"] for row in asked.data["rows"]}
    assert objects and all(o.split("/")[1].startswith("api") for o in objects), objects
    assert any(o.startswith("Pod/api-") for o in objects)
    mine = [e for e in kubectl.json("get", "events", "-n", NAMESPACE)["items"]
            if e["involvedObject"]["name"].startswith("api")]  # fmt: skip
    assert asked.data["total"] == len(mine)
    assert ask(asker, f"events of nothing-here in {NAMESPACE}", "events").data["rows"] == []


@pytest.mark.parametrize(
    "text", ["give me an overview of the cluster", "how is the cluster doing?", "cluster status"]
)
def test_the_overview_matches_what_kubectl_shows(asker: Asker, kubectl: Kubectl, text: str) -> None:
    asked = ask(asker, text, "overview")
    nodes = kubectl.json("get", "nodes")["items"]
    version = kubectl.json("version")["serverVersion"]["gitVersion"]
    assert asked.data["total"] == len(nodes)
    assert asked.data["server_version"] == version and version in asked.text
    unhealthy = {(d["namespace"], d["name"]) for d in asked.data["unhealthy_deployments"]}
    assert (NAMESPACE, "web") in unhealthy and (NAMESPACE, "api") not in unhealthy
    assert f"Deployment {NAMESPACE}/web" in asked.text
