"""`kubecrew ask` as a person runs it: a subprocess against a sandbox, the answer on stdout,
progress on stderr, 2 and the question for an ambiguous name, 1 and one line for no cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sandbox.server import Sandbox
from tests.support.crew import state_of
from tests.support.diagnosis import NS, Doctor, deployment
from tests.support.kubectl import Kubectl

KUBECREW = Path(sys.executable).parent / "kubecrew"


def ask(home: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECREW_HOME": str(home), "KUBECREW_MODEL_GUARD": "1"}
    env.pop("KUBECREW_MODEL", None)
    return subprocess.run(
        [str(KUBECREW), "ask", *arguments], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def broken(sandbox: Sandbox, kubectl: Kubectl) -> Path:
    for namespace in (NS, "staging"):
        kubectl("create", "namespace", namespace)
        command = ["sh", "-c", "echo config is broken; exit 3"]
        container = {"image": "busybox:1.36", "command": command}
        kubectl("apply", "-f", "-", input=deployment("web", container, namespace=namespace))
    Doctor(sandbox).finding("CrashLoopBackOff", namespace=NS, kind="deployment", name="web")
    return sandbox.kubeconfig


def test_ask_answers_on_stdout_with_progress_on_stderr(broken: Path, tmp_path: Path) -> None:
    done = ask(tmp_path, "why is web failing?", "--kubeconfig", str(broken), "-n", NS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Deployment web in shop is failing:")
    assert '"config is broken"' in done.stdout
    assert "tool diagnose" in done.stderr and "answer done" in done.stderr
    assert (state_of(tmp_path, broken) / "agents" / "dev_team" / "checkpoints.sqlite").is_file()

    data = ask(tmp_path, "web keeps crashing", "--kubeconfig", str(broken), "-n", NS, "--json")
    assert data.returncode == 0, data.stderr
    report = json.loads(data.stdout)
    assert report["cause"]["code"] == "CrashLoopBackOff" and report["changed_nothing"]


def test_ask_as_data_holds_the_answer_and_the_evidence_it_rests_on(
    broken: Path, tmp_path: Path
) -> None:
    asked = ("web keeps crashing", "--kubeconfig", str(broken), "-n", NS, "-q")
    as_yaml = ask(tmp_path, *asked, "-o", "yaml")
    assert as_yaml.returncode == 0, as_yaml.stderr
    found = yaml.safe_load(as_yaml.stdout)
    assert found["answer"].startswith("Deployment web in shop is failing:")
    assert found["task"] == "diagnose" and found["clarifying"] is False
    assert found["target"] == {"kind": "Deployment", "name": "web", "namespace": NS}
    assert found["cause"]["code"] == "CrashLoopBackOff" and found["changed_nothing"]
    assert found["cause"]["evidence"][0] in found["evidence"]
    assert all(change["outcome"] == "recommended" for change in found["changes"])
    assert found["links"] == []
    as_json = json.loads(ask(tmp_path, *asked, "-o", "json").stdout)
    assert list(as_json) == list(found)  # one record, whichever format


def test_an_ambiguous_name_prints_the_question_and_exits_2(broken: Path, tmp_path: Path) -> None:
    done = ask(tmp_path, "why is web failing?", "--kubeconfig", str(broken))
    assert done.returncode == 2, done.stderr
    assert "Deployment web in shop, or Deployment web in staging" in done.stdout


def test_no_cluster_is_one_clear_line(sandbox: Sandbox, tmp_path: Path) -> None:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    for cluster in config["clusters"]:
        cluster["cluster"]["server"] = "https://127.0.0.1:1"
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(yaml.safe_dump(config))
    done = ask(tmp_path, "why is web failing?", "--kubeconfig", str(dead))
    assert done.returncode == 1
    assert "no cluster reachable" in done.stderr and "Traceback" not in done.stderr


def test_ask_sends_a_question_about_an_upgrade_to_the_cluster_operator(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    done = ask(
        tmp_path, "are we ready to upgrade to 1.38?", "--kubeconfig", str(sandbox.kubeconfig)
    )

    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(
        ("Ready to upgrade v1.37.0 to v1.38", "Not ready to upgrade v1.37.0")
    ), done.stdout
    assert "Nothing was changed" in done.stdout
    assert (state_of(tmp_path, sandbox.kubeconfig) / "agents" / "cluster_operator").is_dir()
