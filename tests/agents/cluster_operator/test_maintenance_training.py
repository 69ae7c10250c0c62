"""Training work under maintenance, on a live sandbox: node-1 runs web and a training Job, its
maintenance window is open. Without a policy that allows it, the training pod is not evicted
mid-run: the drain waits for the Job's checkpoint. With a ChangePolicy that lists `evict` among
the training namespace's maintenance actions, it is evicted, and only after the eviction intent
gave notice of it.
"""

from __future__ import annotations

from datetime import timedelta

from kubecrew.demo.scenes import NODE
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator, window_policy
from tests.support.kubectl import Kubectl
from tests.support.nodes import on_node_1, running

TRAINING = "kubecrew.io/workload-class=training"


def test_a_training_job_is_not_evicted_mid_run_without_a_policy_allowing_it(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    on_node_1(kubectl, training=True)
    operator.policy("change", window_policy(sandbox, opens_in=timedelta(minutes=-5)))
    trainer = running(kubectl, "ml", TRAINING)[0]["metadata"]["uid"]
    operator.ask(f"plan maintenance of {NODE} for a kernel upgrade")

    for _ in range(2):  # a later patrol changes nothing either
        outcome = operator.patrol()
        [entry] = outcome.data["maintenance"]
        assert entry["status"] == "moving", outcome.answer
        assert entry["migration"]["status"] == "waiting-for-checkpoint", outcome.answer
        assert "not evicted mid-run" in outcome.answer
        assert "drain" not in operator.called()
    train = running(kubectl, "ml", TRAINING)
    assert [(p["metadata"]["uid"], p["spec"]["nodeName"]) for p in train] == [(trainer, NODE)]
    intent = operator.proposal(entry["migration"]["proposal"])
    assert "waits until its Job checkpoints" in intent.proposal.rationale
    assert "Notice" not in intent.proposal.rationale


def test_policy_may_allow_evicting_training_work_and_the_notice_comes_first(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    on_node_1(kubectl, training=True)
    policy = window_policy(sandbox, opens_in=timedelta(minutes=-5), training_may_be_evicted=True)
    operator.policy("change", policy)
    trainer = running(kubectl, "ml", TRAINING)[0]["metadata"]["uid"]
    operator.ask(f"plan maintenance of {NODE} for a kernel upgrade")

    outcome = operator.patrol()
    [entry] = outcome.data["maintenance"]
    moved = entry["migration"]
    assert entry["status"] == "out" and moved["status"] == "drained", outcome.answer
    assert any(pod.startswith("ml/train-") for pod in moved["evicted"])
    assert "ChangePolicy training-preemption" in outcome.answer
    intent = operator.proposal(moved["proposal"])
    assert "Notice: training pod ml/train-" in intent.proposal.rationale
    assert "ChangePolicy training-preemption" in intent.proposal.rationale
    called = operator.called()
    assert called.index("propose") < called.index("drain")  # the notice, then the eviction
    left = [p for p in running(kubectl, "ml", TRAINING) if p["metadata"]["uid"] == trainer]
    assert left == []
