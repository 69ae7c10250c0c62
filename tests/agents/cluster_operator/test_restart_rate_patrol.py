"""Rising restarts on one node: a crash-looping Deployment pinned to node-1 (nodeSelector)
restarts there while node-2 and node-3 stay quiet. The first patrol only records the counts;
once node-1's pods restarted at least `RISE` more times, the next patrol reports node-1 as
degrading with the pods and their restarts as evidence, and hands it to the migration path a
GPU fault takes: cordoned, drain plan, the eviction intent proposed. The test's ChangePolicy
sends every node drain to a person, so nothing is evicted before a decision, and a later
patrol carries on the same intent without proposing again.
"""

from __future__ import annotations

from agents.cluster_operator.restarts import RISE
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.nodes import DRAINS_NEED_A_PERSON
from tests.support.waiting import eventually

NODE = "node-1"
FLAKY = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: flaky, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: flaky}}
  template:
    metadata: {labels: {app: flaky}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-1}
      terminationGracePeriodSeconds: 1
      containers:
        - name: app
          image: busybox:1.36
          command: [sh, -c, "echo cannot reach the disk; exit 1"]
"""


def restarts_on_node_1(kubectl: Kubectl) -> int:
    pods = kubectl.json("get", "pods", "-n", "shop", "-l", "app=flaky")["items"]
    return sum(
        c.get("restartCount", 0)
        for p in pods
        if p["spec"].get("nodeName") == NODE
        for c in p["status"].get("containerStatuses") or []
    )


def test_restarts_rising_on_one_node_hand_it_to_the_migration_path(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("change", DRAINS_NEED_A_PERSON)
    kubectl("apply", "-f", "-", input=FLAKY)
    eventually(lambda: restarts_on_node_1(kubectl) >= 1, what="flaky crash-looping on node-1")

    first = operator.patrol()
    assert first.data["degrading"] == [] and first.data["restart_migrations"] == []
    assert "cordon" not in operator.called() and "propose" not in operator.called()
    seen = restarts_on_node_1(kubectl)
    eventually(
        lambda: restarts_on_node_1(kubectl) >= seen + RISE,
        what=f"{RISE} more restarts on node-1",
    )

    second = operator.patrol()
    [found] = second.data["degrading"]
    assert found["node"] == NODE and found["rise"] >= RISE and found["others"] == 0
    assert found["pods"] and all(p.startswith("shop/flaky-") for p in found["pods"])
    assert "restarts)" in found["pods"][0]
    [moved] = second.data["restart_migrations"]
    assert moved["status"] == "waiting-for-approval", second.answer
    assert kubectl.json("get", "node", NODE)["spec"].get("unschedulable") is True
    assert "drain" not in operator.called()
    intent = operator.proposal(moved["proposal"])
    assert intent.proposal.action.type == "drain" and intent.proposal.action.pods == 3
    assert "restarted" in intent.proposal.rationale and "shop/flaky-" in intent.proposal.rationale
    assert f"Node {NODE} is degrading" in second.answer
    for other in ("node-2", "node-3"):
        assert not kubectl.json("get", "node", other)["spec"].get("unschedulable")

    third = operator.patrol()  # the intent is carried on, not proposed again
    [again] = [m for m in third.data["restart_migrations"] if m["node"] == NODE]
    assert again["status"] == "waiting-for-approval" and again["proposal"] == moved["proposal"]
    assert {"propose", "drain"}.isdisjoint(operator.called())
