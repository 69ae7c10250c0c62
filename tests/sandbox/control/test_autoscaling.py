"""The HorizontalPodAutoscaler scales its target from pod usage against requests.

Only the HPA controller runs; the tests play the Deployment controller (a ReplicaSet owning the
pods), the kubelet (Ready pods) and metrics-server (usage recorded in the metrics book).
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.control.ownership import controller_ref
from sandbox.metrics import Usage
from sandbox.store import Obj
from tests.support.playing import pod, run_pod
from tests.support.simulation import Simulation, condition


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2, only=("horizontal-pod-autoscaler",))


def workload(sim: Simulation, *, pods: int, cpu_request: str | None = "100m") -> Obj:
    """A Deployment with one ReplicaSet and `pods` Ready pods, as its controllers would leave."""
    resources = {"requests": {"cpu": cpu_request}} if cpu_request else {}
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "resources": resources}]},
    }
    deployment = sim.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": pods,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
            },
        }
    )[0]
    replicaset = sim.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-5d4f8",
                "labels": {"app": "web"},
                "ownerReferences": [controller_ref(deployment)],
            },
            "spec": {
                "replicas": pods,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
            },
        }
    )[0]
    for index in range(pods):
        name = f"web-5d4f8-{index}"
        meta = {"labels": {"app": "web"}, "ownerReferences": [controller_ref(replicaset)]}
        sim.apply(pod(name, metadata=meta, **template["spec"]))
        run_pod(sim, name)
    return deployment


def use(sim: Simulation, cpu: str) -> None:
    """Play metrics-server: every pod of the workload uses `cpu`."""
    for running in sim.pods(app="web"):
        sim.cluster.metrics.record_pod(
            "default", running["metadata"]["name"], {"web": Usage(cpu=cpu, memory="64Mi")}
        )


def autoscaler(sim: Simulation, *, low: int = 1, high: int = 10, **spec: Any) -> Obj:
    metrics = [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        }
    ]
    body = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": low,
        "maxReplicas": high,
        "metrics": metrics,
        **spec,
    }
    manifest = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": body,
    }
    return sim.apply(manifest)[0]


def hpa(sim: Simulation) -> Obj:
    found = sim.get("horizontalpodautoscalers", "default", "web")
    assert found is not None
    return found


def replicas(sim: Simulation) -> int:
    found = sim.get("deployments", "default", "web")
    assert found is not None
    return int(found["spec"]["replicas"])


def messages(sim: Simulation, reason: str) -> list[str]:
    return [e["message"] for e in sim.events_for(hpa(sim), reason=reason)]


def test_high_cpu_usage_scales_the_deployment_up(sim: Simulation) -> None:
    workload(sim, pods=2)
    use(sim, "200m")  # 200% of the request against a 50% target

    autoscaler(sim)

    assert replicas(sim) == 4  # 8 wanted; at most doubled (or 4) per pass
    deployment = sim.get("deployments", "default", "web") or {}
    assert deployment["metadata"]["generation"] == 2
    assert messages(sim, "SuccessfulRescale") == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]
    status = hpa(sim)["status"]
    assert status["currentReplicas"] == 2
    assert status["desiredReplicas"] == 4
    assert status["lastScaleTime"]
    assert status["currentMetrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "current": {"averageUtilization": 200, "averageValue": "200m"},
            },
        }
    ]
    active = condition(hpa(sim), "ScalingActive")
    assert active is not None and (active["status"], active["reason"]) == (
        "True",
        "ValidMetricFound",
    )
    able = condition(hpa(sim), "AbleToScale")
    assert able is not None and able["reason"] == "SucceededRescale"


def test_usage_within_tolerance_keeps_the_size(sim: Simulation) -> None:
    workload(sim, pods=3)
    use(sim, "54m")  # 54% against 50%: inside the 10% tolerance

    autoscaler(sim)
    sim.run_for(30)

    assert replicas(sim) == 3
    assert messages(sim, "SuccessfulRescale") == []
    able = condition(hpa(sim), "AbleToScale")
    assert able is not None and able["reason"] == "ReadyForNewScale"


def test_scale_down_waits_for_the_stabilization_window(sim: Simulation) -> None:
    workload(sim, pods=4)
    use(sim, "50m")
    autoscaler(sim)
    assert replicas(sim) == 4

    use(sim, "10m")  # 10% against 50%: one replica would do
    sim.run_for(240)

    assert replicas(sim) == 4
    able = condition(hpa(sim), "AbleToScale")
    assert able is not None and able["reason"] == "ScaleDownStabilized"

    waited = sim.run_until(lambda: replicas(sim) < 4, timeout=120, what="scale down")

    assert replicas(sim) == 1
    assert 240 + waited >= 300
    assert messages(sim, "SuccessfulRescale") == ["New size: 1; reason: All metrics below target"]


def test_max_replicas_caps_the_scale_up(sim: Simulation) -> None:
    workload(sim, pods=2)
    use(sim, "300m")

    autoscaler(sim, high=3)

    assert replicas(sim) == 3
    limited = condition(hpa(sim), "ScalingLimited")
    assert limited is not None
    assert (limited["status"], limited["reason"]) == ("True", "TooManyReplicas")


def test_behavior_policies_limit_the_scale_up_rate(sim: Simulation) -> None:
    workload(sim, pods=2)
    use(sim, "400m")
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}

    autoscaler(sim, high=20, behavior=behavior)
    assert replicas(sim) == 3
    sim.run_for(30)
    assert replicas(sim) == 3  # the minute's one pod is spent

    sim.run_for(45)
    assert replicas(sim) == 4


def test_missing_cpu_request_makes_scaling_inactive(sim: Simulation) -> None:
    workload(sim, pods=2, cpu_request=None)
    use(sim, "200m")

    autoscaler(sim)

    assert replicas(sim) == 2
    detail = (
        "failed to get cpu utilization: missing request for cpu in container web of Pod web-5d4f8-0"
    )
    active = condition(hpa(sim), "ScalingActive")
    assert active is not None
    assert (active["status"], active["reason"]) == ("False", "FailedGetResourceMetric")
    assert active["message"] == f"the HPA was unable to compute the replica count: {detail}"
    assert messages(sim, "FailedGetResourceMetric") == [detail]
    assert messages(sim, "FailedComputeMetricsReplicas") == [
        "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource "
        f"metric value: {detail}"
    ]


def test_pods_without_metrics_make_scaling_inactive(sim: Simulation) -> None:
    workload(sim, pods=2)

    autoscaler(sim)

    active = condition(hpa(sim), "ScalingActive")
    assert active is not None
    assert active["message"] == (
        "the HPA was unable to compute the replica count: failed to get cpu utilization: "
        "unable to get metrics for resource cpu: no metrics returned from resource metrics API"
    )


def test_missing_target_is_reported(sim: Simulation) -> None:
    autoscaler(sim)

    able = condition(hpa(sim), "AbleToScale")
    assert able is not None
    assert (able["status"], able["reason"]) == ("False", "FailedGetScale")
    assert messages(sim, "FailedGetScale") == [
        "the HPA controller was unable to get the target's current scale: "
        'deployments.apps "web" not found'
    ]


def test_replicas_below_minimum_are_raised_without_metrics(sim: Simulation) -> None:
    workload(sim, pods=1)

    autoscaler(sim, low=3)

    assert replicas(sim) == 3
    assert messages(sim, "SuccessfulRescale") == [
        "New size: 3; reason: Current number of replicas below Spec.MinReplicas"
    ]
