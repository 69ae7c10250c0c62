"""Cordon and uncordon asked in words (terse, chatty, with a typo in the node's name) reach the
Cluster Operator's one way of changing things: the policy store, a dry run, the gated write,
the node read back; checked on the node the API server holds."""

from __future__ import annotations

from typing import Any

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


def test_scheduling_said_without_cordon(operator: Operator, kubectl: Kubectl) -> None:
    operator.policy("change", node_policy())
    for asked, cordoned in [
        ("mark node-2 unschedulable", True),
        ("make node-2 schedulable again", False),
        ("stop scheduling new pods on node-2", True),
        ("put node-2 back into service", False),
        ("take node-2 out of rotation", True),
        ("resume scheduling on node-2", False),
    ]:
        outcome = operator.ask(asked)
        assert outcome.data.get("outcome") == "done", (asked, outcome.answer)
        assert unschedulable(kubectl, "node-2") is cordoned, asked
        assert not unschedulable(kubectl, "node-1"), asked
    assert [c for c in operator.called() if c in ("cordon", "uncordon")] == ["uncordon"] * 2
    assert len(operator.mutations()) == 6  # one audited write per request, none more


def test_a_node_that_does_not_exist_is_asked_about(operator: Operator, kubectl: Kubectl) -> None:
    outcome = operator.ask("cordon node-9000")
    assert "Which node?" in outcome.answer and "node-1" in outcome.answer
    assert not any(unschedulable(kubectl, n) for n in ("node-1", "node-2"))


def taints(kubectl: Kubectl, node: str) -> list[dict[str, str]]:
    return list(kubectl.json("get", "node", node).get("spec", {}).get("taints") or [])


def test_taints_and_labels_as_people_ask(operator: Operator, kubectl: Kubectl) -> None:
    operator.policy("change", node_policy())
    for asked, wanted in [
        ("taint node-1 dedicated=gpu:NoSchedule",
         [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        ("please remove the dedicated taint from node-1", []),
        ("could you taint nod-1 with team=ml:PreferNoSchedule?",
         [{"key": "team", "value": "ml", "effect": "PreferNoSchedule"}]),
    ]:  # fmt: skip
        outcome = operator.ask(asked)
        assert outcome.data.get("outcome") == "done", (asked, outcome.answer)
        assert [{k: t[k] for k in ("key", "value", "effect")} for t in taints(kubectl, "node-1")
                if not t["key"].startswith("node.kubernetes.io/")] == wanted, asked  # fmt: skip
    assert taints(kubectl, "node-2") == []
    outcome = operator.ask("label node-2 disktype=ssd")
    assert outcome.data.get("outcome") == "done", outcome.answer
    assert kubectl.json("get", "node", "node-2")["metadata"]["labels"]["disktype"] == "ssd"


def test_a_drain_is_asked_back_and_done_only_after_yes(
    operator: Operator, kubectl: Kubectl
) -> None:
    operator.policy("change", node_policy(100, person_over=100))
    asked = operator.ask("drain node-3", thread="d")
    assert asked.clarifying and "reply 'yes'" in asked.answer, asked.answer
    assert not unschedulable(kubectl, "node-3") and operator.mutations() == []
    done = operator.ask("yes", thread="d")
    assert done.data.get("outcome") == "done", done.answer
    assert unschedulable(kubectl, "node-3")
    pods = kubectl.json("get", "pods", "-A", "--field-selector=spec.nodeName=node-3")["items"]
    moved = [p for p in pods if not _daemon(p)]
    assert all(p["metadata"].get("deletionTimestamp") for p in moved), moved


def _daemon(pod: dict[str, Any]) -> bool:
    owners = pod["metadata"].get("ownerReferences") or []
    return any(owner["kind"] == "DaemonSet" for owner in owners)
