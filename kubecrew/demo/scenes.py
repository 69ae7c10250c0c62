"""The crew demo's scenes: each plays one story of issue 7 on a fresh `World` and checks it.

A scene is a plain function of the world: the person's part is kubectl and git (printed), the
agents' part is their own entry points (`heal`, and the turns of `kubecrew.demo.turns`: the
Cluster Operator's `capacity` and `patrol`, the Platform's `answer_escalations`) with the
deterministic brain, narrated from what they return and from the policy store. Every claim the
narration makes is checked, and a claim that does not hold raises `StepFailed`, so a scene
that prints to the end happened as told.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anyio

from agents.dev_team.heal import heal
from agents.runtime.brain import Deterministic
from agents.runtime.loop.run import LoopResult
from agents.runtime.loop.validation import LoopSettings
from core.policy.settings import SHIPPED
from kubecrew.demo.governance import GOVERNANCE_POLICIES, governance
from kubecrew.demo.shop import OWNERSHIP
from kubecrew.demo.turns import OPERATOR, check, operator_turn
from kubecrew.demo.world import World, commit_image, git, shop_repository

# governance is scene 3, in a module of its own; named here with the other scenes, and its
# policies with it, since the agents' tests build their worlds from them
__all__ = [
    "GOVERNANCE_POLICIES",
    "NODE",
    "governance",
    "node_lifecycle",
    "node_policy",
    "self_heal",
]

DEV_TEAM = "Dev Team"
TYPO = "nginx:1.27-alpinee"
# The cluster's clock runs ten times faster, so 20 s of soak passes in 2 s.
LOOP = LoopSettings(soak_seconds=20, deadline_seconds=240, poll_seconds=0.2)


def _image(world: World) -> str:
    live = world.kubectl_json("get", "deployment", "web", "-n", "shop")
    return str(live["spec"]["template"]["spec"]["containers"][0]["image"])


def self_heal(world: World) -> None:
    say, tour = world.narrator.say, world.tour
    world.narrator.step("The shop's GitOps repository, synced to the cluster")
    repo = shop_repository(world.root)
    synced = world.sync(repo)
    world.narrator.detail(f"repository {repo}; sync: {synced.get('summary') or synced}")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")

    world.narrator.step(f"A developer merges an image typo ({TYPO}) and CD syncs it")
    commit = commit_image(repo, TYPO, "web: move to alpine")
    world.narrator.detail(f"commit {commit} on main: web: move to alpine")
    world.sync(repo)
    world.wait(
        lambda: any(
            f["code"] == "ImagePullBackOff"
            for f in world.diagnose(namespace="shop", kind="deployment", name="web")
        ),
        what="diagnose finds ImagePullBackOff on web",
    )
    tour.expect_in(tour.run("get", "pods", "-n", "shop"), "ImagePullBackOff")

    world.narrator.step("The Dev Team's remediation loop: learn, recommend, mutate, validate")
    result = anyio.run(
        lambda: heal(
            "web",
            namespace="shop",
            servers=world.servers("dev_team", repo=repo, policies=SHIPPED),
            planner=Deterministic(),
            home=world.root / "agents" / "dev_team",
            settings=LOOP,
            on_node=lambda node: world.narrator.detail(f"loop: {node}"),
        )
    )
    _narrate_loop(world, result)
    check(result.outcome == "fixed", f"the loop ended {result.outcome!r}: {result.summary}")
    check(_image(world) == "nginx:1.27", f"web runs {_image(world)}, not nginx:1.27")
    tour.run("rollout", "status", "deployment/web", "-n", "shop", "--timeout=60s")
    merged = [a["applied"]["pr"] for a in result.attempts if a["applied"] and a["applied"]["pr"]]
    check(bool(merged), "the fix did not go through a pull request")
    world.narrator.detail("the shop repository's main now:")
    for line in git(repo, "log", "--oneline", "-4").strip().splitlines():
        world.narrator.detail(line)
    say(DEV_TEAM, "says", result.summary.splitlines()[0])


def _narrate_loop(world: World, result: LoopResult) -> None:
    say = world.narrator.say
    state = result.state
    finding = state.get("finding") or {}
    tools = sorted({str(o.get("tool")) for o in state.get("observations", [])})
    say(DEV_TEAM, "learns", f"from {', '.join(tools)}")
    say(DEV_TEAM, "sees", f"{finding.get('code', '?')}: {finding.get('summary', '')}")
    for rank, ranked in enumerate(state.get("fixes", [])[:3], start=1):
        usable = "" if ranked["usable"] else " (not usable here)"
        say(
            DEV_TEAM,
            "recommends",
            f"#{rank} {ranked['fix'].get('title')} - {ranked['reason']}{usable}",
        )
    for attempt in result.attempts:
        applied = attempt["applied"]
        if applied is not None:
            how = f"PR #{applied['pr']}" if applied["pr"] else "a direct write"
            say(
                DEV_TEAM,
                "does",
                f"{attempt['fix']} by {how} (proposal {applied['proposal']}, "
                f"merge {applied['merge_commit'][:8]})",
            )
            decision = world.proposal(applied["proposal"]).decision
            if decision is not None:
                say("policy store", "decides", f"{applied['proposal']}: {decision.describe()}")
            for note in applied["notes"]:
                world.narrator.detail(note)
        say(DEV_TEAM, "validates", f"{attempt['verdict']}: {'; '.join(attempt['evidence'])}")


NODE = "node-1"


def node_policy(
    max_evictions_per_hour: int = 10, *, person_over: int = 10, rule: str = "large-drains"
) -> str:
    """Node drains in any hour (the shipped policy's wall-clock window would make the scene
    depend on the time of day), at most this many evictions an hour, and a person (group
    sre) for a drain of more than `person_over` pods, under the rule named `rule`."""
    return f"""\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {{name: node-changes}}
spec:
  selector: {{kinds: [Node]}}
  approvals:
    - name: {rule}
      actions: [drain]
      when: 'action.pods > {person_over}'
      approvers: {{groups: [sre]}}
  blastRadius: {{maxEvictionsPerHour: {max_evictions_per_hour}}}
"""


WEB_WITH_PDB = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: ml}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""
TRAINING_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  backoffLimit: 3
  template:
    metadata: {labels: {kubecrew.io/workload-class: training}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: trainer, image: "nginx:1.27"}]
"""
NODE_WORKLOADS = WEB_WITH_PDB + "---\n" + TRAINING_JOB


def _running(world: World, namespace: str, selector: str) -> list[dict[str, Any]]:
    items = world.kubectl_json("get", "pods", "-n", namespace, "-l", selector)["items"]
    return [
        p
        for p in items
        if not p["metadata"].get("deletionTimestamp")
        and p["status"].get("phase") == "Running"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
    ]


def _nodes_of(pods: list[dict[str, Any]]) -> list[str]:
    return sorted(str(p["spec"].get("nodeName")) for p in pods)


def node_lifecycle(world: World) -> None:
    say, tour, narrator = world.narrator.say, world.tour, world.narrator
    narrator.step(f"web (2 replicas, PDB minAvailable 1) and a training Job, all on {NODE}")
    world.write_policies(ownership=OWNERSHIP, change=node_policy())
    narrator.detail("ChangePolicy node-changes: at most 10 evictions an hour")
    for other in ("node-2", "node-3"):  # so that everything starts on node-1
        tour.run("cordon", other)
    tour.run("apply", "-f", str(world.manifest("workloads", NODE_WORKLOADS)))
    world.wait(
        lambda: (
            _nodes_of(_running(world, "shop", "app=web")) == [NODE, NODE]
            and _nodes_of(_running(world, "ml", "kubecrew.io/workload-class=training")) == [NODE]
        ),
        what=f"web and the training pod running on {NODE}",
    )
    world.wait(
        lambda: world.kubectl_json("get", "pdb", "web", "-n", "shop")["status"].get(
            "disruptionsAllowed"
        ),
        what="the web budget allows one disruption",
    )
    for other in ("node-2", "node-3"):
        tour.run("uncordon", other)
    tour.run("get", "pods", "-A", "-o", "wide", "-l", "app=web")

    narrator.step(f"{NODE}'s GPU fails (a sandbox fault)")
    fault = world.add_fault({"kind": "gpu-fault", "node": NODE})
    narrator.detail(f"fault {fault}: gpu-fault on {NODE}")
    world.wait(
        lambda: any(
            c["type"] == "GPUHealthy" and c["status"] == "False"
            for c in world.kubectl_json("get", "node", NODE)["status"]["conditions"]
        ),
        what=f"{NODE} reports GPUHealthy=False",
    )

    narrator.step("The Cluster Operator patrols: cordon, plan, tell the owners, wait")
    first = operator_turn(world, "patrol")
    [moved] = first.data["migrations"]
    say(OPERATOR, "sees", f"{NODE}: GPUHealthy=False")
    say(OPERATOR, "does", f"cordons {NODE}; plans to move {', '.join(moved['pods'])}")
    say(OPERATOR, "proposes", f"drain intent {moved['proposal']} (the owners are told)")
    intent = world.proposal(moved["proposal"])
    for event in intent.transcript:
        narrator.detail(event.describe())
    say(OPERATOR, "decides", f"{moved['status']}: the training Job has not checkpointed")
    check(moved["status"] == "waiting-for-checkpoint", f"status {moved['status']!r}")
    node = world.kubectl_json("get", "node", NODE)
    check(node["spec"].get("unschedulable") is True, f"{NODE} is not cordoned")
    training = _running(world, "ml", "kubecrew.io/workload-class=training")
    check(_nodes_of(training) == [NODE], "the training pod did not stay untouched")
    say(OPERATOR, "says", first.answer)

    narrator.step("The trainer writes its checkpoint (the demo sets the annotation it would)")
    stamp = datetime.now(UTC).isoformat()
    tour.run("annotate", "job", "train", "-n", "ml", f"kubecrew.io/checkpointed-at={stamp}")

    narrator.step("The next patrol drains within the PDB and validates")
    done = operator_turn(world, "patrol")
    [drained] = done.data["migrations"]
    say(OPERATOR, "does", f"evicts {', '.join(drained.get('evicted', []))} under the budget")
    check(drained["status"] == "drained", f"status {drained['status']!r}: {done.answer}")
    check(drained.get("unhealthy") == [], f"unhealthy afterwards: {drained.get('unhealthy')}")
    web = _running(world, "shop", "app=web")
    check(len(web) == 2 and NODE not in _nodes_of(web), f"web runs on {_nodes_of(web)}")
    tour.run("get", "pods", "-n", "shop", "-o", "wide")
    tour.run("get", "pdb", "web", "-n", "shop")
    say(OPERATOR, "validates", f"web is healthy on {', '.join(_nodes_of(web))}")
    say(OPERATOR, "says", done.answer)
