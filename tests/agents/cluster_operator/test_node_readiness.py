"""Node readiness on a live sandbox: a GPU node joins tainted `kubecrew.io/not-ready`, and the
patrol removes the taint only once every declared rule holds on it (its device-plugin
DaemonSet pod Ready, its NetworkReady condition True), never because the kubelet says Ready;
when the device plugin breaks later, the taint goes back, the answer citing the rule.
"""

from __future__ import annotations

import json
from typing import Any

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

NODE = "gpu-1"
TAINT = "kubecrew.io/not-ready"
READINESS = """\
apiVersion: kubecrew.io/v1alpha1
kind: NodeReadinessPolicy
metadata: {name: gpu-nodes}
spec:
  nodeSelector: {matchLabels: {accelerator: nvidia}}
  rules:
    - name: device-plugin
      daemonSet: {namespace: kube-system, name: nvidia-device-plugin}
    - name: network
      condition: {type: NetworkReady, status: "True"}
"""
GPU_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {accelerator: nvidia, kubernetes.io/hostname: gpu-1}
spec:
  taints: [{key: kubecrew.io/not-ready, effect: NoSchedule}]
"""
CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}
DEVICE_PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  selector: {matchLabels: {app: nvidia-device-plugin}}
  template:
    metadata: {labels: {app: nvidia-device-plugin}}
    spec:
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: kubecrew.io/not-ready, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 1
      containers: [{name: plugin, image: "nginx:1.27"}]
"""


def taints(kubectl: Kubectl) -> list[str]:
    node = kubectl.json("get", "node", NODE)
    return [t["key"] for t in node["spec"].get("taints") or []]


def condition(kubectl: Kubectl, kind: str) -> str:
    found = kubectl.json("get", "node", NODE)["status"].get("conditions") or []
    return next((c["status"] for c in found if c["type"] == kind), "")


def plugin_ready(kubectl: Kubectl) -> bool:
    pods = kubectl.json("get", "pods", "-n", "kube-system", "-l", "app=nvidia-device-plugin")
    return any(
        p["spec"].get("nodeName") == NODE
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
        for p in pods["items"]
        if not p["metadata"].get("deletionTimestamp")
    )


def verdict(outcome: Any) -> dict[str, Any]:
    [found] = [r for r in outcome.data["readiness"] if r["node"] == NODE]
    return dict(found)


def failing(found: dict[str, Any]) -> list[str]:
    return [c["rule"].rsplit(" ", 1)[-1] for c in found["checks"] if not c["passed"]]


def join(kubectl: Kubectl) -> None:
    """gpu-1 registers as a kubelet with --register-with-taints does: tainted, then its status."""
    kubectl("apply", "-f", "-", input=GPU_NODE)
    status = {"status": {"capacity": CAPACITY, "allocatable": CAPACITY}}
    kubectl("patch", "node", NODE, "--subresource=status", "--type=merge", "-p", json.dumps(status))
    eventually(lambda: condition(kubectl, "Ready") == "True", what="gpu-1's kubelet Ready")


def test_the_readiness_taint_follows_the_rules_not_the_kubelet(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("readiness", READINESS)
    join(kubectl)

    first = verdict(operator.patrol())  # kubelet Ready, nothing else: stays tainted
    assert first["action"] == "kept-taint" and not first["ready"], first
    assert failing(first) == ["device-plugin", "network"]
    assert "taint" not in operator.called() and taints(kubectl) == [TAINT]
    assert f"no pod on {NODE}" in operator.patrol().answer

    kubectl("apply", "-f", "-", input=DEVICE_PLUGIN)
    eventually(lambda: plugin_ready(kubectl), what="the device plugin Ready on gpu-1")
    second = operator.patrol()
    assert failing(verdict(second)) == ["network"], second.answer
    assert "NodeReadinessPolicy gpu-nodes / rule network failed" in second.answer
    assert taints(kubectl) == [TAINT]

    fault = {"kind": "node-condition", "node": NODE, "type": "NetworkReady", "status": "True"}
    sandbox.call(lambda cluster: cluster.faults.add(fault))
    eventually(lambda: condition(kubectl, "NetworkReady") == "True", what="NetworkReady=True")
    ready = operator.patrol()
    assert verdict(ready)["action"] == "removed-taint" and verdict(ready)["ready"], ready.answer
    assert taints(kubectl) == []
    assert ("taint", False) in [(c.tool, c.error is not None) for c in operator.last_calls()]

    again = operator.patrol()  # nothing left to do: no second write
    assert verdict(again)["action"] == "ready" and "taint" not in operator.called()

    kubectl("set", "image", "daemonset/nvidia-device-plugin", "-n", "kube-system",
            "plugin=nginx:does-not-exist")  # fmt: skip
    eventually(lambda: not plugin_ready(kubectl), what="the device plugin broken")
    broken = operator.patrol()
    found = verdict(broken)
    assert found["action"] == "added-taint" and failing(found) == ["device-plugin"], broken.answer
    [evidence] = [c["evidence"] for c in found["checks"] if not c["passed"]]
    assert "is not Ready" in evidence or f"no pod on {NODE}" in evidence
    assert "rule device-plugin failed" in broken.answer
    assert taints(kubectl) == [TAINT]
    written = [(r.summary, r.result) for r in operator.mutations()]
    assert written == [
        (f"taint: uncordon Node {NODE} directly", "applied"),
        (f"taint: cordon Node {NODE} directly", "applied"),
    ]


def test_a_question_reads_readiness_and_changes_nothing(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("readiness", READINESS)
    join(kubectl)
    asked = operator.ask("are the nodes ready to serve?")
    assert asked.task == "readiness"
    assert failing(verdict(asked)) == ["device-plugin", "network"]
    assert "kubelet-ready" not in " ".join(failing(verdict(asked)))
    assert "taint" not in operator.called() and taints(kubectl) == [TAINT]
