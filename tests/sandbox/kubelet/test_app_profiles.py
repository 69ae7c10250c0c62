"""Public images run their application's profile (`catalog/apps.yaml`): they listen on the
application's real ports, answer its health paths, log their start where they listen and refuse
to start without the env their image requires; the data is checked when it loads."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.kubelet import apps
from sandbox.kubelet.catalog import entries
from sandbox.kubelet.images import ImageCatalog
from sandbox.kubelet.profiles import DEFAULT_PROFILE, app_profiles
from tests.sandbox.kubelet.podspecs import container, logs, messages, pod, status
from tests.support.simulation import Simulation, ready

CATALOG = ImageCatalog.default()


def test_every_app_is_the_profile_of_some_repository() -> None:
    used = {entry.profile for entry in entries()}
    assert {profile.name for profile in app_profiles()} - used == set()


def test_no_repository_runs_the_generic_web_profile() -> None:
    assert [e.repository for e in entries() if e.profile == DEFAULT_PROFILE] == []


@pytest.mark.parametrize(
    ("reference", "app"),
    [
        pytest.param("prom/prometheus:v2.53.0", "prometheus", id="prom-prometheus"),
        pytest.param("quay.io/prometheus/prometheus:v2.53.0", "prometheus", id="quay-prometheus"),
        pytest.param("vault:1.13.3", "vault", id="library-vault"),
        pytest.param("hashicorp/vault:1.18.0", "vault", id="hashicorp-vault"),
        pytest.param("mongo:7.0", "mongo", id="mongo"),
        pytest.param("bitnami/mongodb:7.0", "bitnami-mongodb", id="bitnami-mongodb"),
        pytest.param("eclipse-mosquitto:2.0", "mosquitto", id="mosquitto"),
    ],
)
def test_an_image_runs_its_applications_profile(reference: str, app: str) -> None:
    image = CATALOG.resolve(reference)
    assert image is not None and image.profile == app


def _probed(sim: Simulation, name: str, image: str, probe: dict[str, Any]) -> None:
    spec = {"name": "app", "image": image, "readinessProbe": {**probe, "periodSeconds": 5}}
    sim.apply(pod(name, spec))


def test_mongo_is_ready_on_27017_and_never_on_8080() -> None:
    sim = Simulation(nodes=1)
    _probed(sim, "right", "mongo:7.0", {"tcpSocket": {"port": 27017}})
    _probed(sim, "wrong", "mongo:7.0", {"tcpSocket": {"port": 8080}})
    sim.run_until(lambda: ready(sim.get("pods", "default", "right")), timeout=30)
    sim.run_for(30)
    assert not ready(sim.get("pods", "default", "wrong"))
    ip = status(sim, "wrong")["podIP"]
    assert set(messages(sim, "wrong", "Unhealthy")) == {
        f"Readiness probe failed: dial tcp {ip}:8080: connect: connection refused"
    }
    assert "Waiting for connections" in logs(sim, "right", "app")


def test_prometheus_answers_its_readiness_path_on_9090() -> None:
    sim = Simulation(nodes=1)
    _probed(sim, "prom", "prom/prometheus:v2.53.0", {"httpGet": {"path": "/-/ready", "port": 9090}})
    sim.run_until(lambda: ready(sim.get("pods", "default", "prom")), timeout=30)
    assert not any("statuscode" in m for m in messages(sim, "prom", "Unhealthy"))


def test_a_service_to_grafana_port_3000_reaches_its_health_endpoint() -> None:
    sim = Simulation(nodes=1)
    probe = {"httpGet": {"path": "/api/health", "port": 3000}, "periodSeconds": 2}
    grafana = {"name": "grafana", "image": "grafana/grafana:11.4.0", "readinessProbe": probe}
    sim.apply(pod("grafana", grafana, metadata={"labels": {"app": "grafana"}}))
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "grafana"},
            "spec": {"selector": {"app": "grafana"}, "ports": [{"port": 3000}]},
        }
    )
    sim.run_until(lambda: ready(sim.get("pods", "default", "grafana")), timeout=30)
    fetch = ["wget", "-qO-", "http://grafana:3000/api/health"]
    client = {"name": "client", "image": "busybox:1.36", "command": fetch}
    sim.apply(pod("client", client, restartPolicy="Never"))
    sim.run_until(lambda: status(sim, "client")["phase"] == "Succeeded", timeout=30)
    assert logs(sim, "client", "client") == "OK /api/health\n"


@pytest.mark.parametrize(
    ("image", "line"),
    [
        pytest.param("kapacitor:1.7", 'level=info msg="listening" addr=":9092"', id="derived"),
        pytest.param("vault:1.13.3", "==> Vault server started!", id="its-own"),
    ],
)
def test_an_app_logs_its_start_where_it_listens(image: str, line: str) -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("app", {"name": "app", "image": image}))
    sim.run_for(5)
    assert line in logs(sim, "app", "app")
    assert ":8080" not in logs(sim, "app", "app")


def test_couchdb_without_an_admin_exits_1_and_with_one_runs() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("bare", {"name": "couchdb", "image": "couchdb:3.3"}))
    admin = [{"name": "COUCHDB_USER", "value": "admin"}, {"name": "COUCHDB_PASSWORD", "value": "x"}]
    sim.apply(pod("admin", {"name": "couchdb", "image": "couchdb:3.3", "env": admin}))
    sim.run_until(lambda: container(sim, "bare")["restartCount"] >= 1, timeout=30)
    assert container(sim, "bare")["lastState"]["terminated"]["exitCode"] == 1
    assert '"Admin Party"' in logs(sim, "bare", "couchdb", previous=True)
    assert container(sim, "admin")["restartCount"] == 0
    assert container(sim, "admin")["state"].keys() == {"running"}


GOOD = "apps:\n  thing:\n    base: web\n    ports: [4000]\n    paths: [/health]\n"


def test_the_loader_reads_a_well_formed_entry() -> None:
    (thing,) = apps.parse(GOOD, bases={"web"})
    assert (thing.name, thing.ports, thing.paths, thing.startup) == (
        "thing",
        (4000,),
        ("/health",),
        None,
    )


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        pytest.param(GOOD.replace("base: web", "base: wbe"), "base", "no built-in", id="base"),
        pytest.param(GOOD.replace("[4000]", "[70000]"), "ports", "70000", id="port-range"),
        pytest.param(GOOD.replace("[4000]", '["4000"]'), "ports", "'4000'", id="port-type"),
        pytest.param(GOOD.replace("[4000]", "[true]"), "ports", "True", id="port-bool"),
        pytest.param(GOOD.replace("paths:", "pahts:"), "pahts", "unknown field", id="unknown"),
        pytest.param(GOOD.replace("    ports: [4000]\n", ""), "ports", "required", id="missing"),
        pytest.param(GOOD.replace("[/health]", "[health]"), "paths", "'health'", id="path"),
        pytest.param(GOOD + "    startup: soon\n", "startup", "'soon'", id="startup"),
        pytest.param(GOOD.replace("thing:", "web:"), "name", "built-in", id="name-taken"),
    ],
)
def test_the_loader_names_the_app_and_field_of_a_mistake(
    text: str, field: str, problem: str
) -> None:
    with pytest.raises(ValueError) as caught:
        apps.parse(text, bases={"web"})
    app = "web" if field == "name" else "thing"
    assert str(caught.value).startswith(f"apps.yaml: app {app}: {field}: ")
    assert problem in str(caught.value)
