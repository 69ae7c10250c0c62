"""NodeReadinessPolicy: the Cluster Operator's readiness rules load strictly, refuse a rule that
checks nothing or two things at once, and describe what each rule asks of a node."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.policy.documents.readiness import NodeReadinessPolicy
from core.policy.loading import load_report
from tests.support.policies import POLICIES

HEAD = "apiVersion: kubecrew.io/v1alpha1\nkind: NodeReadinessPolicy\nmetadata:\n  name: p\n"


def problems(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + body)
    return [str(p).removeprefix(f"{path}:") for p in load_report([path]).problems]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            "spec:\n  rules: []\n",
            "spec.rules: list should have at least 1 item after validation, not 0",
            id="no-rules",
        ),
        pytest.param(
            "spec:\n  rules:\n    - name: a\n",
            "give exactly one of daemonSet, pod or condition (found: none)",
            id="rule-checks-nothing",
        ),
        pytest.param(
            "spec:\n  rules:\n    - name: a\n      condition: {type: NetworkReady}\n"
            "      daemonSet: {namespace: kube-system, name: x}\n",
            "give exactly one of daemonSet, pod or condition (found: daemonSet, condition)",
            id="rule-checks-two-things",
        ),
        pytest.param(
            "spec:\n  rules:\n    - name: a\n      pod: {namespace: kube-system, selector: {}}\n",
            "an empty selector matches any pod; name the pod's labels",
            id="pod-rule-selects-every-pod",
        ),
        pytest.param(
            "spec:\n  taint: {key: 'not a key'}\n  rules:\n    - name: a\n"
            "      condition: {type: NetworkReady}\n",
            "taint key 'not a key' is not a qualified name",
            id="bad-taint-key",
        ),
        pytest.param(
            "spec:\n  rules:\n    - name: kubelet-ready\n      condition: {type: Ready}\n",
            "'kubelet-ready' is the name of a built-in rule",
            id="reserved-rule-name",
        ),
        pytest.param(
            "spec:\n  rules:\n    - name: a\n      condition: {type: NetworkReady, status: yes}\n",
            "spec.rules[0].condition.status",
            id="bad-condition-status",
        ),
    ],
)
def test_a_bad_readiness_document_is_refused_with_where_and_why(
    tmp_path: Path, body: str, expected: str
) -> None:
    found = problems(tmp_path, body)
    assert found and any(expected.lower() in line.lower() for line in found), found


def test_the_shipped_readiness_rules_read_as_written() -> None:
    text = (POLICIES / "readiness.yaml").read_text()
    policy = NodeReadinessPolicy.model_validate(yaml.safe_load(text))
    assert policy.spec.nodeSelector.matches({"accelerator": "nvidia"})
    assert not policy.spec.nodeSelector.matches({"accelerator": "amd"})
    assert policy.spec.taint.describe() == "kubecrew.io/not-ready:NoSchedule"
    assert [rule.describe() for rule in policy.spec.rules] == [
        "a Ready pod of DaemonSet kube-system/nvidia-device-plugin on the node",
        "a Ready pod in kube-system with labels app=net-agent on the node",
        "node condition NetworkReady=True",
    ]


def test_defaults_taint_and_every_node_when_left_out() -> None:
    policy = NodeReadinessPolicy.model_validate(
        yaml.safe_load(HEAD + "spec:\n  rules:\n    - name: n\n      condition: {type: X}\n")
    )
    assert policy.spec.taint.describe() == "kubecrew.io/not-ready:NoSchedule"
    assert policy.spec.nodeSelector.matches({})
    assert policy.spec.rules[0].describe() == "node condition X=True"
