"""The fleet, on two live sandboxes: one kubeconfig names both as contexts (east: three idle
nodes; west: one node whose requests fill it, with pods left pending). The fleet survey reports
each cluster's node health and load, sees the imbalance and proposes, through the policy store,
moving some of west's replicas east; nothing is scaled in either cluster.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agents.cluster_operator import report
from agents.cluster_operator.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.errors import ToolFailed
from core.errors import PermissionDenied
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.fleet import fleet_kubeconfig
from tests.support.fleet_moves import BUSY, IDLE, pending, ready, replicas
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


def test_the_fleet_reports_imbalance_and_proposes_a_move(
    sandbox: Sandbox, west: Sandbox, operator: Operator, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("apply", "-f", "-", input=BUSY)

    def placed() -> bool:  # the scheduler has decided every pod: 3 on the node, 1 unschedulable
        pods = west_kubectl.json("get", "pods", "-n", "shop")["items"]
        bound = [p for p in pods if p["spec"].get("nodeName")]
        refused = [
            p
            for p in pods
            if any(c.get("reason") == "Unschedulable" for c in p["status"].get("conditions") or [])
        ]
        return len(pods) == 4 and len(bound) == 3 and len(refused) == 1

    eventually(
        placed,
        what="west's 4 api pods (3 fit, 1 pending)",
    )
    operator.kubeconfig = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
    )

    async def survey() -> Outcome:
        servers = operator.servers()
        async with conversation(
            servers, Deterministic(), home=operator.home, clusters=("east", "west")
        ) as talk:
            return await talk.fleet()

    outcome = anyio.run(survey)
    clusters = {c["cluster"]: c for c in outcome.data["clusters"]}
    assert clusters["east"]["nodes"] == 3 and clusters["west"]["nodes"] == 1
    assert clusters["east"]["load"] < 0.5 and clusters["west"]["load"] >= 0.8, outcome.answer
    assert clusters["west"]["pending"] == 1 and clusters["east"]["unhealthy"] == []
    assert outcome.data["imbalance"] is True

    [move] = outcome.data["moves"]
    assert (move["source"], move["target"], move["workload"]) == (
        "west",
        "east",
        "Deployment/shop/api",
    )
    assert move["replicas"] == 4 and move["moving"] == 2
    record = operator.proposal(move["proposal"])
    assert record.proposal.action.type == "scale"
    assert record.proposal.action.replicas is not None and record.proposal.action.replicas.to == 2
    assert "from cluster west" in record.proposal.rationale
    assert "to cluster east" in record.proposal.rationale
    assert (
        "proposed moving 2 replica(s)" in outcome.answer and "nothing was changed" in outcome.answer
    )

    again = anyio.run(survey)  # proposed once
    assert [m["proposal"] for m in again.data["moves"]] == [move["proposal"]]
    assert replicas(west_kubectl) == 4  # never acted
    assert [r for r in operator.mutations() if r.result == "applied"] == []


def test_a_decided_move_scales_the_target_up_first_then_the_source_down(
    sandbox: Sandbox, west: Sandbox, operator: Operator, kubectl: Kubectl, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("apply", "-f", "-", input=BUSY)
    kubectl("apply", "-f", "-", input=IDLE)  # the same service, one replica in east
    eventually(lambda: replicas(kubectl) == 1 and ready(kubectl) == 1, what="east's api ready")
    eventually(lambda: pending(west_kubectl) == 1, what="west's fourth api pod pending")
    operator.kubeconfig = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
    )

    async def survey() -> Outcome:
        async with conversation(
            operator.servers(), Deterministic(), home=operator.home, clusters=("east", "west")
        ) as talk:
            return await talk.fleet()

    outcome = anyio.run(survey)

    [move] = outcome.data["moves"]
    assert move["state"] == "done", outcome.answer
    assert (replicas(kubectl), replicas(west_kubectl)) == (3, 2), outcome.answer
    assert ready(kubectl) == 3 and pending(west_kubectl) == 0
    written = [r.summary for r in operator.mutations() if r.result == "applied"]
    assert [w.split(" under ")[0] for w in written] == [
        "scale: scale Deployment shop/api in cluster east 1 -> 3 replicas directly",
        "scale: scale Deployment shop/api in cluster west 4 -> 2 replicas directly",
    ], written  # the target first: never fewer replicas than before
    assert "moved: east scaled up and validated first" in outcome.answer
    told = [report.change_line(c) for c in report.changes(outcome.data)]
    assert [t.split(", proposal")[0] for t in told] == [
        "Deployment shop/api in cluster east: replicas 1 -> 3 by gated write (scale), a fleet move",
        "Deployment shop/api in cluster west: replicas 4 -> 2 by gated write (scale), a fleet move",
    ], told

    again = anyio.run(survey)  # done once: nothing more is written
    assert len([r for r in operator.mutations() if r.result == "applied"]) == 2
    assert again.data["imbalance"] is False

    async def borrowed() -> str:  # west's approval used on east's api of the same name
        async with conversation(operator.servers(), Deterministic(), home=operator.home) as talk:
            record = await talk.toolbox.call(
                "propose", action="scale", target="deployment/api", namespace="shop",
                from_replicas=2, replicas=1, rationale="west only", cluster="west",
            )  # fmt: skip
            try:
                await talk.toolbox.call("scale", name="api", namespace="shop", replicas=1,
                                        context="east", proposal=record["proposal"])  # fmt: skip
            except ToolFailed as refused:
                return refused.reason
            return "carried"

    refusal = anyio.run(borrowed)
    east, west = "Deployment shop/api in cluster east", "Deployment shop/api in cluster west"
    assert f"target {east}, not {west}" in refusal, refusal
    assert replicas(kubectl) == 3


def test_a_kube_server_for_a_fleet_acts_in_its_clusters_only(sandbox: Sandbox) -> None:
    settings = KubeSettings(kubeconfig=sandbox.kubeconfig, fleet=("east", "west"))
    with pytest.raises(PermissionDenied, match="context 'north' is not a cluster of this crew"):
        settings.check_context("north")
    assert settings.check_context("west") == "west"
    assert settings.check_context(None) is None  # the kubeconfig's current context


BARE_POD = """\
apiVersion: v1
kind: Namespace
metadata: {name: lab, labels: {kubecrew.io/team: lab}}
---
apiVersion: v1
kind: Pod
metadata: {name: scratch, namespace: lab}
spec:
  containers: [{name: shell, image: "busybox:1.36", command: [sleep, "3600"]}]
"""


def test_upgrade_readiness_is_reported_per_cluster(
    sandbox: Sandbox, west: Sandbox, operator: Operator, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("apply", "-f", "-", input=BARE_POD)  # a drain would delete it for good
    operator.kubeconfig = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
    )

    async def ask() -> Outcome:
        async with conversation(
            operator.servers(), Deterministic(), home=operator.home, clusters=("east", "west")
        ) as talk:
            return await talk.ask("are we ready to upgrade to 1.38?")

    outcome = anyio.run(ask)

    east, west_found = outcome.data["clusters"]
    assert (east["cluster"], west_found["cluster"]) == ("east", "west")
    assert not [f for f in east["findings"] if f["severity"] == "blocker"], east
    blocking = [f for f in west_found["findings"] if f["severity"] == "blocker"]
    assert [(f["kind"], f["what"], f["team"]) for f in blocking] == [
        ("unmanaged-pod", "pod lab/scratch", "lab")
    ]
    assert "Cluster east: Ready to upgrade v1.37.0 to v1.38" in outcome.answer, outcome.answer
    assert "Cluster west: Not ready to upgrade v1.37.0 to v1.38: 1 blocker(s)" in outcome.answer
    assert operator.mutations() == []
