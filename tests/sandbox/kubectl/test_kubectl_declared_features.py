"""Real kubectl on a cluster whose two nodes run kubelets a minor apart (a scenario gives each its
version): the nodes show different `status.declaredFeatures`, the schema serves and accepts the
field, and the scheduler places a pod that needs the newer kubelet's feature on that node only,
saying in kube-scheduler's words why it waits while that node is cordoned.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

OLD, NEW = "v1.36.3", "v1.37.0"
SCENARIO = f"""\
apiVersion: sandbox.kubecrew.io/v1alpha1
kind: Scenario
metadata: {{name: skewed-kubelets}}
spec:
  nodes:
    - {{name: old, version: {OLD}}}
    - {{name: new, version: {NEW}}}
"""
STRICT_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: strict}
spec:
  containers:
    - name: app
      image: nginx:1.27
      volumeMounts: [{name: scratch, mountPath: /scratch, bindMountOptions: [noexec, nosuid]}]
  volumes: [{name: scratch, emptyDir: {}}]
"""
PLAIN_ON_OLD = """\
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  nodeSelector: {kubernetes.io/hostname: old}
  containers: [{name: app, image: nginx:1.27}]
"""


@pytest.fixture
def skewed(tmp_path: Path) -> Iterator[Kubectl]:
    scenario = tmp_path / "skewed.yaml"
    scenario.write_text(SCENARIO)
    with Sandbox(Options(home=tmp_path / "sandbox", scenario=scenario, rate=RATE)) as running:
        yield Kubectl(running.kubeconfig, tmp_path / "kube-cache")


def node_of(kubectl: Kubectl, pod: str) -> str:
    return kubectl("get", "pod", pod, "-o", "jsonpath={.spec.nodeName}")


def test_nodes_of_two_kubelet_versions_declare_different_features(skewed: Kubectl) -> None:
    declared = {
        name: json.loads(
            skewed("get", "node", name, "-o", "jsonpath={.status.declaredFeatures}") or "null"
        )
        for name in ("old", "new")
    }
    assert declared == {
        "old": ["InPlacePodLevelResourcesVerticalScaling", "RestartAllContainersOnContainerExits"],
        "new": [
            "InPlacePodLevelResourcesVerticalScaling",
            "RestartAllContainersOnContainerExits",
            "VolumeBindMountOptions",
        ],
    }
    columns = "custom-columns=NAME:.metadata.name,KUBELET:.status.nodeInfo.kubeletVersion"
    assert skewed("get", "nodes", "-o", columns, "--no-headers").split() == ["new", NEW, "old", OLD]
    explained = skewed("explain", "node.status.declaredFeatures")
    assert "FIELD: declaredFeatures <[]string>" in explained


def test_strict_field_validation_accepts_a_node_with_declared_features(skewed: Kubectl) -> None:
    node: dict[str, Any] = json.loads(skewed("get", "node", "new", "-o", "json"))
    node["metadata"].setdefault("labels", {})["tier"] = "new-kubelets"
    replaced = skewed.run("replace", "--validate=strict", "-f", "-", input=json.dumps(node))
    assert replaced.stdout == "node/new replaced\n" and not replaced.stderr
    kept = json.loads(skewed("get", "node", "new", "-o", "json"))
    assert kept["metadata"]["labels"]["tier"] == "new-kubelets"
    assert "VolumeBindMountOptions" in kept["status"]["declaredFeatures"]


def test_a_pod_needing_the_newer_feature_waits_for_the_newer_node(skewed: Kubectl) -> None:
    skewed("cordon", "new")
    skewed("apply", "--server-side", "-f", "-", input=STRICT_POD)
    message = (
        "0/2 nodes are available: 1 node(s) didn't match Pod's required features, "
        "1 node(s) were unschedulable. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )

    def failed_scheduling() -> set[str]:
        events = json.loads(
            skewed("get", "events", "--field-selector", "reason=FailedScheduling", "-o", "json")
        )["items"]
        return {e["message"] for e in events if e["involvedObject"]["name"] == "strict"}

    assert eventually(failed_scheduling, what="a FailedScheduling event for strict") == {message}
    condition = skewed(
        "get", "pod", "strict", "-o", "jsonpath={.status.conditions[?(@.type=='PodScheduled')]}"
    )
    assert json.loads(condition)["message"] == message
    assert node_of(skewed, "strict") == ""
    skewed("uncordon", "new")
    eventually(lambda: node_of(skewed, "strict") == "new", what="strict bound to new")


def test_a_pod_needing_nothing_special_runs_on_the_older_node(skewed: Kubectl) -> None:
    skewed("apply", "-f", "-", input=PLAIN_ON_OLD)
    skewed("wait", "--for=condition=Ready", "pod/plain", "--timeout=60s")
    assert node_of(skewed, "plain") == "old"
