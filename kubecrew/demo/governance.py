"""Scene 3 of the crew demo, governance: the agents settle cost against reliability through the
policy store, and the Platform answers what org policy already settles.

The Cluster Operator proposes scaling the shop's idle web from 5 to 1; the shop's CapacityPolicy
counters with 3 and reliability outranks cost. At its minimum web can only give back CPU
request, so the next review right-sizes it (`set_resources` under the approved proposal). A
Cluster Operator that takes no counter-offers then proposes the idle api from 4 to 1: the store
escalates it to the shop's admins and the Platform, and the Platform denies it, citing the
minimum and the priority order and naming what policy would accept. Every claim is `check`ed.
"""

from __future__ import annotations

import json

from kubecrew.demo.shop import OWNERSHIP, deployment, manifests, namespace
from kubecrew.demo.turns import OPERATOR, PLATFORM, check, operator_turn, platform_turn
from kubecrew.demo.world import World

MIN_CAPACITY = """\
apiVersion: kubecrew.io/v1alpha1
kind: CapacityPolicy
metadata: {name: shop-min-capacity, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop], kinds: [Deployment]}
  minReplicas: 3
"""
UNDERUSED = """\
apiVersion: kubecrew.io/v1alpha1
kind: CostPolicy
metadata: {name: shop-underused, labels: {kubecrew.io/team: cluster-ops}}
spec:
  selector: {namespaces: [shop]}
  underused: {metric: cpu_utilization, below: 0.2, window: 1h}
  allowedActions: [downscale, right-size]
"""
GOVERNANCE_POLICIES = manifests(MIN_CAPACITY, UNDERUSED)
PODS_METRICS = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
BUSY_SHOP = manifests(namespace(), deployment("web", replicas=5, cpu="100m", memory_limit="64Mi"))
# The shop's API: four replicas that sit idle, asking for CPU they do not use.
IDLE_API = deployment("api", replicas=4, cpu="100m", memory_limit="64Mi")


def governance(world: World) -> None:
    say, tour = world.narrator.say, world.tour
    world.narrator.step("Policies: the shop keeps at least 3 replicas; cost savings below 20% CPU")
    world.write_policies(ownership=OWNERSHIP, governance=GOVERNANCE_POLICIES)
    world.narrator.detail("CapacityPolicy shop-min-capacity (Dev Team): minReplicas 3")
    world.narrator.detail(
        "CostPolicy shop-underused (Cluster Operator): downscale or right-size below 20% CPU"
    )
    world.narrator.detail(
        "PriorityPolicy org-priorities: security > reliability > cost; the Platform arbitrates"
    )
    world.narrator.step("The shop runs web on 5 replicas, mostly idle")
    tour.run("apply", "-f", str(world.manifest("busy-shop", BUSY_SHOP)))
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")
    world.wait(
        lambda: len(json.loads(world.tour.quiet("get", "--raw", PODS_METRICS))["items"]) == 5,
        what="metrics for the 5 web pods",
    )

    world.narrator.step("The Cluster Operator reviews capacity and proposes a downscale")
    outcome = operator_turn(world, "capacity")
    savings = outcome.data.get("savings", [])
    check(len(savings) == 1, f"expected one saving, found {savings}")
    saving = savings[0]
    say(
        OPERATOR,
        "sees",
        f"{saving['workload']} at {saving['utilization']:.0%} CPU of its requests",
    )
    say(
        OPERATOR,
        "proposes",
        f"5 -> {saving['proposed']} replicas, saving ${saving['savings_per_month']:.2f}/month "
        f"(proposal {saving['proposal']})",
    )
    record = world.proposal(saving["proposal"])
    say("policy store", "transcript of", saving["proposal"])
    for event in record.transcript:
        world.narrator.detail(event.describe())
    decision = record.decision
    check(decision is not None, "the proposal has no decision")
    assert decision is not None
    say("policy store", "decides", decision.describe())
    check(saving["outcome"] == "approved-as-countered", f"outcome {saving['outcome']!r}")
    check(
        decision.action.replicas is not None and decision.action.replicas.to == 3,
        "the decision is not 3 replicas",
    )
    say(OPERATOR, "does", f"scales web to {saving['applied']} under {saving['proposal']}")
    replicas = tour.run("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}")
    check(replicas == "3", f"web has {replicas} replicas, not 3")
    say(OPERATOR, "says", outcome.answer)
    _right_size_at_the_minimum(world)
    _escalation_the_platform_settles(world)


CPU_REQUEST = "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}"


def _right_size_at_the_minimum(world: World) -> None:
    """web cannot lose replicas any more, so its waste is in its CPU request."""
    say, tour = world.narrator.say, world.tour
    world.narrator.step("web sits at the shop's minimum: the next review right-sizes its request")
    outcome = operator_turn(world, "capacity")
    check(outcome.data.get("savings") == [], f"a downscale again: {outcome.data['savings']}")
    resizes = outcome.data.get("rightsizing", [])
    check(len(resizes) == 1, f"expected one resize, found {resizes}")
    resize = resizes[0]
    say(
        OPERATOR,
        "sees",
        f"{resize['workload']} uses about {resize['used_m']:.0f}m of its {resize['cpu_from']} "
        f"CPU request per replica ({resize['utilization']:.0%})",
    )
    say(
        OPERATOR,
        "proposes",
        f"cpu request {resize['cpu_from']} -> {resize['cpu_to']} for container "
        f"{resize['container']}, saving ${resize['savings_per_month']:.2f}/month over "
        f"{resize['replicas']} replicas (proposal {resize['proposal']})",
    )
    decision = world.proposal(resize["proposal"]).decision
    check(decision is not None and decision.outcome == "approved", f"decided {decision}")
    assert decision is not None
    say("policy store", "decides", decision.describe())
    check(resize["applied"] == resize["cpu_to"], f"applied {resize['applied']!r}")
    say(OPERATOR, "does", f"set_resources cpu={resize['applied']} under {resize['proposal']}")
    request = tour.run("get", "deploy/web", "-n", "shop", "-o", CPU_REQUEST)
    check(request == resize["cpu_to"], f"web requests {request}, not {resize['cpu_to']}")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")


def _escalation_the_platform_settles(world: World) -> None:
    """A proposer that refuses the counter escalates; org policy already settles it, so the
    Platform, the org's arbiter, answers instead of a person."""
    say, tour = world.narrator.say, world.tour
    world.narrator.step("api runs 4 idle replicas; this operator takes no counter-offers")
    tour.run("apply", "-f", str(world.manifest("idle-api", IDLE_API)))
    tour.run("rollout", "status", "deployment/api", "-n", "shop", "--timeout=60s")
    world.wait(lambda: _measured(world, "api") == 4, what="metrics for the 4 api pods")
    outcome = operator_turn(world, "capacity", counters="refuse")
    [api] = [s for s in outcome.data.get("savings", []) if s["workload"].endswith("/api")]
    say(OPERATOR, "sees", f"{api['workload']} at {api['utilization']:.0%} CPU of its requests")
    say(OPERATOR, "proposes", f"4 -> {api['proposed']} replicas (proposal {api['proposal']})")
    check(api["outcome"] == "escalated", f"api's proposal ended {api['outcome']!r}")
    pending = [a for a in world.approvals() if a.proposal == api["proposal"]]
    check(len(pending) == 1, f"approval requests for {api['proposal']}: {pending}")
    approvers = pending[0].approvers.describe()
    check("agent platform" in approvers, f"the approvers are {approvers}")
    say("policy store", "escalates", f"{pending[0].id} to {approvers} (counter refused)")

    world.narrator.step("The Platform answers the escalations org policy settles")
    answered = platform_turn(world)
    rows = [r for r in answered.data["requests"] if r["proposal"] == api["proposal"]]
    check(len(rows) == 1, f"the Platform did not take up {api['proposal']}")
    row = rows[0]
    check((row["verdict"], row["answered"]) == ("deny", "denied"), f"answered {row}")
    say(PLATFORM, "denies", f"{row['request']}: {'; '.join(row['reasons'])}")
    for citation in row["citations"]:
        world.narrator.detail(f"cites {citation}")
    check(
        "CapacityPolicy shop-min-capacity / rule min-replicas" in row["citations"]
        and any("org-priorities" in c for c in row["citations"]),
        f"cited {row['citations']}",
    )
    check(any("propose scale to 3" in r for r in row["reasons"]), "no scale to 3 named")
    decision = world.proposal(api["proposal"]).decision
    check(decision is not None and decision.outcome == "rejected", f"decided {decision}")
    assert decision is not None
    say(
        "policy store", "decides", f"{api['proposal']}: {decision.outcome} by {decision.decided_by}"
    )
    replicas = tour.run("get", "deploy/api", "-n", "shop", "-o", "jsonpath={.spec.replicas}")
    check(replicas == "4", f"api has {replicas} replicas, not 4")


def _measured(world: World, name: str) -> int:
    items = json.loads(world.tour.quiet("get", "--raw", PODS_METRICS))["items"]
    return sum(1 for pod in items if pod["metadata"]["name"].startswith(f"{name}-"))
