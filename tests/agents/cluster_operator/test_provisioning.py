"""Provisioning in the patrol, on a sandbox whose nodes all come from two Cluster API pools:
`workers` (4 CPU, one machine) and `gpu` (8 CPU and one GPU, tainted nvidia.com/gpu, scaled to
zero and described by its scale-from-zero annotations). Pods the scheduler cannot place grow
the cheapest pool that holds them, through a proposal and the gated scale, and then run there; a
pod no pool can hold changes nothing and is explained; a scale-up is not proposed twice while
its nodes come; a CostPolicy capping the pool refuses it, citing the rule, once; one a person
must approve waits for them, asked once, and grows the pool once granted. Judged on the cluster:
the MachineDeployments' replicas and where the pods run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from agents.cluster_operator import report
from core.policy.settings import PolicySettings
from mcp_servers.policy.server import build
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer
from tests.support.pool_world import (
    GPU_TOLERATION,
    MAX_SIZE,
    nodeless,
    pods,
    pool_of,
    pools,
    ready,
    replicas,
    run,
    unschedulable,
)
from tests.support.waiting import eventually

CAPPED = """\
apiVersion: kubecrew.io/v1alpha1
kind: CostPolicy
metadata: {name: pool-budget}
spec:
  selector: {kinds: [MachineDeployment]}
  underused: {below: 0.2, window: 1h}
  rules:
    - name: at-most-two-machines
      actions: [scale]
      when: 'action.replicas.to > 2'
      message: a node pool runs at most two machines
"""

SRE_GROWS_POOLS = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: pool-changes}
spec:
  selector: {kinds: [MachineDeployment]}
  approvals:
    - name: pool-growth
      actions: [scale]
      approvers: {groups: [sre]}
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """No nodes of its own: every node is a pool's."""
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def grant_as_alice(operator: Operator, request: str) -> dict[str, Any]:
    settings = PolicySettings(
        policies=(operator.policies,), store=str(operator.store), person="alice", groups=("sre",)
    )

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            arguments = {"request_id": request, "verdict": "grant"}
            return answer(await session.call_tool("answer_approval", arguments))

    return anyio.run(go)


def scale_proposals(operator: Operator) -> list[str]:
    listed = operator.read_store(lambda s: s.list())
    return [p.id for p in listed if p.action.type == "scale"]


def test_pending_cpu_pods_grow_the_workers_pool_not_the_gpu_pool_and_then_run(
    kubectl: Kubectl, operator: Operator
) -> None:
    pools(kubectl)
    run(kubectl, "batch", replicas=3, cpu="3")  # one fits the first node, two wait
    run(kubectl, "tolerant", cpu="2", tolerations=[GPU_TOLERATION])  # fits gpu too: costs more
    eventually(lambda: unschedulable(kubectl) == 3, what="three pods Unschedulable")

    outcome = operator.patrol()

    found = outcome.data["provisioning"]
    assert len(found["waiting"]) == 3 and found["unfit"] == [], outcome.answer
    [grown] = found["scale_ups"]
    assert grown["pool"] == "default/workers", outcome.answer
    assert (grown["replicas_from"], grown["replicas_to"], grown["applied"]) == (1, 4, 4)
    assert grown["outcome"] == "approved" and grown["status"] == "validated", outcome.answer
    record = operator.proposal(grown["proposal"])
    action = record.proposal.action
    assert str(action.target) == "MachineDeployment default/workers"
    assert action.replicas is not None and (action.replicas.from_, action.replicas.to) == (1, 4)
    assert "shop/tolerant-" in record.proposal.rationale
    assert "Insufficient cpu" in record.proposal.rationale
    assert "Provisioning: 3 pod(s) wait for a node." in outcome.answer
    assert "joined Ready" in outcome.answer
    [told] = [c for c in report.changes(outcome.data) if c["target"].startswith("Machine")]
    assert report.change_line(told).startswith(
        "MachineDeployment default/workers: replicas 1 -> 4 by gated write (scale)"
    ), told

    assert (replicas(kubectl, "workers"), replicas(kubectl, "gpu")) == (4, 0)
    eventually(lambda: all(p["phase"] == "Running" for p in pods(kubectl)), what="pods Running")
    assert {pool_of(kubectl, p["node"]) for p in pods(kubectl)} == {"workers"}
    assert ready(kubectl, "workers") == 4

    again = operator.patrol()  # nothing waits: nothing is read or proposed
    assert again.data["provisioning"] == {"waiting": [], "scale_ups": [], "unfit": []}
    assert "propose" not in operator.called() and "Provisioning" not in again.answer
    assert scale_proposals(operator) == [grown["proposal"]]


def test_a_gpu_pod_grows_the_gpu_pool_from_zero(kubectl: Kubectl, operator: Operator) -> None:
    pools(kubectl)
    run(kubectl, "train", cpu="2", gpu=1, tolerations=[GPU_TOLERATION],
        nodeSelector={"accelerator": "nvidia"})  # fmt: skip
    eventually(lambda: unschedulable(kubectl) == 1, what="the GPU pod Unschedulable")

    outcome = operator.patrol()

    [grown] = outcome.data["provisioning"]["scale_ups"]
    assert (grown["pool"], grown["replicas_from"], grown["applied"]) == ("default/gpu", 0, 1)
    assert grown["status"] == "validated", outcome.answer
    assert (
        "read from its scale-from-zero annotations"
        in operator.proposal(grown["proposal"]).proposal.rationale
    )
    assert (replicas(kubectl, "workers"), replicas(kubectl, "gpu")) == (1, 1)
    eventually(lambda: pods(kubectl)[0]["phase"] == "Running", what="the GPU pod Running")
    assert pool_of(kubectl, pods(kubectl)[0]["node"]) == "gpu"


def test_a_pod_no_pool_can_hold_changes_nothing_and_is_explained(
    kubectl: Kubectl, operator: Operator
) -> None:
    pools(kubectl, workers_annotations={MAX_SIZE: "1"})
    run(kubectl, "huge", cpu="2", gpu=4, tolerations=[GPU_TOLERATION])
    run(kubectl, "pinned", cpu="100m", nodeSelector={"disktype": "ssd"})
    run(kubectl, "batch", replicas=2, cpu="3")  # one runs; the other needs a second worker
    eventually(lambda: unschedulable(kubectl) == 3, what="three pods Unschedulable")

    outcome = operator.patrol()

    found = outcome.data["provisioning"]
    assert found["scale_ups"] == [] and len(found["unfit"]) == 3, outcome.answer
    why = {u["pod"].split("/")[1].split("-")[0]: u["why"] for u in found["unfit"]}
    assert why["huge"].startswith("no pool has a node with 4 GPUs (the most: 1 GPU, pool "), why
    assert "lack the labels of the pod's nodeSelector" in why["pinned"], why
    assert why["batch"] == "the pools it fits are at their max size: default/workers (1)", why
    assert "no pool was grown for it: no pool has a node with 4 GPUs" in outcome.answer
    assert {"propose", "scale"}.isdisjoint(operator.called())
    assert (replicas(kubectl, "workers"), replicas(kubectl, "gpu")) == (1, 0)


def test_a_second_patrol_while_the_nodes_come_does_not_propose_again(
    kubectl: Kubectl, operator: Operator
) -> None:
    pools(kubectl, gpu_provision_seconds=3600)  # the GPU machine takes an hour
    run(kubectl, "train", cpu="2", gpu=1, tolerations=[GPU_TOLERATION])
    eventually(lambda: unschedulable(kubectl) == 1, what="the GPU pod Unschedulable")

    first = operator.patrol()
    [grown] = first.data["provisioning"]["scale_ups"]
    assert grown["status"] == "waiting-for-nodes" and grown["applied"] == 1, first.answer
    assert "0 of 1 new node(s) joined Ready" in first.answer

    second = operator.patrol()

    [carried] = second.data["provisioning"]["scale_ups"]
    assert carried["proposal"] == grown["proposal"], second.answer
    assert carried["status"] == "waiting-for-nodes", second.answer
    assert "still coming" in second.answer
    assert {"propose", "scale"}.isdisjoint(operator.called())
    assert scale_proposals(operator) == [grown["proposal"]] and replicas(kubectl, "gpu") == 1


def test_a_cost_policy_capping_the_pool_refuses_the_scale_up_once(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("pool-budget", CAPPED)
    pools(kubectl)
    run(kubectl, "batch", replicas=3, cpu="3")
    eventually(lambda: unschedulable(kubectl) == 2, what="two pods Unschedulable")

    first = operator.patrol()
    [refused] = first.data["provisioning"]["scale_ups"]
    assert (refused["replicas_to"], refused["status"]) == (3, "rejected"), first.answer
    assert refused["applied"] is None and "at-most-two-machines" in first.answer, first.answer
    assert "scale" not in operator.called()

    second = operator.patrol()
    [kept] = second.data["provisioning"]["scale_ups"]
    assert (kept["proposal"], kept["status"]) == (refused["proposal"], "rejected")
    assert "rejected earlier" in second.answer and "propose" not in operator.called()
    assert replicas(kubectl, "workers") == 1 and unschedulable(kubectl) == 2


def test_a_scale_up_a_person_must_approve_waits_for_them_then_grows_the_pool(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("pool-changes", SRE_GROWS_POOLS)
    pools(kubectl)
    run(kubectl, "batch", replicas=2, cpu="3")
    eventually(lambda: unschedulable(kubectl) == 1, what="one pod Unschedulable")

    first = operator.patrol()
    [asked] = first.data["provisioning"]["scale_ups"]
    assert asked["status"] == "waiting-for-approval" and asked["applied"] is None, first.answer
    [request] = [a for a in operator.approvals() if a.proposal == asked["proposal"]]
    assert request.state == "pending" and "scale" not in operator.called()

    waiting = operator.patrol()  # not granted yet: asked once, nothing scaled
    [kept] = waiting.data["provisioning"]["scale_ups"]
    assert (kept["proposal"], kept["status"]) == (asked["proposal"], "waiting-for-approval")
    assert {"propose", "scale"}.isdisjoint(operator.called()) and replicas(kubectl, "workers") == 1

    grant_as_alice(operator, request.id)
    granted = operator.patrol()

    [grown] = granted.data["provisioning"]["scale_ups"]
    assert grown["applied"] == 2 and grown["approved_by"].startswith("person alice"), granted.answer
    assert grown["status"] == "validated", granted.answer
    assert replicas(kubectl, "workers") == 2 and "propose" not in operator.called()
    eventually(lambda: all(p["phase"] == "Running" for p in pods(kubectl)), what="pods Running")
