"""The blast radius of maintenance, on a live sandbox: never more than one node out for
maintenance at once (the next waits until the first is uncordoned after its work), and never
more evictions in an hour than the ChangePolicy allows (node-1's two web pods against a limit
of one: the drain pauses and evicts nothing).
"""

from __future__ import annotations

from datetime import timedelta

from agents.runtime.contract import Outcome
from kubecrew.demo.scenes import NODE
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator, window_policy
from tests.support.kubectl import Kubectl
from tests.support.nodes import on_node_1, running


def cordoned(kubectl: Kubectl) -> list[str]:
    nodes = kubectl.json("get", "nodes")["items"]
    return sorted(n["metadata"]["name"] for n in nodes if n["spec"].get("unschedulable"))


def statuses(outcome: Outcome) -> dict[str, str]:
    return {m["node"]: m["status"] for m in outcome.data["maintenance"]}


def test_one_node_out_at_once(sandbox: Sandbox, kubectl: Kubectl, operator: Operator) -> None:
    operator.policy("change", window_policy(sandbox, opens_in=timedelta(minutes=-5)))
    operator.ask("plan maintenance of node-2 for a kernel upgrade")
    operator.ask("plan maintenance of node-3 for a kernel upgrade")

    first = operator.patrol()
    assert statuses(first) == {"node-2": "out", "node-3": "waiting-for-node"}, first.answer
    assert "at most 1 node(s) may be out at once" in first.answer
    assert cordoned(kubectl) == ["node-2"]
    assert statuses(operator.patrol()) == {"node-2": "out", "node-3": "waiting-for-node"}
    assert cordoned(kubectl) == ["node-2"]

    kubectl("uncordon", "node-2")  # the work on node-2 is done
    second = operator.patrol()
    assert statuses(second) == {"node-2": "done", "node-3": "out"}, second.answer
    assert cordoned(kubectl) == ["node-3"]


def test_the_hourly_eviction_limit_pauses_the_drain(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    on_node_1(kubectl, training=False)
    before = {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")}
    policy = window_policy(sandbox, opens_in=timedelta(minutes=-5), max_evictions_per_hour=1)
    operator.policy("change", policy)
    operator.ask(f"plan maintenance of {NODE} for a firmware update")

    outcome = operator.patrol()
    [entry] = outcome.data["maintenance"]
    assert entry["migration"]["status"] == "paused", outcome.answer
    assert "max-evictions-per-hour" in outcome.answer
    assert {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")} == before
    assert not [r for r in operator.mutations() if r.summary.startswith("drain:")]
