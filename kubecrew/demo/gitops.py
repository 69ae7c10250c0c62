"""Scene 1 of the crew demo: GitOps and just-in-time probing, all asked of the Dev Team in words.

"deploy nginx:1.27 as checkout to staging" opens a PR, merges it per policy, syncs and validates;
"probe checkout in staging" writes a prober from the Service and the pods and reports what it
found; "make checkout survive a node failure" is a second PR (two replicas, a spread over nodes,
a PodDisruptionBudget) proven on the cluster; then a person scales checkout by hand, "has
checkout drifted?" names the field, and the reconcile puts git's value back. Every claim the
narration makes is checked against the cluster or the repository (`check`), as in the other
scenes (kubecrew/demo/scenes.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from core.policy.settings import SHIPPED
from kubecrew.demo.tour import StepFailed
from kubecrew.demo.world import World, git, shop_repository

DEV_TEAM = "Dev Team"
APP, NAMESPACE = "checkout", "staging"


def check(holds: bool, claim: str) -> None:
    if not holds:
        raise StepFailed(claim)


def gitops_probing(world: World) -> None:
    say, tour = world.narrator.say, world.tour
    world.narrator.step("The shop's GitOps repository, synced; the platform team adds staging")
    repo = shop_repository(world.root)
    world.sync(repo)
    tour.run("create", "namespace", NAMESPACE)

    world.narrator.step(f"A developer asks: deploy nginx:1.27 as {APP} to {NAMESPACE}")
    deployed = _ask(world, repo, f"deploy nginx:1.27 as {APP} to {NAMESPACE}")
    check(deployed["outcome"] == "deployed", f"the deploy ended {deployed['outcome']!r}")
    tour.run("get", "deployment,service", APP, "-n", NAMESPACE)

    world.narrator.step(f"The developer asks: probe {APP} in {NAMESPACE}")
    probed = _ask(world, repo, f"probe {APP} in {NAMESPACE}")
    check(probed.get("outcome") == "passed", f"the prober reported {probed.get('outcome')!r}")
    tour.run("get", "jobs", "-n", NAMESPACE, "-l", f"kubecrew.io/prober={APP}")

    world.narrator.step(f"The developer asks: make {APP} survive a node failure")
    hardened = _ask(world, repo, f"make {APP} survive a node failure in {NAMESPACE}")
    check(hardened["outcome"] == "hardened", f"hardening ended {hardened['outcome']!r}")
    tour.run("get", "pods,pdb", "-n", NAMESPACE, "-o", "wide")
    for line in git(repo, "log", "--oneline", "-3", "main").strip().splitlines():
        world.narrator.detail(line)

    world.narrator.step(f"Someone scales {APP} to 4 by hand, outside git")
    tour.run("scale", f"deployment/{APP}", "--replicas=4", "-n", NAMESPACE)
    drifted = _ask(world, repo, f"has {APP} drifted from git in {NAMESPACE}?")
    check(drifted.get("outcome") == "restored", f"the drift check ended {drifted.get('outcome')!r}")
    replicas = tour.run("get", f"deploy/{APP}", "-n", NAMESPACE, "-o", "jsonpath={.spec.replicas}")
    check(replicas == "2", f"{APP} has {replicas} replicas after the reconcile, not git's 2")
    say(DEV_TEAM, "says", f"{APP} matches git again: 2 replicas")


def _ask(world: World, repo: Path, question: str) -> dict[str, Any]:
    """One question to the Dev Team; its answer told, its report returned."""
    world.narrator.say("you", "ask", question)

    async def go() -> tuple[str, dict[str, Any]]:
        async with conversation(
            world.servers("dev_team", repo=repo, policies=SHIPPED),
            Deterministic(),
            home=world.root / "agents" / "dev_team",
        ) as talk:
            outcome = await talk.ask(question)
            return outcome.answer, outcome.data

    answer, report = anyio.run(go)
    for line in filter(None, answer.strip().splitlines()):
        world.narrator.say(DEV_TEAM, "answers", line)
    return report
