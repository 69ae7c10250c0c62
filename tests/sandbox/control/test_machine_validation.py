"""What the API does with Cluster API objects before any controller sees them (Cluster API's
webhooks: defaults and checks, and the kinds' schemas), and how the provider fails a Machine
whose template does not exist."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.errors import Invalid, UnsupportedMediaType
from sandbox.objects import WriteOptions
from sandbox.store import Obj
from tests.support.machine_pools import (
    cluster,
    machine_deployment,
    machines,
    merge_patch,
    template,
)
from tests.support.simulation import Simulation


@pytest.fixture
def sim() -> Simulation:
    sim = Simulation(nodes=0)
    sim.apply([cluster(), template()])
    return sim


def create(sim: Simulation, obj: Obj) -> Obj:
    rt = sim.cluster.registry.by_kind(obj["apiVersion"], obj["kind"])
    assert rt is not None
    opts = WriteOptions(field_manager="test")
    return sim.objects.create(rt, obj, namespace="default", opts=opts)


def with_spec(obj: Obj, **changes: Any) -> Obj:
    return {**obj, "spec": {**obj["spec"], **changes}}


def test_a_machine_deployment_gets_cluster_api_defaults(sim: Simulation) -> None:
    md = create(sim, machine_deployment(version="1.37.2"))
    spec = md["spec"]
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    names = {
        "cluster.x-k8s.io/cluster-name": "prod",
        "cluster.x-k8s.io/deployment-name": "workers",
    }
    assert spec["selector"] == {"matchLabels": names}
    assert spec["template"]["metadata"]["labels"] == names
    assert spec["template"]["spec"]["version"] == "v1.37.2"
    assert spec["template"]["spec"]["infrastructureRef"]["namespace"] == "default"
    assert (spec["minReadySeconds"], spec["revisionHistoryLimit"]) == (0, 1)
    assert md["metadata"]["labels"] == {"cluster.x-k8s.io/cluster-name": "prod"}


def test_a_template_gets_the_default_node_shape(sim: Simulation) -> None:
    found = sim.get("sandboxmachinetemplates", "default", "standard")
    assert found is not None
    assert found["spec"]["template"]["spec"] | {"provisionSeconds": 0} == {
        "cpu": "4",
        "memory": "16Gi",
        "gpus": 0,
        "kernelVersion": "6.1.0-sandbox",
        "osImage": "kubecrew sandbox",
        "containerRuntimeVersion": "containerd://2.1.0",
        "provisionSeconds": 0,
    }


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        pytest.param(
            with_spec(machine_deployment(), replicas=-1),
            "spec.replicas",
            "greater than or equal to 0",
            id="negative-replicas",
        ),
        pytest.param(
            machine_deployment(version="v1.37"),
            "spec.template.spec.version",
            "must be a Kubernetes version such as v1.37.2",
            id="short-version",
        ),
        pytest.param(
            with_spec(machine_deployment(), strategy={"rollingUpdate": {"maxSurge": 0}}),
            "spec.strategy.rollingUpdate",
            "cannot both be 0",
            id="no-surge-no-unavailability",
        ),
        pytest.param(
            with_spec(machine_deployment(), selector={"matchLabels": {"pool": "gpu"}}),
            "spec.selector",
            "selector does not match template labels",
            id="selector",
        ),
        pytest.param(
            template("bad", cpu="lots"),
            "spec.template.spec.cpu",
            "must be a quantity",
            id="template-cpu",
        ),
    ],
)
def test_invalid_objects_are_refused_naming_the_field(
    sim: Simulation, body: Obj, field: str, words: str
) -> None:
    with pytest.raises(Invalid) as refused:
        create(sim, body)
    causes = [c for c in refused.value.causes if c.field == field]
    assert causes and words in causes[0].message, refused.value.message


def test_cluster_name_and_template_shape_never_change(sim: Simulation) -> None:
    sim.apply(machine_deployment())
    with pytest.raises(Invalid, match="field is immutable"):
        merge_patch(sim, "machinedeployments", "workers", {"spec": {"clusterName": "other"}})
    with pytest.raises(Invalid, match="Please create a new resource instead"):
        patch = {"spec": {"template": {"spec": {"cpu": "8"}}}}
        merge_patch(sim, "sandboxmachinetemplates", "standard", patch)


def test_custom_resources_take_no_strategic_merge_patch(sim: Simulation) -> None:
    sim.apply(machine_deployment())
    with pytest.raises(UnsupportedMediaType, match="strategic merge patch is not supported"):
        sim.patch("machinedeployments", "default", "workers", {"spec": {"replicas": 3}})


def test_a_machine_naming_a_missing_template_fails_saying_so(sim: Simulation) -> None:
    sim.apply(machine_deployment(template_name="gpu-8x", replicas=1))
    [machine] = machines(sim)
    assert machine["status"]["phase"] == "Failed"
    assert machine["status"]["failureReason"] == "InvalidConfiguration"
    message = machine["status"]["failureMessage"]
    assert "SandboxMachineTemplate default/gpu-8x not found" in message
    sim.run_for(120)
    assert sim.list("nodes") == []


def test_a_machine_waits_pending_for_its_cluster() -> None:
    sim = Simulation(nodes=0)
    sim.apply([template(), machine_deployment(replicas=1)])
    sim.run_for(120)
    [machine] = machines(sim)
    assert machine["status"]["phase"] == "Pending"
    assert "Cluster default/prod does not exist yet" in str(machine["status"]["conditions"])
    sim.apply(cluster())
    sim.run_for(60)
    [machine] = machines(sim)
    assert machine["status"]["phase"] == "Running"
    prod = sim.get("clusters", "default", "prod")
    assert prod is not None and prod["status"]["phase"] == "Provisioned"
