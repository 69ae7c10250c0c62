"""A scenario's world can be a fleet: its main sandbox and one per other cluster, one kubeconfig
naming each as a context for the crew, and objectives that read the cluster they name.

The corpus's fleet move runs end to end with one objective added that names west's replica count
wrongly: it alone fails, so each cluster's objectives read that cluster and no other. Its
sandboxes are all closed afterwards, and closed too when a cluster of the fleet cannot start. A
scenario naming a cluster the world lacks, or two clusters alike, is refused before any starts.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kubecrew.evals.format import ScenarioInvalid, load
from kubecrew.evals.run import run_file

SCENARIOS = Path(__file__).resolve().parents[3] / "evals" / "scenarios"
MOVE = SCENARIOS / "fleet-imbalance-moves-replicas.yaml"
WRONG = {
    "name": "west's api left at 4 (wrong: the move leaves 2)",
    "field": {"cluster": "west", "kind": "Deployment", "name": "api", "namespace": "shop",
              "path": "spec.replicas", "equals": 4},
}  # fmt: skip


def write(tmp_path: Path, document: dict[str, Any], name: str) -> Path:
    document["name"] = name
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def answers(kubeconfig: Path) -> bool:
    """Whether the server a sandbox's kubeconfig names still answers at all."""
    server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    try:
        httpx.get(f"{server}/version", verify=False, timeout=2)  # any answer will do
    except httpx.TransportError:
        return False
    return True


def test_objectives_read_the_cluster_they_name_and_every_sandbox_is_closed(
    tmp_path: Path,
) -> None:
    document = yaml.safe_load(MOVE.read_text())
    document["objectives"].append(WRONG)
    workdir = tmp_path / "run"

    result = run_file(write(tmp_path, document, "fleet-wrong-west"), mode="deterministic",
                      workdir=workdir)  # fmt: skip

    assert result["status"] == "fail", result
    checks = {c["name"]: c for c in result["score"]["objectives"]}
    assert [name for name, c in checks.items() if not c["ok"]] == [WRONG["name"]], checks
    assert checks[WRONG["name"]]["detail"] == "in cluster west: spec.replicas = 2 (want 4)"
    assert checks["east's api scaled up to 3"]["detail"].startswith("in cluster east: ")
    assert checks["three api pods ready in east"]["detail"] == "3 ready (want 3)"  # the main one
    assert not [s for s in result["score"]["safeguards"] if not s["ok"]]
    # what changed is seen in both clusters, west's under its name
    assert result["record"]["changed"] == ["Deployment/shop/api", "west:Deployment/shop/api"]

    merged = workdir / "fleet.kubeconfig"
    config = yaml.safe_load(merged.read_text())
    assert [c["name"] for c in config["contexts"]] == ["east", "west"]
    assert config["current-context"] == "east"
    assert stat.S_IMODE(merged.stat().st_mode) == 0o600  # it holds both clusters' tokens
    sandboxes = [workdir / "sandbox" / "kubeconfig",
                 workdir / "clusters" / "west" / "sandbox" / "kubeconfig"]  # fmt: skip
    assert [answers(k) for k in sandboxes] == [False, False]


def test_a_cluster_that_cannot_start_leaves_no_sandbox_running(tmp_path: Path) -> None:
    document = yaml.safe_load(MOVE.read_text())
    document["world"]["clusters"].append(
        {"name": "north", "nodes": 1, "manifests": [{
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "lost", "namespace": "nowhere"}, "data": {"a": "b"},
        }]}
    )  # fmt: skip
    workdir = tmp_path / "run"

    result = run_file(write(tmp_path, document, "fleet-north-fails"), mode="deterministic",
                      workdir=workdir)  # fmt: skip

    assert result["status"] == "error", result
    assert "nowhere" in result["error"], result["error"]
    started = [workdir / "sandbox" / "kubeconfig",
               workdir / "clusters" / "west" / "sandbox" / "kubeconfig"]  # fmt: skip
    assert all(k.exists() for k in started)
    assert [answers(k) for k in started] == [False, False]


def unknown_cluster(doc: dict[str, Any]) -> None:
    doc["objectives"][2]["pods_ready"]["cluster"] = "north"


def main_named_like_another(doc: dict[str, Any]) -> None:
    doc["world"]["cluster_name"] = "west"


def not_a_dns_label(doc: dict[str, Any]) -> None:
    doc["world"]["clusters"][0]["name"] = "West_1"


def one_cluster(doc: dict[str, Any]) -> None:
    del doc["world"]["clusters"], doc["world"]["cluster_name"]


def main_name_alone(doc: dict[str, Any]) -> None:
    del doc["world"]["clusters"]


REFUSED = [
    pytest.param(unknown_cluster,
                 "objectives[2].pods_ready.cluster: 'north' is not a cluster of this world "
                 "(east, west)", id="unknown-cluster"),
    pytest.param(main_named_like_another,
                 "world: clusters[0].name 'west' is already the main cluster's (cluster_name, "
                 "default east): give each cluster a name of its own", id="two-clusters-alike"),
    pytest.param(not_a_dns_label, "world.clusters[0].name: 'West_1' is not a DNS label",
                 id="not-a-dns-label"),
    pytest.param(one_cluster,
                 "objectives[1].field.cluster: 'west' names a cluster, and this world has one: "
                 "give world.clusters", id="a-cluster-named-in-a-world-of-one"),
    pytest.param(main_name_alone,
                 "world: cluster_name names the main cluster of a fleet: give clusters too",
                 id="a-main-name-without-a-fleet"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "problem"), REFUSED)
def test_a_fleet_named_wrongly_is_refused_before_anything_starts(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], problem: str
) -> None:
    document = yaml.safe_load(MOVE.read_text())
    change(document)

    with pytest.raises(ScenarioInvalid) as refused:
        load(write(tmp_path, document, "fleet-refused"))

    assert any(problem in line for line in refused.value.problems), refused.value.problems
