"""Scene 4, node lifecycle: a GPU node reports a hardware fault and the Cluster Operator moves
its workloads off by intent, deterministic brain, on a live sandbox.

node-1 runs the shop's `web` (2 replicas under a PodDisruptionBudget of minAvailable 1) and a
training Job. After `gpu-fault` on node-1, the first patrol cordons it, plans the drain, records
the eviction intent as a drain proposal (the owners' policies approve it) and stops: the training
Job has not checkpointed, so nothing is evicted. Once the Job sets `kubecrew.io/checkpointed-at`,
the next patrol drains under the proposal, one web pod at a time (the budget is sampled all
along and never broken), and validates that web is healthy elsewhere. With a blast radius
smaller than the node's pods, the patrol pauses and evicts nothing. The first scene and its
checks: tests/support/nodes.py, which the model-planned twin runs too.
"""

from __future__ import annotations

from kubecrew.demo.scenes import NODE, node_policy
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.nodes import (
    gpu_fault_moves_workloads_only_after_the_training_job_checkpoints,
    on_node_1,
    running,
)
from tests.support.waiting import eventually


def test_gpu_fault_moves_workloads_only_after_the_training_job_checkpoints(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    gpu_fault_moves_workloads_only_after_the_training_job_checkpoints(sandbox, kubectl, operator)


def test_the_blast_radius_pauses_a_drain_that_would_exceed_it(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("change", node_policy(1))
    on_node_1(kubectl, training=False)
    before = {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")}
    sandbox.call(lambda cluster: cluster.faults.add({"kind": "gpu-fault", "node": NODE}))
    eventually(lambda: operator.patrol().data["migrations"], what="the patrol sees the GPU fault")
    outcome = operator.patrol()
    [moved] = outcome.data["migrations"]
    assert moved["status"] == "paused", outcome.answer
    assert "max-evictions-per-hour" in outcome.answer
    assert {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")} == before
    assert not [r for r in operator.mutations() if r.summary.startswith("drain:")]
    assert kubectl.json("get", "node", NODE)["spec"].get("unschedulable") is True
