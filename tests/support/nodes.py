"""The Cluster Operator's node lifecycle as its deterministic tests and their model-planned
twin (tests/agents/runtime/model_scenes) both run it, so the same checks hold whoever plans.

Scene 4: `on_node_1` puts web's two pods (under a PodDisruptionBudget) and, if asked, a training
Job on node-1; a GPU fault there moves them off only once the Job has checkpointed, within the
budget `budget_watch` samples all along. `running` lists a selector's Ready pods;
`DRAINS_NEED_A_PERSON` is a node ChangePolicy that sends every drain to a person.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kubecrew.demo.scenes import NODE, TRAINING_JOB, WEB_WITH_PDB, node_policy
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

DRAINS_NEED_A_PERSON = node_policy(20, person_over=0, rule="every-drain")


def running(kubectl: Kubectl, namespace: str, selector: str) -> list[dict[str, Any]]:
    items = kubectl.json("get", "pods", "-n", namespace, "-l", selector)["items"]
    return [
        p for p in items
        if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") == "Running"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
    ]  # fmt: skip


def on_node_1(kubectl: Kubectl, *, training: bool) -> None:
    """web's two pods (and the training pod) running on node-1: the other nodes are cordoned
    while they start."""
    for other in ("node-2", "node-3"):
        kubectl("cordon", other)
    kubectl("apply", "-f", "-", input=WEB_WITH_PDB + ("---\n" + TRAINING_JOB if training else ""))

    def placed() -> bool:
        web = running(kubectl, "shop", "app=web")
        jobs = running(kubectl, "ml", "kubecrew.io/workload-class=training")
        return (
            len(web) == 2 and len(jobs) == (1 if training else 0)
            and all(p["spec"]["nodeName"] == NODE for p in web + jobs)
        )  # fmt: skip

    eventually(placed, what="web and the training pod running on node-1")
    eventually(
        lambda: (kubectl.json("get", "pdb", "web", "-n", "shop").get("status") or {}).get(
            "disruptionsAllowed"
        ),
        what="the web budget allows one disruption",
    )
    for other in ("node-2", "node-3"):
        kubectl("uncordon", other)


@contextmanager
def budget_watch(kubectl: Kubectl) -> Iterator[list[tuple[int, int, int]]]:
    """(currentHealthy, desiredHealthy, disruptionsAllowed) of web's budget, sampled until the
    block ends: the drain may never take web below what the budget promises."""
    seen: list[tuple[int, int, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            status = kubectl.json("get", "pdb", "web", "-n", "shop")["status"]
            seen.append(
                (status["currentHealthy"], status["desiredHealthy"], status["disruptionsAllowed"])
            )
            stop.wait(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


def gpu_fault_moves_workloads_only_after_the_training_job_checkpoints(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    """The scene of tests/agents/cluster_operator/test_gpu_node_migration.py, whoever plans."""
    operator.policy("change", node_policy(10))
    on_node_1(kubectl, training=True)
    before = {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")}
    sandbox.call(lambda cluster: cluster.faults.add({"kind": "gpu-fault", "node": NODE}))
    eventually(
        lambda: "GPUHealthy=False" in operator.ask("which nodes are unhealthy?").answer,
        what="the patrol's reading sees the GPU fault",
    )

    first = operator.patrol()
    [moved] = first.data["migrations"]
    assert moved["status"] == "waiting-for-checkpoint", first.answer
    assert kubectl.json("get", "node", NODE)["spec"].get("unschedulable") is True
    assert "drain" not in operator.called()
    train = running(kubectl, "ml", "kubecrew.io/workload-class=training")
    assert [p["spec"]["nodeName"] for p in train] == [NODE]  # untouched mid-run
    assert {p["metadata"]["uid"] for p in running(kubectl, "shop", "app=web")} == before
    intent = operator.proposal(moved["proposal"])
    assert intent.proposal.action.type == "drain" and intent.proposal.action.pods == 3
    assert str(intent.proposal.action.target) == f"Node {NODE}"
    for pod in moved["pods"]:
        assert pod in intent.proposal.rationale
    assert "GPUHealthy=False" in intent.proposal.rationale
    assert intent.decision is not None and intent.decision.outcome == "approved"

    again = operator.patrol()  # a patrol before the checkpoint changes nothing
    assert again.data["migrations"][0]["status"] == "waiting-for-checkpoint"
    assert again.data["migrations"][0]["proposal"] == moved["proposal"]  # proposed once
    assert {"propose", "drain", "cordon"}.isdisjoint(operator.called())

    stamp = datetime.now(UTC).isoformat()
    kubectl("annotate", "job", "train", "-n", "ml", f"kubecrew.io/checkpointed-at={stamp}")
    with budget_watch(kubectl) as budget:
        done = operator.patrol()
    [drained] = done.data["migrations"]
    assert drained["status"] == "drained", done.answer
    assert sorted(drained["evicted"]) == sorted(moved["pods"])
    assert drained["unhealthy"] == [], done.answer
    assert budget and all(
        healthy >= desired and allowed >= 0 for healthy, desired, allowed in budget
    )

    web = running(kubectl, "shop", "app=web")
    assert len(web) == 2 and all(p["spec"]["nodeName"] != NODE for p in web)
    preview = operator.ask(f"what would draining node {NODE} do?")
    assert [p for p in preview.data["plan"]["pods"] if p["action"] == "evict"] == []
    assert preview.data["plan"]["cordoned"] is True

    records = [(r.subject, r.summary, r.result) for r in operator.mutations()]
    assert (f"Node {NODE}", "cordon: cordon Node node-1 directly", "applied") in records
    drain = f"drain: drain Node {NODE} (3 pods) directly under proposal {moved['proposal']}"
    assert (f"Node {NODE}", drain, "applied") in records
    assert "told the owners" in first.answer and "healthy elsewhere" in done.answer
