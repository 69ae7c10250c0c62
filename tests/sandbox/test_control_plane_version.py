"""The control plane's version, as `/version` and `kubectl version` report it: moved by the admin
endpoint (an upgrade of the control plane) or set by a scenario's `spec.version`, which a
KubeadmControlPlane among its manifests agrees with."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from sandbox import scenario
from sandbox.scenario import ScenarioError
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import control_plane, control_plane_of, pool
from tests.support.simulation import Simulation

VERSION = "/kubecrew/v1/version"
HEAD = "apiVersion: sandbox.kubecrew.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"


@pytest.fixture
def admin(sandbox: Sandbox) -> Iterator[httpx.Client]:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    context = httpx.create_ssl_context(verify=True)
    context.load_verify_locations(cadata=ca.decode())
    token = config["users"][0]["user"]["token"]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=sandbox.url, verify=context, headers=headers) as client:
        yield client


@pytest.mark.kubectl
def test_an_admin_call_moves_the_version_kubectl_sees(
    admin: httpx.Client, kubectl: Kubectl
) -> None:
    assert admin.get(VERSION).json()["gitVersion"] == "v1.37.0"
    moved = admin.put(VERSION, json={"gitVersion": "v1.38.1"})
    assert moved.status_code == 200, moved.text
    assert (moved.json()["gitVersion"], moved.json()["minor"]) == ("v1.38.1", "38")
    server = json.loads(kubectl("version", "-o", "json"))["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", "38", "v1.38.1")
    assert server["minCompatibilityMinor"] == "37"


@pytest.mark.parametrize("body", [{"gitVersion": "1.38"}, {"version": "v1.38.0"}, ["v1.38.0"]])
def test_a_version_that_is_not_a_release_is_refused(admin: httpx.Client, body: object) -> None:
    refused = admin.put(VERSION, json=body)
    assert refused.status_code == 400
    assert "must be a Kubernetes version such as v1.37.2" in refused.json()["message"]
    assert admin.get(VERSION).json()["gitVersion"] == "v1.37.0"


def test_a_scenario_sets_the_version_and_can_bring_a_node_pool(tmp_path: Path) -> None:
    manifests = "".join(f"    - {json.dumps(obj)}\n" for obj in pool(replicas=2))
    path = tmp_path / "upgrade.yaml"
    path.write_text(HEAD + f"spec:\n  version: v1.37.2\n  nodes: 0\n  manifests:\n{manifests}")
    plan = scenario.load(path)
    assert plan.make_world().control_plane_version == "v1.37.2"
    sim = Simulation(nodes=0, world=plan.make_world())
    plan.apply(sim.cluster)
    sim.run_for(60)
    assert len(sim.list("nodes")) == 2


def test_a_scenario_version_must_be_a_release(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + "spec:\n  version: '1.38'\n")
    with pytest.raises(ScenarioError) as caught:
        scenario.load(path)
    assert caught.value.field == "spec.version"
    assert "v1.37.2" in caught.value.reason


def test_a_scenario_and_its_kubeadm_control_plane_agree_on_the_version(tmp_path: Path) -> None:
    path = tmp_path / "kcp.yaml"
    manifests = f"    - {json.dumps(control_plane('1.37.2'))}\n"
    path.write_text(HEAD + f"spec:\n  nodes: 0\n  manifests:\n{manifests}")
    plan = scenario.load(path)
    assert plan.make_world().control_plane_version == "v1.37.2"
    sim = Simulation(nodes=0, world=plan.make_world())
    plan.apply(sim.cluster)
    sim.run_for(300)
    assert sim.world.control_plane_version == "v1.37.2"
    assert control_plane_of(sim)["status"]["version"] == "v1.37.2"
    path.write_text(HEAD + f"spec:\n  version: v1.37.0\n  manifests:\n{manifests}")
    with pytest.raises(ScenarioError) as caught:
        scenario.load(path)
    assert caught.value.field == "spec.version"
    assert "KubeadmControlPlane prod-control-plane asks for v1.37.2" in caught.value.reason
