"""Scenario files: every shipped file loads and applies; bad files name the file and the field."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sandbox import scenario
from sandbox.scenario import ScenarioError
from sandbox.server import Options, Sandbox
from tests.support.simulation import Simulation

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SHIPPED = sorted(SCENARIOS.glob("*.yaml"))
HEAD = "apiVersion: sandbox.kubecrew.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"


def _applied(path: Path) -> tuple[scenario.Scenario, Simulation]:
    plan = scenario.load(path)
    sim = Simulation(nodes=0 if plan.nodes is not None else 3, seed=plan.make_world().seed)
    plan.apply(sim.cluster)
    sim.settle()
    return plan, sim


def _write(tmp_path: Path, spec: str, *, name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(HEAD + spec)
    return path


def test_the_three_promised_scenarios_ship() -> None:
    assert {p.name for p in SHIPPED} >= {"shop.yaml", "gpu-fleet.yaml", "broken-shop.yaml"}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_scenario_loads_and_applies(path: Path) -> None:
    plan, sim = _applied(path)
    nodes = sorted(n["metadata"]["name"] for n in sim.list("nodes"))
    assert nodes == sorted(n.name for n in plan.nodes or ())
    for obj in plan.manifests:
        namespace = obj["metadata"].get("namespace", "")
        kind = sim.cluster.registry.by_kind(obj["apiVersion"], obj["kind"])
        assert kind is not None
        found = sim.cluster.store.get(kind.key, namespace, obj["metadata"]["name"])
        assert found is not None, f"{obj['kind']} {obj['metadata']['name']} was not created"


def test_shop_runs_on_three_zoned_nodes_with_its_apps() -> None:
    _, sim = _applied(SCENARIOS / "shop.yaml")
    zones = {n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in sim.list("nodes")}
    assert zones == {"zone-a", "zone-b", "zone-c"}
    deployments = {d["metadata"]["name"] for d in sim.list("deployments", "shop")}
    assert deployments == {"frontend", "api", "worker", "redis"}
    assert sim.get("statefulsets", "shop", "postgres") is not None
    assert sim.world.seed == 7


def test_gpu_fleet_nodes_carry_gpus_labels_and_taints() -> None:
    _, sim = _applied(SCENARIOS / "gpu-fleet.yaml")
    gpu = sim.get("nodes", "", "gpu-2")
    assert gpu is not None
    assert gpu["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert gpu["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert gpu["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert gpu["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    cpu = sim.get("nodes", "", "cpu-1")
    assert cpu is not None and "nvidia.com/gpu" not in cpu["status"]["capacity"]
    assert sim.get("jobs", "ml", "llm-finetune") is not None
    assert sim.world.images.resolve("ghcr.io/kubecrew/trainer:2.4.0") is not None
    trainer = sim.world.profiles.get("trainer")
    assert trainer is not None and trainer.run_seconds == 3600 and trainer.cpu_millis == 24000


def test_gpu_fleet_loses_a_gpu_at_ten_minutes() -> None:
    _, sim = _applied(SCENARIOS / "gpu-fleet.yaml")
    [fault] = sim.cluster.faults.list()
    assert (fault.kind, fault.state, fault.at) == ("gpu-fault", "scheduled", 600)
    sim.run_for(599, tick=30)
    assert "GPUHealthy" not in sim.world.node("gpu-3").conditions
    sim.run_for(31, tick=30)
    assert sim.world.node("gpu-3").conditions["GPUHealthy"].reason == "GPUFault"


def test_broken_shop_has_its_three_mistakes() -> None:
    _, sim = _applied(SCENARIOS / "broken-shop.yaml")
    web = sim.get("deployments", "broken-shop", "web")
    assert web is not None
    assert web["spec"]["template"]["spec"]["containers"][0]["image"] == "ngnix:1.27"
    assert sim.world.images.resolve("ngnix:1.27") is None
    assert sim.get("configmaps", "broken-shop", "api-config") is None
    service = sim.get("services", "broken-shop", "storefront")
    assert service is not None and service["spec"]["selector"] == {"app": "storefront"}


def test_applying_twice_changes_nothing() -> None:
    plan, sim = _applied(SCENARIOS / "broken-shop.yaml")
    before = sim.cluster.store.rv
    plan.apply(sim.cluster)
    assert sim.cluster.store.rv == before


def test_clock_spec_sets_start_rate_and_seed_unless_overridden(tmp_path: Path) -> None:
    path = _write(tmp_path, 'spec:\n  clock: {rate: 20, start: "2026-11-30T08:00:00Z", seed: 5}\n')
    plan = scenario.load(path)
    clock = plan.make_clock()
    assert clock.rate == 20
    assert abs(clock.now() - datetime(2026, 11, 30, 8, tzinfo=UTC)).total_seconds() < 60
    assert plan.make_clock(rate=0).rate == 0
    assert plan.make_world().seed == 5 and plan.make_world(seed=9).seed == 9


def test_manifest_files_are_read_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team}\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: team}}\n"
    )
    path = _write(tmp_path, "spec:\n  namespaces: [team]\n  manifests: {files: [apps/cm.yaml]}\n")
    sim = Simulation(nodes=1)
    scenario.load(path).apply(sim.cluster)
    assert {c["metadata"]["name"] for c in sim.list("configmaps", "team")} == {"a", "b"}


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        pytest.param("apiVersion: v1\nkind: Scenario\n", "apiVersion", "must be", id="api-version"),
        pytest.param(HEAD.replace("Scenario", "Pod"), "kind", "Scenario", id="kind"),
        pytest.param(HEAD + "spec: {weather: sunny}\n", "spec.weather", "unknown", id="spec-field"),
        pytest.param(
            HEAD + "spec: {clock: {rate: fast}}\n", "spec.clock.rate", "number", id="rate"
        ),
        pytest.param(
            HEAD + "spec: {clock: {start: yesterday}}\n", "spec.clock.start", "RFC 3339", id="start"
        ),
        pytest.param(
            HEAD + "spec: {nodes: [{name: a, memory: lots}]}\n",
            "spec.nodes[0].memory",
            "quantity",
            id="node-memory",
        ),
        pytest.param(
            HEAD + "spec: {nodes: [{name: a, taints: [gpu=true]}]}\n",
            "spec.nodes[0].taints[0]",
            "effect",
            id="taint",
        ),
        pytest.param(
            HEAD + "spec: {nodes: [{name: a}, {name: a}]}\n", "spec.nodes", "twice", id="dup-node"
        ),
        pytest.param(
            HEAD + "spec: {images: [{repository: x, profile: nope}]}\n",
            "spec.images[0].profile",
            "no profile",
            id="image-profile",
        ),
        pytest.param(
            HEAD + "spec: {profiles: [{name: p, base: web, colour: red}]}\n",
            "spec.profiles[0].colour",
            "not a profile field",
            id="profile-field",
        ),
        pytest.param(
            HEAD + "spec: {manifests: [{kind: Pod, metadata: {name: p}}]}\n",
            "spec.manifests[0].apiVersion",
            "required",
            id="manifest-api-version",
        ),
        pytest.param(
            HEAD + "spec: {manifests: [{files: [missing.yaml]}]}\n",
            "spec.manifests[0].files[0]",
            "cannot read",
            id="missing-file",
        ),
        pytest.param(
            HEAD + "spec: {faults: [{kind: gpu-fault}]}\n",
            "spec.faults[0].node",
            "required",
            id="fault",
        ),
        pytest.param("spec: [unclosed\n", "", "not valid YAML", id="yaml"),
    ],
)
def test_bad_scenario_names_file_and_field(
    tmp_path: Path, text: str, field: str, says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        scenario.load(path)
    assert caught.value.field == field
    assert says in caught.value.reason
    assert str(caught.value).startswith(f"{path}: ")


def test_object_the_api_refuses_is_a_scenario_error_naming_the_manifest(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "spec:\n  manifests:\n"
        "    - {apiVersion: v1, kind: ConfigMap, metadata: {name: ok}}\n"
        "    - {apiVersion: v1, kind: ConfigMap, metadata: {name: Not_Valid}}\n",
    )
    with pytest.raises(ScenarioError) as caught:
        scenario.load(path).apply(Simulation(nodes=1).cluster)
    assert caught.value.field == "spec.manifests[1]"
    assert "Not_Valid" in caught.value.reason


def test_server_option_applies_the_scenario_at_start(tmp_path: Path) -> None:
    options = Options(home=tmp_path / "sb", scenario=SCENARIOS / "gpu-fleet.yaml", rate=10)
    with Sandbox(options) as running:
        names = running.call(
            lambda c: sorted(n["metadata"]["name"] for n in c.store.list(("", "nodes")))
        )
        assert names == ["cpu-1", "cpu-2", "gpu-1", "gpu-2", "gpu-3", "gpu-4"]
        assert running.call(lambda c: (c.clock.rate, c.world.seed)) == (10, 11)


def test_server_refuses_a_bad_scenario_with_one_clear_message(tmp_path: Path) -> None:
    path = _write(tmp_path, "spec: {nodes: [{name: a, cpu: many}]}\n")
    with pytest.raises(SystemExit, match=r"bad scenario: .*spec.nodes\[0\].cpu"):
        Sandbox(Options(home=tmp_path / "sb", scenario=path)).start()


def _waiting_reason(pod: Any) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return str(((statuses[0].get("state") or {}).get("waiting") or {}).get("reason", ""))


def test_broken_shop_shows_its_mistakes_once_the_cluster_runs() -> None:
    _, sim = _applied(SCENARIOS / "broken-shop.yaml")
    sim.run_for(120, tick=5)
    reasons = {p["metadata"]["labels"]["app"]: _waiting_reason(p) for p in sim.pods("broken-shop")}
    assert reasons["web"] == "ImagePullBackOff"
    assert reasons["api"] == "CreateContainerConfigError"
    endpoints = sim.get("endpoints", "broken-shop", "storefront")
    assert endpoints is not None and not endpoints.get("subsets")
