"""The Cluster Operator's capacity review as its deterministic tests and their model-planned
twins (tests/agents/runtime/model_scenes) both run it, so the same checks hold whoever plans.

Scene 3, governance: the shop's web at 5 replicas using a sliver of their CPU (`shop_of_five`)
is countered by capacity to 3 and scaled to exactly that. The right-size beat: web at its
minimum of 3 and api, each requesting 500m and using about 20m (`busy_at_20m`), web's request
resized under a proposal and api's refused by `FLOOR_RULE`. `replicas`, `cpu_request` and
`proposed_scale` read what the review did.
"""

from __future__ import annotations

import json
import math

from agents.cluster_operator.capacity import TARGET
from agents.cluster_operator.rightsizing import STEP
from kubecrew.demo.scenes import GOVERNANCE_POLICIES as CAPACITY
from kubecrew.demo.shop import deployment, manifests, namespace
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.shop import WEB
from tests.support.waiting import eventually


def shop_of_five(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")

    def measured() -> bool:
        path = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
        top = json.loads(kubectl("get", "--raw", path))
        return len(top["items"]) == 5

    eventually(measured, what="metrics for the 5 web pods")


def replicas(kubectl: Kubectl) -> int:
    return int(kubectl("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}"))


def proposed_scale(operator: Operator) -> bool:
    """Whether the latest review proposed a scale (a consolidation may propose a drain)."""
    calls = operator.last_calls()
    return any(c.tool == "propose" and c.arguments.get("action") == "scale" for c in calls)


def downscale_is_countered_by_capacity_and_applied_as_decided(
    kubectl: Kubectl, operator: Operator
) -> None:
    """The scene of tests/agents/cluster_operator/test_capacity_downscale.py, whoever plans."""
    operator.policy("capacity", CAPACITY)
    shop_of_five(kubectl)

    outcome = operator.capacity()
    [saving] = outcome.data["savings"]
    assert saving["workload"] == "Deployment/shop/web" and saving["proposed"] == 1
    assert saving["savings_per_month"] > 0 and saving["utilization"] < 0.2
    assert saving["outcome"] == "approved-as-countered", outcome.answer
    assert saving["applied"] == 3 and replicas(kubectl) == 3

    record = operator.proposal(saving["proposal"])
    assert record.proposal.action.replicas is not None
    assert record.proposal.action.replicas.to == 1
    assert record.decision is not None and record.decision.action.replicas is not None
    assert record.decision.action.replicas.to == 3
    told = [e.describe() for e in record.transcript]
    kinds = [e.kind for e in record.transcript]
    assert kinds[0] == "proposed" and "decided" in kinds
    assert any("counter-offer replicas=3" in line for line in told), told
    assert any("CapacityPolicy shop-min-capacity" in line for line in told), told
    scaled = [r for r in operator.mutations() if r.result == "applied"]
    assert [r.summary for r in scaled] == [
        f"scale: scale Deployment shop/web 5 -> 3 replicas directly under proposal "
        f"{saving['proposal']}"
    ]
    assert "propose" in operator.called() and "scale" in operator.called()


SHOP = manifests(
    namespace(),
    deployment("web", replicas=3, cpu="500m"),
    deployment("api", replicas=1, cpu="500m"),
)
FLOOR_RULE = """\
---
apiVersion: kubecrew.io/v1alpha1
kind: CapacityPolicy
metadata: {name: api-cpu-floor, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop], kinds: [Deployment]}
  rules:
    - name: api-keeps-200m
      actions: [resize]
      when: >-
        action.target.name == "api" && has(action.resources) && action.resources.exists(r,
        has(r.requests.cpu) && r.requests.cpu.to_value < 0.2)
      message: api needs at least 200m of CPU for its start-up burst
"""
PODS = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"


def busy_at_20m(sandbox: Sandbox, kubectl: Kubectl) -> None:
    """Every nginx in the shop uses about 20m (the sandbox's profile, from 0.9x to 1.1x)."""
    sandbox.call(
        lambda cluster: cluster.world.profiles.override(
            namespace="shop", selector=None, image=None, changes={"cpu_millis": 20}
        )
    )
    kubectl("apply", "-f", "-", input=SHOP)
    for name in ("web", "api"):
        kubectl("rollout", "status", f"deploy/{name}", "-n", "shop", "--timeout=60s")

    def measured() -> bool:
        items = json.loads(kubectl("get", "--raw", PODS))["items"]
        return len(items) == 4

    eventually(measured, what="metrics for the 4 shop pods")


def cpu_request(kubectl: Kubectl, name: str) -> str:
    path = "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}"
    return kubectl("get", f"deploy/{name}", "-n", "shop", "-o", path).strip()


def capacity_review_right_sizes_what_it_cannot_scale_down(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    """The scene of tests/agents/cluster_operator/test_capacity_rightsize.py, whoever plans."""
    operator.policy("capacity", CAPACITY + FLOOR_RULE)
    busy_at_20m(sandbox, kubectl)

    outcome = operator.capacity()
    assert outcome.data["savings"] == [], outcome.answer  # 3 is the shop's minimum
    by_name = {r["workload"]: r for r in outcome.data["rightsizing"]}
    web, api = by_name["Deployment/shop/web"], by_name["Deployment/shop/api"]
    assert web["cpu_from"] == "500m" and 15 <= web["used_m"] <= 50, web
    expected = max(STEP, math.ceil(web["used_m"] / TARGET / STEP) * STEP)
    assert web["cpu_to"] == f"{expected}m" and 30 <= expected <= 90, web
    assert web["outcome"] == "approved", outcome.answer
    assert web["applied"] == web["cpu_to"] and cpu_request(kubectl, "web") == web["cpu_to"]
    saved = 3 * (500 - expected) / 1000 * 25.0
    assert web["savings_per_month"] == round(saved, 2)
    assert api["outcome"] == "rejected" and api["applied"] == "", outcome.answer
    assert cpu_request(kubectl, "api") == "500m"
    assert "oversized CPU request" in outcome.answer
    assert f"500m -> {web['cpu_to']} over 3 replica(s)" in outcome.answer
    assert "api needs at least 200m" in outcome.answer

    record = operator.proposal(web["proposal"])
    assert record.decision is not None and record.decision.outcome == "approved"
    [change] = record.proposal.action.resources or []
    assert change.requests["cpu"].to == web["cpu_to"] and change.requests["cpu"].from_ == "500m"
    told = [e.describe() for e in record.transcript]
    assert any("cost supports it and no higher concern objects" in line for line in told), told
    applied = [r.summary for r in operator.mutations() if r.result == "applied"]
    assert applied == [
        f"set_resources: resize Deployment shop/web web cpu 500m -> {web['cpu_to']} directly "
        f"under proposal {web['proposal']}"
    ]

    def rolled() -> bool:
        pods = kubectl.json("get", "pods", "-n", "shop", "-l", "app=web")["items"]
        asked = [p["spec"]["containers"][0]["resources"]["requests"]["cpu"] for p in pods]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        return len(running) == 3 and set(asked) == {web["cpu_to"]}

    eventually(rolled, what=f"3 web pods requesting {web['cpu_to']}")

    again = operator.capacity()
    assert "set_resources" not in operator.called(), again.answer
    [still] = again.data["rightsizing"]
    assert still["workload"] == "Deployment/shop/api" and still["proposal"] == api["proposal"]
    assert still["outcome"] == "rejected"
    resizes = [p for p in operator.read_store(lambda s: s.list()) if p.action.type == "resize"]
    assert sorted(p.id for p in resizes) == sorted([web["proposal"], api["proposal"]])
