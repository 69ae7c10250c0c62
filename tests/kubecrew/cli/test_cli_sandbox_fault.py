"""`kubecrew sandbox fault ...` and `up --scenario` as a user runs them: the real console script
against a sandbox started with `kubecrew sandbox up --detach`, checked through kubectl and the
admin endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.sandbox_command import assert_one_line_error, kubecrew, stop

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("cli-fault") / "sandbox"
    started = kubecrew("sandbox", "up", "--detach", "--rate", "10", "--seed", "7", home=where)
    assert started.returncode == 0, started.stderr
    try:
        yield where
    finally:
        stop(where)


@pytest.fixture
def clean(home: Path) -> Iterator[Path]:
    yield home
    kubecrew("sandbox", "fault", "clear", "--all", home=home)


def _rows(home: Path) -> list[list[str]]:
    done = kubecrew("sandbox", "fault", "list", home=home)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    if lines == ["No faults."]:
        return []
    assert lines[0].split() == ["ID", "KIND", "STATE", "SINCE", "PARAMS"]
    return [line.split() for line in lines[1:]]


def test_fault_add_list_and_clear_round_trip(clean: Path) -> None:
    added = kubecrew("sandbox", "fault", "add", "node-heartbeat", "--node", "node-2", home=clean)
    assert added.returncode == 0, added.stderr
    fault_id = added.stdout.split()[1]
    assert added.stdout.startswith(f"Fault {fault_id} added: node-heartbeat")
    assert f"kubecrew sandbox fault clear {fault_id}" in added.stdout
    [row] = _rows(clean)
    assert (row[0], row[1], row[2], row[-1]) == (
        fault_id,
        "node-heartbeat",
        "active",
        "node=node-2",
    )
    cleared = kubecrew("sandbox", "fault", "clear", fault_id, home=clean)
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.strip() == f"Cleared {fault_id} (node-heartbeat)."
    assert _rows(clean) == []


def test_fault_list_as_json_and_yaml_is_the_admin_endpoints_record(clean: Path) -> None:
    added = kubecrew("sandbox", "fault", "add", "node-heartbeat", "--node", "node-2", home=clean)
    assert added.returncode == 0, added.stderr
    as_json = kubecrew("sandbox", "fault", "list", "-o", "json", home=clean)
    as_yaml = kubecrew("sandbox", "fault", "list", "-o", "yaml", home=clean)
    assert as_json.returncode == as_yaml.returncode == 0, as_json.stderr + as_yaml.stderr
    [fault] = json.loads(as_json.stdout)
    assert yaml.safe_load(as_yaml.stdout) == [fault]
    assert (fault["id"], fault["kind"], fault["state"]) == (
        added.stdout.split()[1],
        "node-heartbeat",
        "active",
    )
    assert fault["params"] == {"node": "node-2"}


def test_params_are_typed_and_nested(clean: Path) -> None:
    for args in (
        ("memory-leak", "-n", "shop", "-l", "app=api", "-p", "rate=10Mi"),
        ("app-profile", "-l", "app=web", "-p", "changes.cpu_millis=900"),
        ("api", "-p", "error_rate=0", "-p", "timeout_rate=0.001"),
    ):
        done = kubecrew("sandbox", "fault", "add", *args, home=clean)
        assert done.returncode == 0, done.stderr
    rows = {row[1]: " ".join(row[4:]) for row in _rows(clean)}
    assert '"memory_growth": 10485760.0' in rows["memory-leak"]
    assert 'selector={"app": "api"}' in rows["memory-leak"]
    assert '"cpu_millis": 900.0' in rows["app-profile"]
    assert "timeout_rate=0.001" in rows["api"]
    cleared = kubecrew("sandbox", "fault", "clear", "--all", home=clean)
    assert cleared.stdout.strip() == "Cleared 3 faults."


def test_api_fault_from_the_cli_reaches_kubectl(clean: Path, tmp_path: Path) -> None:
    kubectl = Kubectl(clean / "kubeconfig", tmp_path / "kube-cache")
    kubectl("get", "nodes")  # warm the discovery cache
    added = kubecrew("sandbox", "fault", "add", "api", "-p", "error_rate=1", home=clean)
    assert added.returncode == 0, added.stderr
    failed = kubectl.run("get", "pods", "-A", check=False)
    assert failed.returncode != 0
    assert "Internal error occurred: injected by a sandbox API fault" in failed.stderr
    kubecrew("sandbox", "fault", "clear", "--all", home=clean)
    kubectl("get", "pods", "-A")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(("add", "node-heartbeat"), "field 'node': is required", id="missing-field"),
        pytest.param(("add", "volcano"), "field 'kind'", id="unknown-kind"),
        pytest.param(
            ("add", "node-heartbeat", "--node", "node-9"),
            "field 'node': names no node here (node-1, node-2, node-3)",
            id="unknown-node",
        ),
        pytest.param(("add", "slow", "-p", "latency_ms"), "key=value", id="param-without-value"),
        pytest.param(("clear", "f-999"), 'fault "f-999" not found', id="unknown-id"),
        pytest.param(("clear",), "give a fault ID or --all", id="clear-nothing"),
        pytest.param(("clear", "f-1", "--all"), "give a fault ID or --all", id="clear-both"),
    ],
)
def test_bad_fault_commands_are_one_clear_line(
    home: Path, args: tuple[str, ...], says: str
) -> None:
    line = assert_one_line_error(kubecrew("sandbox", "fault", *args, home=home))
    assert says in line
    assert "answered 4" not in line  # what to fix, not how the HTTP exchange went


def test_fault_without_a_running_sandbox_says_how_to_start_one(tmp_path: Path) -> None:
    done = kubecrew("sandbox", "fault", "list", home=tmp_path / "nothing-here")
    line = assert_one_line_error(done)
    assert "no sandbox is running" in line and "kubecrew sandbox up --detach" in line


@pytest.mark.parametrize(
    ("args", "teaches"),
    [
        pytest.param(("fault",), "kubecrew sandbox fault add node-heartbeat", id="fault"),
        pytest.param(("fault", "add"), "kubecrew sandbox fault add memory-leak", id="add"),
        pytest.param(("fault", "list"), "kubecrew sandbox fault list", id="list"),
        pytest.param(("fault", "clear"), "kubecrew sandbox fault clear --all", id="clear"),
        pytest.param(("up",), "--scenario scenarios/shop.yaml --rate 10", id="up-scenario"),
    ],
)
def test_fault_commands_have_help_with_examples(args: tuple[str, ...], teaches: str) -> None:
    done = kubecrew("sandbox", *args, "--help")
    assert done.returncode == 0, done.stderr
    assert teaches in " ".join(done.stdout.split())


def test_up_with_a_scenario_starts_its_nodes(tmp_path: Path) -> None:
    where = tmp_path / "sandbox"
    scenario = SCENARIOS / "gpu-fleet.yaml"
    try:
        started = kubecrew(
            "sandbox", "up", "--detach", "--scenario", str(scenario), "--rate", "5", home=where
        )
        assert started.returncode == 0, started.stderr
        assert "with 6 nodes" in started.stdout
        rows = _rows(where)
        assert [(r[1], r[2]) for r in rows] == [("gpu-fault", "scheduled")]
        kubectl = Kubectl(where / "kubeconfig", tmp_path / "kube-cache")
        gpus = kubectl("get", "node", "gpu-1", "-o", "jsonpath={.status.capacity.nvidia\\.com/gpu}")
        assert gpus == "8"
    finally:
        stop(where)


def test_up_with_a_bad_scenario_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: sandbox.kubecrew.io/v1alpha1\nkind: Scenario\nmetadata: {}\n")
    for mode in ((), ("--detach",)):
        line = assert_one_line_error(
            kubecrew("sandbox", "up", *mode, "--scenario", str(bad), home=tmp_path / "sandbox")
        )
        assert f"bad scenario: {bad}: metadata.name: is required" in line
