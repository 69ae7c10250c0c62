"""Consolidation in the capacity review, on a 3-node sandbox: the node whose pods request the
least, under 30% of its CPU and memory, is proposed for draining with the saving of giving it
back, when the other nodes can hold its pods; the ChangePolicy sends node drains to a person,
so nothing is cordoned or drained before a decision. When the other nodes are too full for its
pods, nothing is proposed.
"""

from __future__ import annotations

import pytest

from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.nodes import DRAINS_NEED_A_PERSON
from tests.support.waiting import eventually

NODES = ("node-1", "node-2", "node-3")
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: %(name)s, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: app
          image: "nginx:1.27"
          resources: {requests: {cpu: %(cpu)s, memory: %(memory)s}}
"""


def place(kubectl: Kubectl, node: str, name: str, *, cpu: str, memory: str) -> None:
    """One replica of `name` running on `node`: the other nodes are cordoned while it starts."""
    others = [n for n in NODES if n != node]
    for other in others:
        kubectl("cordon", other)
    kubectl("apply", "-f", "-", input=DEPLOYMENT % {"name": name, "cpu": cpu, "memory": memory})

    def running() -> bool:
        pods = kubectl.json("get", "pods", "-n", "shop", "-l", f"app={name}")["items"]
        return any(
            p["spec"].get("nodeName") == node and p["status"].get("phase") == "Running"
            for p in pods
        )

    eventually(running, what=f"{name} running on {node}")
    for other in others:
        kubectl("uncordon", other)


@pytest.fixture
def shop(kubectl: Kubectl, operator: Operator) -> Kubectl:
    operator.policy("change", DRAINS_NEED_A_PERSON)
    kubectl("create", "namespace", "shop")
    return kubectl


def cordoned(kubectl: Kubectl) -> list[str]:
    return [n for n in NODES if kubectl.json("get", "node", n)["spec"].get("unschedulable")]


def test_the_emptiest_underused_node_is_proposed_for_draining_with_its_saving(
    shop: Kubectl, operator: Operator
) -> None:
    place(shop, "node-1", "search", cpu="3", memory="8Gi")
    place(shop, "node-2", "tiny", cpu="100m", memory="128Mi")
    place(shop, "node-3", "small", cpu="500m", memory="1Gi")

    outcome = operator.capacity()
    [found] = outcome.data["consolidation"]
    assert found["node"] == "node-2", outcome.answer
    assert found["cpu"] < 0.3 and found["memory"] < 0.3
    assert [p.split("-")[0] for p in found["pods"]] == ["shop/tiny"]
    assert found["savings_per_month"] == 4 * 25.0 + 16 * 3.5  # the node's CPU and memory
    assert found["outcome"] == "escalated" and not found["queued"], outcome.answer
    record = operator.proposal(found["proposal"])
    assert record.proposal.action.type == "drain" and record.proposal.action.pods == 1
    assert str(record.proposal.action.target) == "Node node-2"
    assert "consolidate" in record.proposal.rationale
    assert [a.state for a in operator.approvals() if a.proposal == found["proposal"]] == ["pending"]
    assert cordoned(shop) == [] and {"cordon", "drain"}.isdisjoint(operator.called())
    assert "Consolidation: node node-2" in outcome.answer and "$156.00" in outcome.answer

    again = operator.capacity()  # the proposal is carried on, not made twice
    [kept] = again.data["consolidation"]
    assert kept["proposal"] == found["proposal"] and "propose" not in operator.called()


def test_nothing_is_proposed_when_the_other_nodes_cannot_hold_the_pods(
    shop: Kubectl, operator: Operator
) -> None:
    place(shop, "node-1", "search", cpu="3500m", memory="8Gi")
    place(shop, "node-3", "index", cpu="3500m", memory="8Gi")
    place(shop, "node-2", "tiny", cpu="1", memory="1Gi")

    outcome = operator.capacity()
    assert outcome.data["consolidation"] == [], outcome.answer
    assert "nothing to consolidate" in outcome.answer
    assert "propose" not in operator.called() and cordoned(shop) == []


def test_no_second_node_is_proposed_while_the_first_still_holds_its_pods(
    kubectl: Kubectl, operator: Operator
) -> None:
    """Drains need no person here, so the first proposal is approved and queued at once; until
    the patrol has drained it, its pods' new room is not known to be free, so the next review
    proposes no other node."""
    kubectl("create", "namespace", "shop")
    place(kubectl, "node-1", "search", cpu="3", memory="8Gi")

    first = operator.capacity()
    [queued] = first.data["consolidation"]
    assert queued["outcome"] == "approved" and queued["queued"], first.answer
    second = operator.capacity()
    assert second.data["consolidation"] == [], second.answer
    assert f"node {queued['node']} is queued and not yet drained" in second.answer
    assert "propose" not in operator.called() and cordoned(kubectl) == []


def test_two_schedulable_nodes_are_always_kept(kubectl: Kubectl, operator: Operator) -> None:
    """node-3 is cordoned: of the two nodes left, neither is given back, idle as they are."""
    kubectl("cordon", "node-3")
    outcome = operator.capacity()
    assert outcome.data["consolidation"] == [], outcome.answer
    assert "propose" not in operator.called()
