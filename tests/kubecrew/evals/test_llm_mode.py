"""`kubecrew eval --mode llm` end to end with scripted models: every scenario that has a script
in evals/scripts/ (a diagnosis, the image-typo self-heal, the cost downscale, the GPU node
migration, the egress propagation) runs through the harness as `make eval` runs it, on a fresh
sandbox, with the scenario's script planning every model turn, and passes the scenario's own
objectives and safeguards. The model guard is on: the harness plays scripts only, and a real
provider is never built. Every script file is validated here too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.runtime.brain import GUARD_ENV, MODEL_ENV
from agents.runtime.roles import load_role
from agents.runtime.scripted import from_script
from kubecrew.evals.format import load
from kubecrew.evals.run import SCRIPTED_ENV, run_file

ROOT = Path(__file__).parents[3]
KUBECREW = str(Path(sys.executable).parent / "kubecrew")
SCENARIOS, SCRIPTS = ROOT / "evals" / "scenarios", ROOT / "evals" / "scripts"
SCRIPTED = sorted(SCRIPTS.glob("*.yaml"))
FACTORY = "agents.runtime.scripted:from_script"
REQUIRED = {"image-typo-answer", "image-typo-self-heal", "cost-downscale-countered"}


def scripted_corpus(root: Path) -> Path:
    """A scenario folder holding the scripted scenarios, with evals/scripts beside it."""
    (root / "scenarios").mkdir(parents=True)
    for script in SCRIPTED:
        (root / "scenarios" / script.name).symlink_to(SCENARIOS / script.name)
    (root / "scripts").symlink_to(SCRIPTS)
    return root / "scenarios"


@pytest.mark.timeout(300)
def test_the_scripted_scenarios_pass_in_llm_mode_through_the_harness(tmp_path: Path) -> None:
    env = {**os.environ, GUARD_ENV: "1", SCRIPTED_ENV: FACTORY, "PYTHONPATH": str(ROOT)}
    env.pop(MODEL_ENV, None)
    done = subprocess.run(
        [KUBECREW, "eval", "--mode", "llm", "--jobs", "2", "--out", str(tmp_path / "out"),
         "--scenarios", str(scripted_corpus(tmp_path / "corpus"))],
        capture_output=True, text=True, timeout=280, cwd=ROOT, env=env,
    )  # fmt: skip
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    runs = {r["scenario"]: r for r in report["runs"]}
    assert report["mode"] == "llm" and set(runs) == {s.stem for s in SCRIPTED} >= REQUIRED
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["summary"]["pass_at_1"] == 1 and report["summary"]["catastrophic_trips"] == 0
    assert {r["planner"] for r in runs.values()} == {"model:ReplayedChatModel"}

    # The script's reads were made, before the procedure's own calls.
    def tools(name: str) -> list[str]:
        return [c["tool"] for c in runs[name]["record"]["calls"]]

    read = [t for t in tools("image-typo-answer") if t != "list_resources"]
    assert read == ["diagnose", "recommend", "events", "describe"]
    healing = tools("image-typo-self-heal")
    assert healing.index("describe") < healing.index("diagnose") < healing.index("propose_change")
    assert tools("cost-downscale-countered")[:4] == ["list_resources", "list_policies", "top",
                                                     "get_policy"]  # fmt: skip
    assert tools("gpu-node-migration").index("drain_plan") < tools("gpu-node-migration").index(
        "cordon"
    )
    for name in ("image-typo-answer", "cost-downscale-countered", "egress-propagation"):
        assert "The model's reading: " in runs[name]["record"]["answer"], name
    said = runs["cost-downscale-countered"]["record"]["answer"]
    assert "web runs 5 replicas, mostly idle; shop-min-capacity bounds" in said


@pytest.mark.parametrize("script", SCRIPTED, ids=[s.stem for s in SCRIPTED])
def test_each_script_plays_a_scenario_with_its_agents_tools(script: Path) -> None:
    scenario = load(SCENARIOS / script.name)
    trigger = scenario.trigger
    agent = trigger.schedule.agent if trigger.schedule is not None else "dev_team"
    allowed = load_role(agent).tools
    model = from_script(script)
    assert len(model.script) >= 2
    turns = yaml.safe_load(script.read_text())["turns"]
    named = {c["tool"] for t in turns for c in t.get("calls", [])}
    assert named and named <= allowed, named - allowed
    assert "answer" in turns[-1]  # a script ends by saying what it read


def test_a_malformed_script_is_refused_naming_the_turn(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - calls: [{tool: top}]\n  - {calls: [], answer: both}\n")
    with pytest.raises(ValueError, match=r"bad.yaml: turn 2: give exactly one of calls, answer"):
        from_script(bad)
    bad.write_text("turns:\n  - {answer: hi, with: {}, why: no}\n")
    with pytest.raises(ValueError, match="turn 1: a turn has calls, or an answer"):
        from_script(bad)


def test_llm_mode_with_no_script_or_no_model_is_an_error_never_a_deterministic_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unscripted = tmp_path / "scenarios" / "healthy-cluster-noop.yaml"
    unscripted.parent.mkdir()
    unscripted.write_text((SCENARIOS / unscripted.name).read_text())
    monkeypatch.delenv(MODEL_ENV, raising=False)
    monkeypatch.setenv(GUARD_ENV, "1")
    monkeypatch.setenv(SCRIPTED_ENV, FACTORY)
    guarded = run_file(unscripted, mode="llm", workdir=tmp_path / "guarded")
    assert guarded["status"] == "error" and "record" not in guarded
    assert "plays a script and builds no real model" in guarded["error"]
    assert "healthy-cluster-noop has none" in guarded["error"]

    monkeypatch.delenv(GUARD_ENV)
    unset = run_file(SCENARIOS / SCRIPTED[0].name, mode="llm", workdir=tmp_path / "unset")
    assert unset["status"] == "error" and "record" not in unset
    assert f"{MODEL_ENV}" in unset["error"] and "not set" in unset["error"]
