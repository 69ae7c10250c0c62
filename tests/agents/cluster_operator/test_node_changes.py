"""Cordon and uncordon asked in words (terse, chatty, with a typo in the node's name) reach the
Cluster Operator's one way of changing things: the policy store, a dry run, the gated write,
the node read back; checked on the node the API server holds."""

from __future__ import annotations

from kubecrew.demo.scenes import node_policy
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl


def unschedulable(kubectl: Kubectl, node: str) -> bool:
    return bool(kubectl.json("get", "node", node).get("spec", {}).get("unschedulable"))


def test_cordon_and_uncordon_as_people_ask(operator: Operator, kubectl: Kubectl) -> None:
    operator.policy("change", node_policy())
    for asked, cordoned in [
        ("cordon node-2", True),
        ("please uncordon node-2, the disk was replaced", False),
        ("could you cordon nod-2?", True),
    ]:
        outcome = operator.ask(asked)
        assert outcome.data.get("outcome") == "done", (asked, outcome.answer)
        assert unschedulable(kubectl, "node-2") is cordoned, asked
        assert not unschedulable(kubectl, "node-1")
    assert [c for c in operator.called() if c in ("cordon", "uncordon")] == ["cordon"] * 2


def test_a_node_that_does_not_exist_is_asked_about(operator: Operator, kubectl: Kubectl) -> None:
    outcome = operator.ask("cordon node-9000")
    assert "Which node?" in outcome.answer and "node-1" in outcome.answer
    assert not any(unschedulable(kubectl, n) for n in ("node-1", "node-2"))
