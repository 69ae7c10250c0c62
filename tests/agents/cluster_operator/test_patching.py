"""Security patching on the patrol: a PatchPolicy says every workers node runs kernel 6.8.0 or
later; the pool's nodes run 6.1.0, so the patrol finds them, says when they are due, and rolls the
pool onto the policy's patched machine template one machine at a time (pre-drain hook, drains
within the web budget), patrol after patrol, until every node runs the patched kernel. A policy
naming a template that is not there rolls nothing and says why. Checked on the Nodes and the
MachineDeployment the API server holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import budgeted_web, cluster, machine_deployment, template
from tests.support.pool_world import nodeless
from tests.support.waiting import eventually

POLICY = """\
apiVersion: kubecrew.io/v1alpha1
kind: PatchPolicy
metadata: {name: kernel-cves}
spec:
  pools: [workers]
  minimumKernel: "6.8.0"
  template: %(template)s
  within: 72h
"""


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """No node of its own: every node is a workers machine."""
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def kernels(kubectl: Kubectl) -> list[str]:
    nodes = kubectl.json("get", "nodes")["items"]
    return sorted(n["status"]["nodeInfo"]["kernelVersion"] for n in nodes)


def build(kubectl: Kubectl) -> None:
    objects = [
        cluster(),
        template("standard", provision_seconds=5, kernelVersion="6.1.0-sandbox"),
        template("patched", provision_seconds=5, kernelVersion="6.8.0-49-generic"),
        machine_deployment("workers", replicas=2),
    ]
    for obj in objects:
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(lambda: len(kernels(kubectl)) == 2, what="two workers nodes")
    for obj in budgeted_web(2, min_available=1):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(
        lambda: kubectl.json("get", "deploy", "web")["status"].get("availableReplicas") == 2,
        what="web available",
    )


def test_nodes_below_the_policy_are_found_and_their_pool_rolled_onto_the_patch(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl)
    operator = Operator(sandbox, tmp_path)
    operator.policy("patch", POLICY % {"template": "patched"})

    first = operator.patrol()

    below = first.data["patching"]["below"]
    assert len(below) == 2 and {b["pool"] for b in below} == {"default/workers"}, first.answer
    assert below[0]["lacks"] == ["kernel 6.1.0-sandbox < 6.8.0"], below
    assert "Patching: 2 node(s) below their PatchPolicy" in first.answer
    md = kubectl.json("get", "machinedeployment", "workers")
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == "patched"

    said = [first.answer]
    for _ in range(60):
        if kernels(kubectl) == ["6.8.0-49-generic"] * 2 and "is done" in said[-1]:
            break
        said.append(operator.patrol().answer)
    assert "The patch roll of PatchPolicy kernel-cves is done" in said[-1], said[-3:]
    assert kernels(kubectl) == ["6.8.0-49-generic"] * 2
    assert kubectl.json("get", "deploy", "web")["status"].get("availableReplicas") == 2
    drains = [r for r in operator.mutations() if r.summary.startswith("drain:")]
    assert len(drains) == 2, [r.summary for r in drains]  # each old node drained once

    quiet = operator.patrol()
    assert quiet.data["patching"]["below"] == [] and "Patching" not in quiet.answer


def test_a_policy_naming_a_missing_template_rolls_nothing_and_says_why(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    build(kubectl)
    operator = Operator(sandbox, tmp_path)
    operator.policy("patch", POLICY % {"template": "no-such-template"})

    outcome = operator.patrol()

    assert "names machine template no-such-template" in outcome.answer, outcome.answer
    md = kubectl.json("get", "machinedeployment", "workers")
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] == "standard"
    assert [r for r in operator.mutations() if "MachineDeployment" in r.summary] == []
