"""diagnose and recommend, through the real MCP client, on a sandbox given real faults.

Each test breaks something the way people do (a typo in an image tag, a command that exits, a
leaking app under a tight memory limit, a missing ConfigMap, a probe on the wrong port, a Service
selector typo, an unknown StorageClass, a request no node can meet, a node whose kubelet stops),
then asks `diagnose` for the finding and, where a fix exists, applies the top `recommend`ed fix
through the server's own write tools (its `steps`) and waits for the workload to be healthy.

`Doctor` (diagnose, pick a fix, apply its steps) lives in tests/support/diagnosis.py.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

from core.connection import Clusters
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.tools_diagnose import register
from sandbox.server import Sandbox
from tests.support.diagnosis import NS, Doctor, deployment, first, rollout, tool
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


@pytest.fixture
def doctor(sandbox: Sandbox) -> Doctor:
    return Doctor(sandbox)


@pytest.fixture
def shop(kubectl: Kubectl) -> Kubectl:
    kubectl("create", "namespace", NS)
    return kubectl


def test_image_typo_is_fixed_by_the_last_good_image(shop: Kubectl, doctor: Doctor) -> None:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    rollout(shop, "web")
    shop("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)

    finding = doctor.finding("ImagePullBackOff", namespace=NS)
    assert finding["ref"] == {"kind": "Deployment", "name": "web", "namespace": NS}
    assert finding["severity"] == "critical"
    assert any("nginx:1.27-alpinee" in e["text"] for e in finding["evidence"])

    fixes = doctor.fixes("ImagePullBackOff", namespace=NS, kind="deployment", name="web")
    fix = fixes[0]
    assert fix["patch"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert any("ReplicaSet" in why for why in fix["evidence"])
    assert tool(fix) == ["patch"]
    back = first(fixes, lambda f: tool(f) == ["rollout_undo"])
    assert back["steps"][0]["arguments"] == {"name": "web", "namespace": NS, "to_revision": 1}
    doctor.apply(fix)
    rollout(shop, "web")


def test_bad_command_is_a_crash_loop_with_its_last_log_lines(shop: Kubectl, doctor: Doctor) -> None:
    container = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    shop("apply", "-f", "-", input=deployment("job-runner", container))

    finding = doctor.finding("CrashLoopBackOff", namespace=NS)
    assert finding["ref"]["name"] == "job-runner"
    logs = [e["text"] for e in finding["evidence"] if e["kind"] == "log"]
    assert "config is broken" in logs
    assert any("code 3" in e["text"] for e in finding["evidence"])


def test_oom_killed_is_fixed_by_a_limit_from_observed_usage(shop: Kubectl, doctor: Doctor) -> None:
    container = {
        "image": "ghcr.io/kubecrew/leaky-app:1.0.0",
        "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "100Mi"}},
    }
    profile = {"sandbox.kubecrew.io/profile": "leaky"}
    shop("apply", "-f", "-", input=deployment("leaky", container, annotations=profile))

    finding = doctor.finding("OOMKilled", namespace=NS)
    assert finding["ref"]["name"] == "leaky"
    assert any("OOMKilled" in e["text"] for e in finding["evidence"])
    assert any("memory grows while it runs" in e["text"] for e in finding["evidence"])

    fix = doctor.fix("OOMKilled", namespace=NS)  # one revision: nothing to roll back to
    assert "killed again later" in fix["expected_effect"]
    limits = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["memory"] == "150Mi"  # the 100Mi it was killed at, x1.5 headroom
    doctor.apply(fix)
    rollout(shop, "leaky")


def test_missing_configmap_is_fixed_by_creating_it_with_the_keys(
    shop: Kubectl, doctor: Doctor
) -> None:
    env = [
        {
            "name": "LOG_LEVEL",
            "valueFrom": {"configMapKeyRef": {"name": "web-config", "key": "log_level"}},
        }
    ]
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27", "env": env}))

    finding = doctor.finding("MissingConfigMap", namespace=NS)
    assert finding["ref"]["name"] == "web"
    assert any('configmap "web-config" not found' in e["text"] for e in finding["evidence"])

    fix = doctor.fix("MissingConfigMap", namespace=NS)
    assert fix["patch_type"] == "manifest"
    assert fix["patch"]["kind"] == "ConfigMap" and fix["patch"]["data"] == {"log_level": ""}
    fix["patch"]["data"]["log_level"] = "info"  # the human fills the value in
    doctor.apply(fix)
    rollout(shop, "web")


def test_readiness_probe_on_a_wrong_port_names_the_container_port(
    shop: Kubectl, doctor: Doctor
) -> None:
    container = {
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 2},
    }
    shop("apply", "-f", "-", input=deployment("web", container))

    finding = doctor.finding("ProbeFailing", namespace=NS)
    assert "port 8081 is not a container port" in finding["summary"]
    assert any(
        e["kind"] == "event" and "Readiness probe failed" in e["text"] for e in finding["evidence"]
    )
    fix = doctor.fix("ProbeFailing", namespace=NS)
    probe = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert probe["httpGet"]["port"] == 80
    doctor.apply(fix)
    rollout(shop, "web")


def test_service_selector_mismatch_is_fixed_by_the_labels_pods_carry(
    shop: Kubectl, doctor: Doctor
) -> None:
    shop(
        "apply",
        "-f",
        "-",
        input=deployment("web", {"image": "nginx:1.27", "ports": [{"containerPort": 80}]}),
    )
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": {"app": "wbe"}, "ports": [{"port": 80, "targetPort": 80}]},
    }
    shop("apply", "-f", "-", input=json.dumps(service))
    rollout(shop, "web")

    finding = doctor.finding("ServiceSelectorNoMatch", namespace=NS, kind="svc", name="web")
    assert finding["ref"] == {"kind": "Service", "name": "web", "namespace": NS}

    fix = doctor.fix("ServiceSelectorNoMatch", namespace=NS)
    assert fix["patch"] == {"spec": {"selector": {"app": "web"}}}
    doctor.apply(fix)

    def ready_addresses() -> int:
        endpoints = json.loads(shop("get", "endpoints", "web", "-n", NS, "-o", "json"))
        return sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or [])

    eventually(ready_addresses, what="the Service has a ready endpoint")


def test_unknown_storage_class_points_at_the_default_class(shop: Kubectl, doctor: Doctor) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": NS},
        "spec": {
            "storageClassName": "fast-ssd",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    shop("apply", "-f", "-", input=json.dumps(claim))

    finding = doctor.finding("StorageClassNotFound", namespace=NS)
    assert finding["ref"] == {"kind": "PersistentVolumeClaim", "name": "data", "namespace": NS}
    default = json.loads(shop("get", "storageclass", "-o", "json"))["items"][0]["metadata"]["name"]
    fix = doctor.fix("StorageClassNotFound", namespace=NS)
    assert fix["patch"]["spec"]["storageClassName"] == default
    assert tool(fix) == ["delete", "apply"]  # storageClassName is immutable
    doctor.apply(fix)
    eventually(
        lambda: "StorageClassNotFound" not in doctor.codes(namespace=NS),
        what="the claim asks for a class that exists",
    )
    assert shop("get", "pvc", "data", "-n", NS, "-o", "jsonpath={.spec.storageClassName}") == (
        default
    )


def test_unschedulable_request_names_the_resource_to_relax(shop: Kubectl, doctor: Doctor) -> None:
    container = {"image": "nginx:1.27", "resources": {"requests": {"cpu": "500"}}}
    shop("apply", "-f", "-", input=deployment("huge", container))

    finding = doctor.finding("Unschedulable", namespace=NS)
    assert finding["ref"]["name"] == "huge"
    assert "Insufficient cpu" in finding["summary"]
    fix = doctor.fix("Unschedulable", namespace=NS)
    requests = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert set(requests) == {"cpu"}
    doctor.apply(fix)
    rollout(shop, "huge")


def test_arguments_are_checked_before_any_read(doctor: Doctor) -> None:
    answer = doctor.tools.call("diagnose", namespace="shop; rm -rf /")
    assert answer.error and "not a valid namespace" in answer.text
    answer = doctor.tools.call("diagnose", kind="deployment", name="web")
    assert answer.error and "namespace" in answer.text


def test_tools_are_annotated_read_only(sandbox: Sandbox) -> None:
    mcp = FastMCP("kube-diagnosis-test")
    register(mcp, Clusters(sandbox.kubeconfig), KubeSettings(sandbox.kubeconfig))

    async def listed() -> list[Any]:
        async with create_connected_server_and_client_session(mcp) as session:
            return (await session.list_tools()).tools

    for listed_tool in anyio.run(listed):
        assert listed_tool.annotations is not None
        assert listed_tool.annotations.readOnlyHint
        assert not listed_tool.annotations.destructiveHint
