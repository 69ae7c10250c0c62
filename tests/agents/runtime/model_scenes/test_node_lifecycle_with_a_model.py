"""Scene 4, node lifecycle, with a model planning the patrol's reads: the model reads the nodes'
conditions, finds node-1's GPU fault, reads its drain plan (web's two pods under their budget,
the training pod) and the training pods, and says what draining would move. The patrol then
cordons, records the eviction intent, waits for the training Job's checkpoint and drains within
the PodDisruptionBudget exactly as with the deterministic brain: that test's own checks run
here unchanged (tests/support/nodes.py), planner aside.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from agents.runtime.scripted import shown
from kubecrew.demo.scenes import NODE
from sandbox.server import Sandbox
from tests.agents.runtime.model_scenes.model_agents import ModelOperator
from tests.agents.runtime.model_scenes.scripts import node_reader
from tests.support.kubectl import Kubectl
from tests.support.nodes import gpu_fault_moves_workloads_only_after_the_training_job_checkpoints


def test_the_gpu_node_is_drained_within_the_budget_after_the_checkpoint_when_a_model_plans(
    sandbox: Sandbox, kubectl: Kubectl, operator: ModelOperator
) -> None:
    operator.script = node_reader
    gpu_fault_moves_workloads_only_after_the_training_job_checkpoints(sandbox, kubectl, operator)

    first, *_ = operator.models[-4:]  # three patrols, then the drain preview
    plan = _plan(first.seen[-1])
    assert plan["node"] == NODE and plan["cordoned"] is False  # read before the patrol cordons
    evicted = sorted(p["pod"] for p in plan["pods"] if p["action"] == "evict")
    assert len(evicted) == 3 and sum(p.startswith("shop/web-") for p in evicted) == 2
    assert [b["pdb"] for b in plan["budgets"]] == ["shop/web"]
    training = shown(first.seen[-1], "list_resources")["items"]
    assert [p["name"][:6] for p in training] == ["train-"]
    assert not {"drain", "cordon", "propose", "taint"} & set(first.offered)
    for model in operator.models:  # nothing a model asked for was refused or failed
        answered = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
        assert all(m.status != "error" for m in answered)


def test_a_model_on_a_healthy_cluster_reads_the_nodes_and_the_patrol_moves_nothing(
    kubectl: Kubectl, operator: ModelOperator
) -> None:
    operator.script = node_reader
    outcome = operator.patrol()
    assert outcome.data["migrations"] == [] and outcome.data["nodes"] == []
    [model] = operator.models
    assert len(model.seen) == 2  # the nodes, then its answer: no drain plan to read
    assert "Every node reports healthy" in outcome.answer
    assert {"cordon", "drain", "propose"}.isdisjoint(operator.called())
    assert operator.mutations() == []


def _plan(seen: list[BaseMessage]) -> dict[str, Any]:
    return shown(seen, "drain_plan")
