"""Planned maintenance, batched and in its window, on a live sandbox: three reasons queued for
node-1 (a kernel upgrade, a firmware update, a GPU fault) make one entry and, once the sandbox's
clock enters the ChangePolicy window, one drain; before that the node is not touched. The drain
moves web (2 replicas, PDB minAvailable 1) without ever breaking its budget.
"""

from __future__ import annotations

from datetime import timedelta

from kubecrew.demo.scenes import NODE
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator, window_policy
from tests.support.kubectl import Kubectl
from tests.support.nodes import budget_watch, on_node_1, running
from tests.support.waiting import eventually

REASONS = ["kernel upgrade", "firmware update", "GPU fault"]


def test_three_reasons_wait_for_the_window_then_make_one_drain(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    on_node_1(kubectl, training=False)
    before = {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")}
    operator.policy("change", window_policy(sandbox, opens_in=timedelta(minutes=3)))

    asked = [
        operator.ask(f"plan maintenance of {NODE} for a kernel upgrade"),
        operator.ask(f"plan maintenance on node {NODE}: firmware update"),
        operator.ask(f"Plan maintenance of {NODE} because of a GPU fault."),
        operator.ask(f"plan maintenance of {NODE} for a kernel upgrade"),  # said twice: once
    ]
    assert [a.task for a in asked] == ["maintenance"] * 4
    entry = asked[-1].data["entry"]
    assert entry["node"] == NODE and entry["reasons"] == REASONS
    assert asked[-1].data["opens_at"], asked[-1].answer
    assert "window opens at" in asked[-1].answer and "2 pod(s)" in asked[-1].answer

    waiting = operator.patrol()
    [queued] = waiting.data["maintenance"]
    assert queued["status"] == "waiting-for-window", waiting.answer
    assert "waits for its window" in waiting.answer
    assert {"cordon", "propose", "drain"}.isdisjoint(operator.called())
    assert not kubectl.json("get", "node", NODE)["spec"].get("unschedulable")

    def entered() -> dict[str, object]:  # the sandbox clock runs 10x: minutes are seconds
        [found] = operator.patrol().data["maintenance"]
        return dict(found) if found["status"] != "waiting-for-window" else {}

    with budget_watch(kubectl) as budget:
        done = eventually(entered, timeout=50, what="the window opens on the sandbox clock")
    assert done["status"] == "out", done
    moved = done["migration"]
    assert isinstance(moved, dict) and moved["status"] == "drained", moved
    assert budget and all(h >= d and allowed >= 0 for h, d, allowed in budget)

    web = running(kubectl, "shop", "app=web")
    assert len(web) == 2 and all(p["spec"]["nodeName"] != NODE for p in web)
    assert not before & {p["metadata"]["uid"] for p in web}
    drains = [r for r in operator.mutations() if r.summary.startswith("drain:")]
    assert len(drains) == 1 and drains[0].result == "applied"  # one disruption for three reasons
    intent = operator.proposal(moved["proposal"])
    assert all(reason in intent.proposal.rationale for reason in REASONS)

    later = operator.patrol()  # out until someone uncordons it after the work
    assert [m["status"] for m in later.data["maintenance"]] == ["out"]
    kubectl("uncordon", NODE)
    back = operator.patrol()
    assert [m["status"] for m in back.data["maintenance"]] == ["done"]
    assert operator.patrol().data["maintenance"] == []
    assert len([r for r in operator.mutations() if r.summary.startswith("drain:")]) == 1
