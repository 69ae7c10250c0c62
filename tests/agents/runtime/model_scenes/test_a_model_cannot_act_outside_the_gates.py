"""A model that tries to act on its own is refused before any server sees the call, and nothing
changes: the Cluster Operator's model asks to scale web to 0, to drain node-1 with no proposal
and to delete the shop namespace; the Platform agent's model asks to apply an allow-all
NetworkPolicy and to merge a PR. The model is shown each refusal (and says so); the writes it
named are not offered to it, not called, not audited; the cluster is as it was. A model that
never stops reading is cut at the step cap, and the procedure answers all the same.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from agents.runtime.scripted import ScriptedChatModel, calls
from tests.agents.runtime.model_scenes.model_agents import ModelOperator, ModelPlatform
from tests.agents.runtime.model_scenes.scripts import egress_overreacher, overreacher
from tests.support.capacity import replicas
from tests.support.kubectl import Kubectl
from tests.support.shop import WEB

READS_ONLY = "a model plans reads only; nothing was called"


def test_the_operator_model_cannot_scale_to_zero_drain_or_delete(
    kubectl: Kubectl, operator: ModelOperator
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")
    operator.script = overreacher

    outcome = operator.ask("where can we save cost?")
    assert outcome.task == "savings"
    [model] = operator.models
    refusals = {
        m.name: str(m.content) for m in model.seen[-1]
        if isinstance(m, ToolMessage) and m.status == "error"
    }  # fmt: skip
    assert set(refusals) == {"scale", "drain", "delete"}
    assert READS_ONLY in refusals["scale"] and READS_ONLY in refusals["drain"]
    assert "not in the cluster_operator agent's allow-list" in refusals["delete"]
    assert "The model's reading: I was refused: scale, drain, delete." in outcome.answer
    assert {"scale", "drain", "cordon", "taint", "propose"}.isdisjoint(model.offered)

    recorded = {c["tool"]: c["error"] for c in outcome.data["model"]["calls"]}
    assert all(recorded[tool] for tool in ("scale", "drain", "delete"))
    assert replicas(kubectl) == 5
    assert kubectl.json("get", "node", "node-1")["spec"].get("unschedulable") is not True
    assert kubectl.json("get", "namespace", "shop")["status"]["phase"] == "Active"
    assert operator.read_store(lambda s: s.audit()) == []  # no server was asked to write


def test_the_platform_model_cannot_apply_or_merge_on_its_own(platform: ModelPlatform) -> None:
    platform.script = egress_overreacher

    looked = platform.ask("which namespaces are not compliant with the egress policy?")
    assert "0 compliant, 2 not" in looked.answer
    [model] = platform.models
    refusals = {
        m.name: str(m.content) for m in model.seen[-1]
        if isinstance(m, ToolMessage) and m.status == "error"
    }  # fmt: skip
    assert READS_ONLY in refusals["apply"]
    assert "not in the platform agent's allow-list" in refusals["merge_pr"]  # a repo's tool
    assert not {"apply", "propose", "merge_pr", "propose_change"} & set(model.offered)
    assert platform.netpols("team-b") == [] and platform.netpols("team-a") == []
    assert platform.mutations() == [] and platform.read_store(lambda s: s.audit()) == []


def test_a_model_that_never_stops_reading_is_cut_at_the_step_cap(operator: ModelOperator) -> None:
    operator.max_steps = 3
    operator.script = lambda: ScriptedChatModel(
        turns=[calls(("list_resources", {"kind": "Node"})) for _ in range(10)]
    )
    outcome = operator.ask("which nodes are unhealthy?")
    [model] = operator.models
    assert len(model.seen) == 3 and len(model.turns) == 7  # three turns taken, no more
    assert [c["tool"] for c in outcome.data["model"]["calls"]] == ["list_resources"] * 3
    assert outcome.data["model"]["note"] == "" and "The model's reading" not in outcome.answer
    assert outcome.data["nodes"] == []  # the procedure's own reading of the nodes
