"""The Cluster Operator's own work asked in a newcomer's words reaches it, and is read as the
task it is: the cluster's version with any verb of change ("bump kubernetes to v1.38"),
patching, while a workload's image stays the Dev Team's. Words only: what each task does is
tested on a live sandbox beside it (test_cluster_upgrade.py, test_patching.py)."""

from __future__ import annotations

import pytest

from agents.cluster_operator.intents import read_question
from kubecrew.channels.frontdoor import route

UPGRADES = [
    "bump kubernetes to v1.38",
    "update kubernetes to 1.38",
    "move the cluster to 1.38",
    "take the cluster to the next minor",
    "upgrade the control plane to v1.38.0",
    "is the cluster ready for 1.38?",
    "which kubernetes version are we on, can we move to the next one?",
    "what version is the control plane running?",
    "is anything stopping us from going to 1.38?",
    "can we go to 1.38 next week?",
    "what keeps us from getting to the next minor?",
]
UNDER_WAY = [
    "how far along is the upgrade?",
    "is the upgrade done yet?",
    "what state is the upgrade in?",
    "how long will the upgrade take?",
    "finish the upgrade",
]
PATCHING = [
    "which nodes need patching?",
    "are any nodes below the patch policy?",
    "patch the nodes",
    "roll out the kernel patches to the workers pool",
    "are we up to date on security updates for the nodes?",
]
WORKLOADS = [
    "upgrade web to nginx 1.28",
    "move web to 1.27.3",
    "bump the api image to v1.38",
    "deploy my app to kubernetes",
    "why is my pod failing on kubernetes?",
    "can we move web to 1.38?",
    "should we bump the nginx image to 1.27?",
]


@pytest.mark.parametrize("text", UPGRADES)
def test_a_release_asked_for_in_any_words_is_the_cluster_upgrade(text: str) -> None:
    assert read_question(text)[0] == "upgrade-readiness", text
    assert route(text) == "cluster_operator", text
    assert route(text, current="dev_team") == "cluster_operator", text


@pytest.mark.parametrize("text", UNDER_WAY)
def test_the_upgrade_under_way_asked_about_or_carried_on_in_any_words(text: str) -> None:
    assert read_question(text)[0] == "upgrade", text
    assert route(text, current="dev_team") == "cluster_operator", text


@pytest.mark.parametrize("text", PATCHING)
def test_patching_words_reach_the_patch_findings(text: str) -> None:
    assert read_question(text)[0] == "patching", text
    assert route(text, current="dev_team") == "cluster_operator", text


@pytest.mark.parametrize("text", WORKLOADS)
def test_a_workload_is_the_dev_teams_whatever_version_it_names(text: str) -> None:
    assert route(text) == "dev_team", text


@pytest.mark.parametrize(
    "text",
    ["please grow the workers pool to 3 machines", "shrink the gpu pool to 1 node",
     "mark node-2 unschedulable", "put node-3 back into service",
     "prevent new pods from landing on node-3"],
)  # fmt: skip
def test_pools_and_nodes_reach_the_operator(text: str) -> None:
    assert route(text, current="dev_team") == "cluster_operator", text
