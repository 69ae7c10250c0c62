"""`kubecrew policy ...` as a user runs it: the installed console script, in subprocesses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.policies import POLICIES
from tests.support.policy_command import kubecrew


def errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert all(line.startswith("error: ") for line in lines), done.stderr
    return [line.removeprefix("error: ") for line in lines]


def test_validate_prints_one_line_per_default_file() -> None:
    done = kubecrew("validate")
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in POLICIES.glob("*.yaml"))
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == [
        f"ok policies/{name}" for name in files
    ]
    assert "ok policies/capacity.yaml: CapacityPolicy shop-min-capacity, " in done.stdout


def test_validate_exits_1_with_every_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubecrew.io/v1alpha1\nkind: CapacityPolicy\nmetadata: {name: x}\n"
        "spec:\n  minReplica: 3\n  rules:\n    - {name: r, when: 'action.replicas.to <'}\n"
    )
    (tmp_path / "good.yaml").write_text((POLICIES / "priority.yaml").read_text())
    done = kubecrew("validate", str(tmp_path))
    assert errors(done) == [
        f"{bad}:5: document 1 (CapacityPolicy x): spec.minReplica: unknown field 'minReplica'; "
        "did you mean 'minReplicas'?",
        f"{bad}:7: document 1 (CapacityPolicy x): spec.rules[0].when: CEL syntax error at column "
        "21: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
        "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
    ]
    assert done.stdout == f"ok {tmp_path / 'good.yaml'}: PriorityPolicy org-priorities\n"


def test_validate_takes_policies_with_p_as_the_crews_commands_do(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text((POLICIES / "priority.yaml").read_text())
    capacity = POLICIES / "capacity.yaml"
    done = kubecrew("validate", "-p", str(good), "--policies", str(capacity))
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == [
        f"ok {good}",
        f"ok {capacity}",
    ]
    bare = kubecrew("validate", str(good), str(capacity))  # as scripts before -p said it
    assert (bare.returncode, bare.stdout) == (0, done.stdout)
    shown = " ".join(kubecrew("validate", "--help").stdout.split())
    assert "Usage: kubecrew policy validate [OPTIONS] Check policy files" in shown
    assert "--policies -p" in shown


def test_the_environment_adds_an_orgs_own_policies(tmp_path: Path) -> None:
    org = tmp_path / "org.yaml"
    org.write_text(
        "apiVersion: kubecrew.io/v1alpha1\nkind: CapacityPolicy\nmetadata: {name: payments}\n"
        "spec:\n  selector: {namespaces: [payments]}\n  minReplicas: 2\n"
    )
    done = kubecrew(
        "list", "--kind", "CapacityPolicy", cwd=tmp_path, env={"KUBECREW_POLICIES": str(org)}
    )
    assert done.returncode == 0, done.stderr
    names = [line.split()[1] for line in done.stdout.splitlines()[1:]]
    assert names == ["cluster-dns-capacity", "payments", "shop-min-capacity"]


def test_list_as_yaml_and_json_round_trips_through_validate(tmp_path: Path) -> None:
    as_yaml = kubecrew("list", "-o", "yaml")
    as_json = kubecrew("list", "-o", "json")
    assert as_yaml.returncode == as_json.returncode == 0
    documents = [d for d in yaml.safe_load_all(as_yaml.stdout) if d]
    assert documents == json.loads(as_json.stdout)
    shipped = [
        d for f in sorted(POLICIES.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text())
    ]
    assert len(documents) == len([d for d in shipped if d]) > 10
    (tmp_path / "all.yaml").write_text(as_yaml.stdout)
    assert kubecrew("validate", str(tmp_path / "all.yaml")).returncode == 0


def test_explain_says_each_rule_and_what_is_selected() -> None:
    done = kubecrew("explain", "shop-min-capacity")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "CapacityPolicy shop-min-capacity, by team shop (policies/capacity.yaml:2)"
    assert lines[1] == "Selects Deployment or StatefulSet in namespace shop"
    assert lines[2].startswith("rule min-replicas: a scale below 3 replicas is rejected")
    assert [line.split(":")[0] for line in lines[2:]] == [
        "rule min-replicas",
        "rule max-unavailable",
        "rule critical-headroom on scale",
    ]


def test_explain_an_unknown_name_is_one_line() -> None:
    [line] = errors(kubecrew("explain", "nope", "--kind", "PriorityPolicy"))
    assert line == "no PriorityPolicy named 'nope'; the set has: PriorityPolicy org-priorities"


def test_check_the_downscale_prints_the_citation_and_the_counter() -> None:
    done = kubecrew(
        "check", "scale", "deployment/web", "-n", "shop", "--from", "5", "--replicas", "1",
        "--metric", "cpu_utilization=0.1", "--fired-only",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Action: scale Deployment shop/web 5 -> 1 replicas directly\n" in out
    assert "Owner: team shop (agent dev-team; group shop-admins)\n" in out
    assert (
        "  REJECT   reliability CapacityPolicy shop-min-capacity / rule min-replicas: "
        "Deployment shop/web must keep at least 3 replicas; 1 asked\n"
    ) in out
    assert "  SUPPORT  cost        CostPolicy shop-underused / rule underused:" in out
    assert "\nVerdict: counter replicas=3\n  because reliability outranks cost" in out


def test_check_as_json_reads_the_target_file(tmp_path: Path) -> None:
    live = tmp_path / "web.yaml"
    live.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
        "spec: {replicas: 5}\n"
    )
    done = kubecrew(
        "check", "scale", "deployment/web", "--replicas", "3", "--target-file", str(live),
        "--metric", "cpu_utilization=0.1", "-o", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["action"]["replicas"] == {"from": 5, "to": 3}
    assert report["action"]["target"] == {"kind": "Deployment", "name": "web", "namespace": "shop"}
    assert report["verdict"]["outcome"] == "allow"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["scal", "deployment/web"], "unknown action 'scal'; one of: scale, patch, apply, delete, "
         "drain, cordon, uncordon, evict, restart, rollback, resize"),
        (["scale", "deployment/web"], "a scale action needs replicas (to, and from when known)"),
        (["scale", "web", "--replicas", "1"], "target 'web' is not KIND/NAME with a known kind"),
        (["scale", "deploy/web", "--replicas", "1", "--metric", "cpu=high"],
         "--metric cpu=high: the value must be a number, such as 0.15"),
        (["drain", "node/n1", "--now", "tomorrow"],
         "--now 'tomorrow': write an ISO 8601 time such as 2026-12-02T23:00:00+01:00"),
    ],
    ids=["unknown-action", "no-replicas", "bad-target", "bad-metric", "bad-time"],
)  # fmt: skip
def test_check_refuses_bad_arguments_in_one_line(args: list[str], message: str) -> None:
    [line] = errors(kubecrew("check", *args))
    assert line.startswith(message)
