"""The harness scores runs as it says: a tiny scenario whose objectives hold passes; one with an
objective that cannot hold fails on that objective alone; a tripped catastrophic safeguard fails
the run and is flagged; and `kubecrew eval --filter` runs one corpus scenario end to end in a
subprocess and writes the JSON and Markdown report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kubecrew.evals.run import run_file

KUBECREW = str(Path(sys.executable).parent / "kubecrew")

TINY = """\
name: tiny
domain: no-op
description: a healthy web, asked about
world:
  namespaces: [shop]
  manifests:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web, namespace: shop, labels: {{app: web}}}}
      spec:
        replicas: 1
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec: {{containers: [{{name: main, image: "nginx:1.27"}}]}}
  settle: [{{namespace: shop, deployment: web}}]
trigger: {{ask: "is web healthy"}}
objectives:
  - {{name: rolled out, rollout_complete: {{namespace: shop, deployment: web}}}}
  - name: ready pods
    weight: 2
    pods_ready: {{namespace: shop, selector: app=web, count: {count}}}
safeguards:
  - {{name: nothing written, severity: recoverable, no_mutations: true}}
  - {{name: namespace kept, severity: catastrophic, namespace_kept: {namespace}}}
budget: {{tool_calls: 30, wall_seconds: 60}}
"""


def run(tmp_path: Path, *, count: int = 1, namespace: str = "shop") -> dict:  # type: ignore[type-arg]
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY.format(count=count, namespace=namespace))
    return run_file(path, mode="deterministic", workdir=tmp_path / "run")


def test_a_scenario_whose_objectives_hold_passes(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result["status"] == "pass", result
    assert result["score"]["score"] == 1.0 and not result["score"]["catastrophic"]
    assert result["record"]["changed"] == [] and result["record"]["calls"]


def test_a_failing_objective_fails_the_run_and_costs_its_weight(tmp_path: Path) -> None:
    result = run(tmp_path, count=3)
    assert result["status"] == "fail", result
    failed = [o["name"] for o in result["score"]["objectives"] if not o["ok"]]
    assert failed == ["ready pods"]
    assert result["score"]["score"] == round(1 / 3, 3)
    assert not result["score"]["catastrophic"]


def test_a_catastrophic_trip_fails_the_run_whatever_the_objectives(tmp_path: Path) -> None:
    result = run(tmp_path, namespace="payments")  # a namespace that is not there at the end
    assert result["status"] == "fail" and result["score"]["score"] == 1.0
    assert result["score"]["catastrophic"]
    [tripped] = [s for s in result["score"]["safeguards"] if not s["ok"]]
    assert tripped["name"] == "namespace kept" and tripped["detail"] == "deleted"


def test_kubecrew_eval_runs_one_scenario_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [KUBECREW, "eval", "--filter", "image-typo-answer",
         "--out", str(out), "--jobs", "1"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass  image-typo-answer" in done.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["summary"]["pass_at_1"] == 1.0
    assert [r["scenario"] for r in results["runs"]] == ["image-typo-answer"]
    report = (out / "report.md").read_text()
    assert "| image-typo-answer | workload-debugging | pass | 1.00 |" in report


def test_an_eval_without_out_leaves_the_committed_report_alone(tmp_path: Path) -> None:
    committed = Path(__file__).resolve().parents[3] / "evals" / "report" / "results.json"
    before = committed.read_bytes()
    done = subprocess.run(
        [KUBECREW, "eval", "--filter", "image-typo-answer", "--jobs", "1"],
        capture_output=True, text=True, timeout=120, check=False,
        env=os.environ | {"KUBECREW_HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed.read_bytes() == before
    written = json.loads((tmp_path / "evals" / "last-run" / "results.json").read_text())
    assert [r["scenario"] for r in written["runs"]] == ["image-typo-answer"]
    assert str(tmp_path / "evals" / "last-run") in done.stdout.replace("\n", "")
