"""The crew's monitoring files (deploy/monitoring): the alerting rules pass `promtool check
rules` and fire as meant on made-up series (`promtool test rules`); every expression of the
Grafana dashboard is valid PromQL and, like every rule, names only metrics the crew's registry
exposes (core.telemetry); the kustomization renders both as ConfigMaps."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.policy.store.base import Store
from core.telemetry import REGISTRY, WaitingApprovals
from tests.support.kubectl import KUBECTL

ROOT = Path(__file__).resolve().parents[3]
MONITORING = ROOT / "deploy" / "monitoring"
RULES = MONITORING / "kubecrew-rules.yaml"
DASHBOARD = MONITORING / "kubecrew-dashboard.json"
PROMTOOL = shutil.which("promtool")
METRIC = re.compile(r"\bkubecrew_[a-z0-9_]+")
SUFFIXES = {"counter": ("_total", "_created"), "gauge": ("",),
            "histogram": ("_bucket", "_count", "_sum", "_created")}  # fmt: skip

pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="no promtool: `make install` brings it")

# Made-up series and the alerts they must raise (promtool's unit-test format): a Lease nobody
# holds, two leaders, an approval waiting for five hours, heals escalating, a tool server failing.
RULE_TESTS = """
rule_files: [RULES]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'kubecrew_leader{lease="kubecrew-watch", pod="a"}'
        values: '0x10'
      - series: 'kubecrew_leader{lease="kubecrew-watch", pod="b"}'
        values: '0x10'
      - series: 'kubecrew_leader{lease="kubecrew-run-platform", pod="a"}'
        values: '1x10'
      - series: 'kubecrew_leader{lease="kubecrew-run-platform", pod="b"}'
        values: '1x10'
      - series: 'kubecrew_approvals_oldest_wait_seconds{pod="a"}'
        values: '18000x10'
      - series: 'kubecrew_heals_total{agent="dev_team", outcome="escalated", reason="refused"}'
        values: '0 1 2 3 4 5 6 7 8 9 10'
      - series: 'kubecrew_tool_calls_total{server="gitops", tool="sync", outcome="error"}'
        values: '0+10x30'
      - series: 'kubecrew_tool_calls_total{server="gitops", tool="sync", outcome="ok"}'
        values: '0+10x30'
      - series: 'kubecrew_tool_calls_total{server="kube", tool="diagnose", outcome="ok"}'
        values: '0+10x30'
    alert_rule_test:
      - eval_time: 5m
        alertname: KubecrewNoLeader
        exp_alerts:
          - exp_labels: {severity: critical, lease: kubecrew-watch}
            exp_annotations:
              summary: No replica holds the Lease kubecrew-watch
              description: >-
                `kubectl get lease kubecrew-watch -n kubecrew-system` shows the last holder;
                the replicas' logs say why none renews it (RBAC, the API server).
      - eval_time: 5m
        alertname: KubecrewTwoLeaders
        exp_alerts:
          - exp_labels: {severity: critical, lease: kubecrew-run-platform}
            exp_annotations:
              summary: 2 replicas hold the Lease kubecrew-run-platform at once
              description: >-
                Work may be done twice. Check the replicas' clocks and their access to the API
                server; stopping one replica ends it.
      - eval_time: 1m
        alertname: KubecrewApprovalWaitingTooLong
        exp_alerts: []
      - eval_time: 10m
        alertname: KubecrewApprovalWaitingTooLong
        exp_alerts:
          - exp_labels: {severity: warning}
            exp_annotations:
              summary: An approval request has waited 5h 0m 0s
              description: >-
                `kubecrew approvals list` shows the pending requests and who may answer them
                (Slack, a pull request review, or `kubecrew approvals grant|deny`).
      - eval_time: 10m
        alertname: KubecrewHealsEscalating
        exp_alerts:
          - exp_labels: {severity: warning, agent: dev_team, reason: refused}
            exp_annotations:
              summary: dev_team escalated 10 heals in an hour (refused)
              description: >-
                The remediation loop ended with a person three times or more in the last hour,
                for the same reason. `kubecrew status` lists the open incidents; the audit log
                has the evidence each escalation cites.
      - eval_time: 25m
        alertname: KubecrewToolErrorsHigh
        exp_alerts:
          - exp_labels: {severity: warning, server: gitops}
            exp_annotations:
              summary: 50% of the gitops server's tool calls fail
              description: >-
                The agents' calls to the gitops MCP server keep failing: the cluster,
                Prometheus, the forge or the policy store behind it may be unreachable, or a
                gate refuses. The traces' execute_tool spans name the tools.
"""


def promtool(*args: str) -> str:
    assert PROMTOOL is not None
    done = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def exposed() -> set[str]:
    """Every series name the crew's parts can expose."""

    def unread() -> Store:
        raise AssertionError("describing the approvals' metrics reads no store")

    families = [*REGISTRY.collect(), *WaitingApprovals(unread).describe()]
    return {f.name + suffix for f in families for suffix in SUFFIXES.get(f.type, ("",))}


def dashboard_exprs() -> list[str]:
    def panels(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [p for item in items for p in (item, *panels(item.get("panels", [])))]

    board = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in panels(board["panels"]) for t in p.get("targets", [])]


def test_the_rules_pass_promtool() -> None:
    assert "SUCCESS: 13 rules found" in promtool("check", "rules", str(RULES))


def test_the_alerts_fire_on_the_series_they_are_about(tmp_path: Path) -> None:
    tests = tmp_path / "kubecrew-rules.test.yaml"
    tests.write_text(RULE_TESTS.replace("[RULES]", f"[{RULES}]"))
    assert "SUCCESS" in promtool("test", "rules", str(tests))


def test_every_metric_the_rules_and_the_dashboard_name_is_the_crews() -> None:
    rules = yaml.safe_load(RULES.read_text())
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]] + dashboard_exprs()
    named = {name for expr in exprs for name in METRIC.findall(expr)}
    assert named - exposed() == set()
    # and the dashboard shows every metric family the crew has
    shown = {re.sub(r"_(total|bucket|count|sum)$", "", n) for n in named}
    assert {f.name for f in REGISTRY.collect()} <= shown


def test_every_dashboard_expression_is_valid_promql(tmp_path: Path) -> None:
    grafana = {"$__rate_interval": "5m", "$__range": "6h", "$__interval": "1m"}
    rules = []
    for n, expr in enumerate(dashboard_exprs()):
        for variable, value in grafana.items():
            expr = expr.replace(variable, value)
        assert "$" not in expr, expr
        rules.append({"record": f"kubecrew_dashboard:panel_{n}", "expr": expr})
    checked = tmp_path / "dashboard-as-rules.yaml"
    checked.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    assert f"SUCCESS: {len(rules)} rules found" in promtool("check", "rules", str(checked))


def test_the_kustomization_makes_the_two_configmaps() -> None:
    done = subprocess.run([KUBECTL, "kustomize", str(MONITORING)], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    maps = {d["metadata"]["name"]: d for d in yaml.safe_load_all(done.stdout) if d}
    assert set(maps) == {"kubecrew-prometheus-rules", "kubecrew-grafana-dashboard"}
    rules = maps["kubecrew-prometheus-rules"]
    assert rules["metadata"]["namespace"] == "kubecrew-system"
    assert rules["data"]["kubecrew-rules.yaml"] == RULES.read_text()
    board = maps["kubecrew-grafana-dashboard"]
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(board["data"]["kubecrew-dashboard.json"])["uid"] == "kubecrew-overview"
