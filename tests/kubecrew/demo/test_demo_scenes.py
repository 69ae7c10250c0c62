"""`kubecrew demo` end to end: every scene on its own fresh sandbox, in a subprocess as `make
demo` runs it, checked by its exit status, its summary and the narrated lines that prove each
agent saw, decided and did what the scene tells."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kubecrew.cli.demo import SCENES, Scene, play
from kubecrew.cli.main import app
from kubecrew.demo.world import World

KUBECREW = str(Path(sys.executable).with_name("kubecrew"))


def kubecrew_demo(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "demo", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return kubecrew_demo()


def section(output: str, scene: str) -> str:
    """The lines one scene printed: from its rule to the next scene's (or the summary)."""
    found = re.search(
        rf"^.*\({re.escape(scene)}\) ─+$(.*?)^Scene {re.escape(scene)} done", output, re.M | re.S
    )
    assert found, f"scene {scene} did not run to its end:\n{output}"
    return found.group(1)


def test_make_demo_plays_every_scene(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr
    summary = dict(re.findall(r"^ (\S+) +(passed|FAILED) *$", demo.stdout, re.M))
    assert summary == {
        "tour": "passed",
        "gitops-probing": "passed",
        "self-heal": "passed",
        "governance": "passed",
        "node-lifecycle": "passed",
        "upgrade": "passed",
    }


def test_gitops_probing_deploys_probes_hardens_and_reconciles(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "gitops-probing")
    assert re.search(r"Dev Team answers Deployed checkout to staging .* by PR #1, merged", told)
    assert re.search(r"Job checkout-prober-\w+ in staging .*: all 1 checks passed", told)
    assert "expected HTTP 2xx or 3xx, got HTTP 200" in told
    assert re.search(
        r"now has 2 replicas, a spread over nodes and a PodDisruptionBudget: PR #2", told
    )
    assert "PodDisruptionBudget checkout allows 1 disruption" in told
    assert "spec.replicas: git says 2, live says 4" in told
    assert "Dev Team says checkout matches git again: 2 replicas" in told


def test_self_heal_shows_learn_recommend_mutate_validate(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "self-heal")
    assert "ImagePullBackOff" in told
    assert "Dev Team sees ImagePullBackOff: container web cannot pull image" in told
    assert "Dev Team recommends #1 set image of container web to nginx:1.27" in told
    assert re.search(
        r"Dev Team does set image of container web to nginx:1\.27 by PR #1 \(proposal p-\w+", told
    )
    assert re.search(r"policy store decides p-\w+: approved", told)
    assert re.search(r"Dev Team validates held: .*diagnose no longer finds ImagePullBackOff", told)
    assert "Merge pull request #1" in told  # the shop repository's main, printed
    assert told.index("loop: learn") < told.index("loop: mutate") < told.index("loop: validate")


def test_governance_shows_the_counter_and_the_transcript(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "governance")
    assert re.search(
        r"Cluster Operator proposes 5 -> 1 replicas, saving \$[\d.]+/month \(proposal p-\w+\)", told
    )
    assert "counters with scale Deployment shop/web 5 -> 3 replicas" in told
    assert "cites CapacityPolicy shop-min-capacity" in told
    assert "reliability outranks cost" in told
    assert "policy store decides approved as countered (3)" in told
    assert "Cluster Operator does scales web to 3 under p-" in told
    assert re.search(r"jsonpath=\{\.spec\.replicas\}'\n3\n", told)


def test_governance_right_sizes_at_the_minimum_and_the_platform_denies_a_refused_counter(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "governance")
    resized = re.search(
        r"Cluster Operator proposes cpu request 100m -> (\d+m) for container web, "
        r"saving \$[\d.]+/month over 3 replicas \(proposal (p-\w+)\)",
        told,
    )
    assert resized, told
    cpu, proposal = resized.groups()
    assert (
        f"policy store decides approved: resize Deployment shop/web web cpu 100m -> {cpu}" in told
    )
    assert f"Cluster Operator does set_resources cpu={cpu} under {proposal}" in told
    assert re.search(rf"resources\.requests\.cpu\}}'\n{cpu}\n", told)  # kubectl shows it

    escalated = re.search(r"Cluster Operator proposes 4 -> 1 replicas \(proposal (p-\w+)\)", told)
    assert escalated, told
    assert re.search(r"policy store escalates a-\w+ to group shop-admins, agent platform", told)
    denial = told[told.index("Platform denies a-") :]
    assert "the proposer refused the counter-offer" in denial
    assert "policy would accept it: propose scale to 3" in denial
    assert "cites CapacityPolicy shop-min-capacity / rule min-replicas" in denial
    assert "cites PriorityPolicy org-priorities (security > reliability > cost)" in denial
    assert f"policy store decides {escalated.group(1)}: rejected by agent platform" in told
    assert re.search(r"deploy/api -n shop -o 'jsonpath=\{\.spec\.replicas\}'\n4\n", told)
    assert told.index("Platform denies") < told.index("deploy/api -n shop -o")


def test_node_lifecycle_waits_for_the_checkpoint_then_drains_within_the_budget(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "node-lifecycle")
    assert "Cluster Operator sees node-1: GPUHealthy=False" in told
    assert re.search(r"Cluster Operator proposes drain intent p-\w+ \(the owners are told\)", told)
    waiting = told.index("Cluster Operator decides waiting-for-checkpoint")
    annotated = told.index("kubecrew.io/checkpointed-at=")
    evicted = told.index("Cluster Operator does evicts ")
    assert waiting < annotated < evicted  # nothing moved before the Job checkpointed
    assert "Cluster Operator validates web is healthy on node-2, node-3" in told
    assert "evicted 3 pod(s) under proposal p-" in told


def test_upgrade_moves_the_control_plane_then_each_pool_within_the_budget(
    demo: subprocess.CompletedProcess[str],
) -> None:
    told = section(demo.stdout, "upgrade")
    assert "Reply 'yes' to start" in told
    waiting = told.index("waiting for training Job ml/train to checkpoint")
    annotated = told.index("kubecrew.io/checkpointed-at=")
    evicted = told.index("evicted 1 pod(s) under proposal p-")
    assert told.index("the control plane runs v1.38.0") < waiting < annotated < evicted
    assert "pool default/gpu runs v1.38.0; validated: healthy" in told
    assert "pool default/workers runs v1.38.0; validated: healthy" in told
    sampled = re.search(r"never fewer than (\d+) healthy pods \((\d+) required\)", told)
    assert sampled and int(sampled.group(1)) >= int(sampled.group(2)) == 2, told
    assert "Server Version: v1.38.0" in told


def test_one_scene_by_name_and_the_list() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["demo", "--list"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    rows = re.findall(r"^ ?(\S+) +(.+?) *$", listed.stdout, re.M)
    assert rows == [(scene.name, scene.about) for scene in SCENES]

    unknown = runner.invoke(app, ["demo", "no-such-scene"], env={"COLUMNS": "200"})
    assert unknown.exit_code == 2
    assert "no scene 'no-such-scene'; choose one of tour, gitops-probing" in unknown.output


def ask_for_a_missing_deployment(world: World) -> None:
    world.tour.run("get", "deployment", "missing", "-n", "default")


def test_a_scene_that_does_not_happen_as_told_fails_with_its_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    printed = io.StringIO()
    broken = Scene(
        "broken", "A broken scene", "asks for what is not there", ask_for_a_missing_deployment
    )
    assert play(broken, Console(file=printed, width=200)) is False
    assert "$ kubectl get deployment missing -n default" in printed.getvalue()
    assert "Scene broken done" not in printed.getvalue()
    failure = " ".join(capsys.readouterr().err.split())
    assert "scene broken: `kubectl get deployment missing -n default` exited 1" in failure
    assert 'deployments.apps "missing" not found' in failure
