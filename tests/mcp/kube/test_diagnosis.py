"""diagnose and recommend, through the real MCP client, on a sandbox given real faults.

Each test breaks something the way people do (a typo in an image tag, a command that exits, a
leaking app under a tight memory limit, a missing ConfigMap, a probe on the wrong port, a Service
selector typo, an unknown StorageClass, a request no node can meet, a node whose kubelet stops),
then asks `diagnose` for the finding; for the common ones it applies the top `recommend`ed fix
with kubectl (the write tools come later) and waits for the workload to be healthy.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from mcp_servers.kube.connection import Clusters
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.tools_diagnose import register
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

NS = "shop"


class Tools:
    def __init__(self, sandbox: Sandbox) -> None:
        self.mcp = FastMCP("kube-diagnosis-test")
        register(self.mcp, Clusters(sandbox.kubeconfig), KubeSettings(sandbox.kubeconfig))

    def call(self, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any], str]:
        async def go() -> tuple[bool, dict[str, Any], str]:
            async with create_connected_server_and_client_session(self.mcp) as session:
                result = await session.call_tool(tool, arguments)
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            data = result.structuredContent
            if data is None and not result.isError:
                data = json.loads(text)
            return bool(result.isError), data or {}, text

        return anyio.run(go)

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        error, data, text = self.call(tool, **arguments)
        assert not error, text
        return data

    def finding(self, code: str, **scope: Any) -> dict[str, Any]:
        """Wait until diagnose reports `code` in the scope, and return that finding."""

        def found() -> dict[str, Any] | None:
            findings = self.ok("diagnose", **scope)["findings"]
            return next((f for f in findings if f["code"] == code), None)

        return eventually(found, timeout=60, what=f"diagnose finds {code} in {scope}")

    def fix(self, code: str, **scope: Any) -> dict[str, Any]:
        fixes = self.ok("recommend", **scope)["fixes"]
        chosen = [f for f in fixes if f["finding"] == code]
        assert chosen, f"no fix for {code}: {fixes}"
        return chosen[0]


@pytest.fixture
def tools(sandbox: Sandbox) -> Tools:
    return Tools(sandbox)


@pytest.fixture
def shop(kubectl: Kubectl) -> Kubectl:
    kubectl("create", "namespace", NS)
    return kubectl


def deployment(name: str, container: dict[str, Any], **template: Any) -> str:
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, **template},
                "spec": {"containers": [{"name": "main", **container}]},
            },
        },
    }
    return json.dumps(manifest)


def apply_fix(kubectl: Kubectl, fix: dict[str, Any]) -> None:
    target = fix["target"]
    if fix["patch_type"] == "manifest":
        kubectl("apply", "-f", "-", input=json.dumps(fix["patch"]))
        return
    where = ["-n", target["namespace"]] if target["namespace"] else []
    kubectl(
        "patch",
        target["kind"].lower(),
        target["name"],
        *where,
        "--type",
        fix["patch_type"],
        "-p",
        json.dumps(fix["patch"]),
    )


def rollout(kubectl: Kubectl, name: str) -> None:
    kubectl.run("rollout", "status", f"deployment/{name}", "-n", NS, "--timeout=60s")


def test_image_typo_is_fixed_by_the_last_good_image(shop: Kubectl, tools: Tools) -> None:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    rollout(shop, "web")
    shop("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)

    finding = tools.finding("ImagePullBackOff", namespace=NS)
    assert finding["ref"] == {"kind": "Deployment", "name": "web", "namespace": NS}
    assert finding["severity"] == "critical"
    assert any("nginx:1.27-alpinee" in e["text"] for e in finding["evidence"])

    fix = tools.fix("ImagePullBackOff", namespace=NS, kind="deployment", name="web")
    assert fix["patch"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert any("ReplicaSet" in why for why in fix["evidence"])
    apply_fix(shop, fix)
    rollout(shop, "web")


def test_bad_command_is_a_crash_loop_with_its_last_log_lines(shop: Kubectl, tools: Tools) -> None:
    container = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    shop("apply", "-f", "-", input=deployment("job-runner", container))

    finding = tools.finding("CrashLoopBackOff", namespace=NS)
    assert finding["ref"]["name"] == "job-runner"
    logs = [e["text"] for e in finding["evidence"] if e["kind"] == "log"]
    assert "config is broken" in logs
    assert any("code 3" in e["text"] for e in finding["evidence"])


def test_oom_killed_is_fixed_by_a_limit_from_observed_usage(shop: Kubectl, tools: Tools) -> None:
    container = {
        "image": "ghcr.io/kubecrew/leaky-app:1.0.0",
        "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "100Mi"}},
    }
    annotations = {"annotations": {"sandbox.kubecrew.io/profile": "leaky"}}
    shop("apply", "-f", "-", input=deployment("leaky", container, **annotations))

    finding = tools.finding("OOMKilled", namespace=NS)
    assert finding["ref"]["name"] == "leaky"
    assert any("OOMKilled" in e["text"] for e in finding["evidence"])

    fix = tools.fix("OOMKilled", namespace=NS)
    limits = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["memory"] == "150Mi"  # the 100Mi it was killed at, x1.5 headroom
    apply_fix(shop, fix)
    rollout(shop, "leaky")


def test_missing_configmap_is_fixed_by_creating_it_with_the_keys(
    shop: Kubectl, tools: Tools
) -> None:
    env = [
        {
            "name": "LOG_LEVEL",
            "valueFrom": {"configMapKeyRef": {"name": "web-config", "key": "log_level"}},
        }
    ]
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27", "env": env}))

    finding = tools.finding("MissingConfigMap", namespace=NS)
    assert finding["ref"]["name"] == "web"
    assert any('configmap "web-config" not found' in e["text"] for e in finding["evidence"])

    fix = tools.fix("MissingConfigMap", namespace=NS)
    assert fix["patch_type"] == "manifest"
    assert fix["patch"]["kind"] == "ConfigMap" and fix["patch"]["data"] == {"log_level": ""}
    fix["patch"]["data"]["log_level"] = "info"  # the human fills the value in
    apply_fix(shop, fix)
    rollout(shop, "web")


def test_readiness_probe_on_a_wrong_port_names_the_container_port(
    shop: Kubectl, tools: Tools
) -> None:
    container = {
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 2},
    }
    shop("apply", "-f", "-", input=deployment("web", container))

    finding = tools.finding("ProbeFailing", namespace=NS)
    assert "port 8081 is not a container port" in finding["summary"]
    assert any(
        e["kind"] == "event" and "Readiness probe failed" in e["text"] for e in finding["evidence"]
    )
    fix = tools.fix("ProbeFailing", namespace=NS)
    probe = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert probe["httpGet"]["port"] == 80
    apply_fix(shop, fix)
    rollout(shop, "web")


def test_service_selector_mismatch_is_fixed_by_the_labels_pods_carry(
    shop: Kubectl, tools: Tools
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

    finding = tools.finding("ServiceSelectorNoMatch", namespace=NS, kind="svc", name="web")
    assert finding["ref"] == {"kind": "Service", "name": "web", "namespace": NS}

    fix = tools.fix("ServiceSelectorNoMatch", namespace=NS)
    assert fix["patch"] == {"spec": {"selector": {"app": "web"}}}
    apply_fix(shop, fix)

    def ready_addresses() -> int:
        endpoints = json.loads(shop("get", "endpoints", "web", "-n", NS, "-o", "json"))
        return sum(len(s.get("addresses") or []) for s in endpoints.get("subsets") or [])

    eventually(ready_addresses, what="the Service has a ready endpoint")


def test_unknown_storage_class_points_at_the_default_class(shop: Kubectl, tools: Tools) -> None:
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

    finding = tools.finding("StorageClassNotFound", namespace=NS)
    assert finding["ref"] == {"kind": "PersistentVolumeClaim", "name": "data", "namespace": NS}
    default = json.loads(shop("get", "storageclass", "-o", "json"))["items"][0]["metadata"]["name"]
    fix = tools.fix("StorageClassNotFound", namespace=NS)
    assert fix["patch"]["spec"]["storageClassName"] == default


def test_unschedulable_request_names_the_resource_to_relax(shop: Kubectl, tools: Tools) -> None:
    container = {"image": "nginx:1.27", "resources": {"requests": {"cpu": "500"}}}
    shop("apply", "-f", "-", input=deployment("huge", container))

    finding = tools.finding("Unschedulable", namespace=NS)
    assert finding["ref"]["name"] == "huge"
    assert "Insufficient cpu" in finding["summary"]
    fix = tools.fix("Unschedulable", namespace=NS)
    requests = fix["patch"]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert set(requests) == {"cpu"}


def test_node_heartbeat_fault_is_diagnosed_as_not_ready(sandbox: Sandbox, tools: Tools) -> None:
    sandbox.call(lambda cluster: cluster.faults.add({"kind": "node-heartbeat", "node": "node-2"}))

    finding = tools.finding("NodeNotReady", kind="node", name="node-2")
    assert finding["ref"] == {"kind": "Node", "name": "node-2", "namespace": ""}
    assert finding["severity"] == "critical"
    assert all(
        f["ref"]["name"] == "node-2"
        for f in tools.ok("diagnose", kind="node", name="node-2")["findings"]
    )


def test_arguments_are_checked_before_any_read(tools: Tools) -> None:
    error, _, text = tools.call("diagnose", namespace="shop; rm -rf /")
    assert error and "not a valid namespace" in text
    error, _, text = tools.call("diagnose", kind="deployment", name="web")
    assert error and "namespace" in text


def test_tools_are_annotated_read_only(tools: Tools) -> None:
    async def listed() -> list[Any]:
        async with create_connected_server_and_client_session(tools.mcp) as session:
            return (await session.list_tools()).tools

    for tool in anyio.run(listed):
        assert tool.annotations is not None
        assert tool.annotations.readOnlyHint and not tool.annotations.destructiveHint
