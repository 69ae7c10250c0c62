"""A Kubernetes minor upgrade carried out on a sandbox of Cluster API pools: "upgrade the cluster
to 1.38" is planned and asked back, "yes" starts it; the control plane moves first, then the
canary pool (the GPU one, smallest), where a training Job holds its node until the Job
checkpoints, then the workers (the demo's workloads, `kubecrew.demo.upgrade`). A sampler reads
the web PodDisruptionBudget all along: its
healthy pods never fall below what it requires. At the end every node's kubelet and the API
server run v1.38. A wave whose new node joins NotReady is rolled back and the upgrade stops.
Checked on the objects the API server holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agents.cluster_operator.placement import MAX_SIZE
from kubecrew.demo.upgrade import WORKLOADS, budget_samples
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import (
    POOL_LABEL,
    cluster,
    control_plane,
    machine_deployment,
    template,
)
from tests.support.pool_world import nodeless
from tests.support.waiting import eventually

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox with no node of its own: every node comes from a pool `build` makes."""
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def build(kubectl: Kubectl, *, workers: int = 2, gpu: int = 1) -> None:
    objects = [
        cluster(),
        control_plane(version="v1.37.0"),
        template("standard", provision_seconds=5, cpu="4", memory="16Gi"),
        template("gpu", provision_seconds=5, cpu="8", memory="32Gi", gpus=1, taints=[GPU_TAINT]),
        machine_deployment("workers", replicas=workers),
    ]
    if gpu:
        objects.append(machine_deployment("gpu", replicas=gpu, template_name="gpu"))
    for obj in objects:
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(lambda: len(ready_nodes(kubectl)) == workers + gpu, what="the pools' nodes Ready")


def ready_nodes(kubectl: Kubectl) -> list[dict[str, Any]]:
    return [
        n
        for n in kubectl.json("get", "nodes")["items"]
        if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    ]


def test_the_cluster_is_upgraded_pool_by_pool_within_its_budgets(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl)
    kubectl("apply", "-f", "-", input=WORKLOADS)
    eventually(
        lambda: (
            kubectl.json("get", "deploy", "web", "-n", "shop")["status"].get("availableReplicas")
            == 3
        ),
        what="web available",
    )
    eventually(lambda: training_node(kubectl) != "", what="the training pod running")
    old_gpu_node = training_node(kubectl)
    operator = Operator(sandbox, tmp_path)

    planned = operator.ask("upgrade the cluster to 1.38", thread="up")

    assert "Reply 'yes' to start" in planned.answer, planned.answer
    assert "pool default/gpu (the canary)" in planned.answer, planned.answer
    assert operator.mutations() == []

    def web_budget() -> dict[str, Any]:
        return kubectl.json("get", "pdb", "web", "-n", "shop").get("status") or {}

    with budget_samples(web_budget) as seen:
        held = operator.ask("yes", thread="up")
        assert "waiting for training Job ml/train to checkpoint" in held.answer, held.answer
        assert server_minor(kubectl) == "38", held.answer
        assert training_node(kubectl) == old_gpu_node  # not evicted mid-run

        stamp = datetime.now(UTC).isoformat()
        kubectl("annotate", "job", "train", "-n", "ml", f"kubecrew.io/checkpointed-at={stamp}")
        done = operator.ask("continue the upgrade")

    assert done.answer.startswith("The cluster is upgraded to v1.38.0"), done.answer
    kubelets = {
        n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"]
        for n in kubectl.json("get", "nodes")["items"]
    }
    assert len(kubelets) == 3 and set(kubelets.values()) == {"v1.38.0"}, kubelets
    assert old_gpu_node not in kubelets
    for name in ("workers", "gpu"):
        md = kubectl.json("get", "machinedeployment", name)
        assert md["spec"]["template"]["spec"]["version"] == "v1.38.0"
        assert md["status"]["availableReplicas"] == md["spec"]["replicas"]
    assert seen, "the sampler read the budget"
    assert all(healthy >= desired for healthy, desired in seen), seen
    eventually(lambda: training_node(kubectl) not in ("", old_gpu_node), what="training resumed")
    hooked = [
        m["metadata"]["name"]
        for m in kubectl.json("get", "machines")["items"]
        if any(a.startswith("pre-drain.delete.hook") for a in m["metadata"].get("annotations", {}))
    ]
    assert hooked == []
    written = {r.summary.split(":")[0] for r in operator.mutations()}
    assert {"patch", "drain", "cordon"} <= written, written


def test_a_wave_whose_new_node_joins_not_ready_is_rolled_back(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl, workers=2, gpu=0)
    fault = {"kind": "node-joins-not-ready", "version": "v1.38.0", "count": 1}
    sandbox.call(lambda c: c.faults.add(fault))
    operator = Operator(sandbox, tmp_path)

    operator.ask("upgrade the cluster to v1.38", thread="up")
    stopped = operator.ask("yes", thread="up")

    assert "rolled back" in stopped.answer, stopped.answer
    assert "is not Ready after" in stopped.answer, stopped.answer
    md = kubectl.json("get", "machinedeployment", "workers")
    assert md["spec"]["template"]["spec"]["version"] == "v1.37.0"
    eventually(
        lambda: (
            sorted(
                n["status"]["nodeInfo"]["kubeletVersion"]
                for n in kubectl.json("get", "nodes", "-l", POOL_LABEL)["items"]
            )
            == ["v1.37.0", "v1.37.0"]
        ),
        what="the pool back on two v1.37 nodes",
    )
    again = operator.ask("how is the upgrade going?")
    assert "was stopped and its last wave rolled back" in again.answer, again.answer


def test_a_skipped_minor_and_a_pool_without_room_are_refused_before_anything_starts(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl, workers=2, gpu=0)
    operator = Operator(sandbox, tmp_path)
    operator.policy(
        "pool-cost",
        """\
apiVersion: kubecrew.io/v1alpha1
kind: CostPolicy
metadata: {name: pool-cost}
spec:
  selector: {kinds: [MachineDeployment]}
  underused: {below: 0.2, window: 1h}
  rules:
  - name: at-most-two-workers
    when: "has(action.replicas) && action.replicas.to > 2"
""",
    )

    skipped = operator.ask("upgrade the cluster to 1.39")
    no_room = operator.ask("upgrade the cluster to 1.38")

    assert skipped.answer.startswith("Not started"), skipped.answer
    assert "one minor version at a time" in skipped.answer
    assert no_room.answer.startswith("Not started"), no_room.answer
    assert "has no room for its surge of 1 machine(s) (2 -> 3)" in no_room.answer
    assert "at-most-two-workers" in no_room.answer
    assert operator.mutations() == []
    assert server_minor(kubectl) == "37"


@pytest.mark.parametrize("ceiling", ["max-size", "quota"])
def test_a_surge_past_the_pools_ceiling_is_refused_before_anything_starts(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path, ceiling: str
) -> None:
    """The infrastructure's ceiling, not only policy: a pool whose node group may hold no more
    machines than it has (the autoscaler's max size), or a ResourceQuota counting Machines."""
    build(kubectl, workers=2, gpu=0)
    if ceiling == "max-size":
        kubectl("annotate", "md/workers", f"{MAX_SIZE}=2")
        said = f"its max size is 2 machines ({MAX_SIZE})"
    else:
        quota = {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "machines", "namespace": "default"},
            "spec": {"hard": {"count/machines.cluster.x-k8s.io": "2"}},
        }
        kubectl("apply", "-f", "-", input=json.dumps(quota))
        said = "ResourceQuota default/machines allows 2 Machines in default and 3 would exist"
    operator = Operator(sandbox, tmp_path)

    refused = operator.ask("upgrade the cluster to 1.38")

    assert refused.answer.startswith("Not started"), refused.answer
    assert "has no room for its surge of 1 machine(s) (2 -> 3)" in refused.answer, refused.answer
    assert said in refused.answer, refused.answer
    assert operator.mutations() == []
    assert server_minor(kubectl) == "37"


def training_node(kubectl: Kubectl) -> str:
    pods = kubectl.json("get", "pods", "-n", "ml", "-l", "job-name=train")["items"]
    running = [p for p in pods if p["status"].get("phase") == "Running"]
    return str(running[0]["spec"].get("nodeName", "")) if running else ""


def server_minor(kubectl: Kubectl) -> str:
    return str(kubectl.json("version", "-o", "json")["serverVersion"]["minor"])


def change_window(name: str, day: str) -> str:
    return f"""\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {{name: {name}}}
spec:
  selector: {{kinds: [Node]}}
  maintenance:
    actions: [drain]
    windows: [{{name: {name}, days: [{day}], start: "01:00", end: "02:00", timezone: UTC}}]
"""


def test_windows_that_never_open_together_are_refused_before_anything_starts(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl, workers=2, gpu=0)
    operator = Operator(sandbox, tmp_path)
    operator.policy("pool-window", change_window("pool-window", "Mon"))

    one_window = operator.ask("upgrade the cluster to 1.38", thread="one")
    assert "never open together" not in one_window.answer, one_window.answer
    assert "Reply 'yes' to start" in one_window.answer, one_window.answer  # it waits, later

    operator.policy("org-window", change_window("org-window", "Thu"))
    two_windows = operator.ask("upgrade the cluster to 1.38", thread="two")

    assert two_windows.answer.startswith("Not started"), two_windows.answer
    assert "pool default/workers: the maintenance windows its nodes' drains wait for never " \
           "open together in the next 15 days" in two_windows.answer  # fmt: skip
    assert "pool-window" in two_windows.answer and "org-window" in two_windows.answer
    assert operator.mutations() == []
    assert server_minor(kubectl) == "37"


def test_an_upgrade_waiting_for_a_window_says_so_when_asked_how_it_goes(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl, workers=2, gpu=0)
    operator = Operator(sandbox, tmp_path)
    shut = (datetime.now(UTC) + timedelta(days=2)).strftime("%a")  # closed all through the test
    operator.policy("pool-window", change_window("pool-window", shut))
    operator.ask("upgrade the cluster to 1.38", thread="up")

    started = operator.ask("yes", thread="up")
    asked = operator.ask("how far along is the upgrade?")

    assert "waits for its maintenance window" in started.answer, started.answer
    assert "Waiting: pool default/workers waits for its maintenance window" in asked.answer, (
        asked.answer
    )
    assert not any("MachineDeployment" in m.subject for m in operator.mutations())
