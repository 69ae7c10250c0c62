"""A request the Dev Team cannot read is answered with what it can do for the object the request
names (a workload, a Service, a ConfigMap, a node, a namespace), in that object's own name, and
changes nothing; each phrasing it teaches is one the crew reads as a request of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.dev_team import intents, prompts
from agents.runtime import requests
from sandbox.server import Sandbox
from tests.support.dev_team import Agent
from tests.support.kubectl import Kubectl

TAUGHT = re.compile(r"For (?P<object>.+?) I can, for example: (?P<examples>.+)\. Nothing changed\.")


@pytest.fixture
def agent(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Agent:
    kubectl("create", "namespace", "shop")
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "-n", "shop")
    kubectl("create", "configmap", "settings", "--from-literal=MODE=slow", "-n", "shop")
    return Agent(sandbox.kubeconfig, tmp_path / "home")


@pytest.mark.parametrize(
    ("asked", "named", "example"),
    [
        ("frobnicate web in shop", "Deployment web in shop", "'scale web to 3'"),
        ("bake node-2 please", "Node node-2", "'cordon node-2'"),
        ("juggle settings in shop", "ConfigMap settings in shop",
         "'set MODE=fast in the configmap settings'"),
        ("polish shop", "Namespace shop", "'what is running in shop?'"),
    ],
)  # fmt: skip
def test_a_miss_names_what_can_be_done_with_the_object_it_names(
    agent: Agent, kubectl: Kubectl, asked: str, named: str, example: str
) -> None:
    before = what_people_set(kubectl)

    told = agent.ask(asked)

    found = TAUGHT.search(told.answer)
    assert found is not None, told.answer
    assert found["object"] == named and example in found["examples"], told.answer
    assert what_people_set(kubectl) == before


def what_people_set(kubectl: Kubectl) -> list[object]:
    """The specs, data and labels of the objects a misread could change (not their status)."""
    listed = kubectl.json("get", "namespaces,deployments,configmaps,nodes", "-A")["items"]
    return [(o["kind"], o["metadata"]["name"], o["metadata"].get("labels"), o.get("spec"),
             o.get("data")) for o in listed]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(prompts.CAN_DO))
def test_every_phrasing_taught_is_read_as_a_request(kind: str) -> None:
    for example in prompts.CAN_DO[kind]:
        said = example.format(name="web").replace("<image:tag>", "nginx:1.28")
        said = said.replace("<workload>", "api").replace("<host>", "shop.example")
        said = said.replace("<namespace>", "shop")
        read = requests.read(said, namespace="shop")
        kind_read = intents.parse(said, namespace="shop").kind
        assert read is not None or kind_read != "unsupported", f"{kind}: {said!r} is not read"
