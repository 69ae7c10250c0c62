"""The kube server's read tools, called through the MCP client against a living sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

TWO_CONTAINERS = """
apiVersion: v1
kind: Pod
metadata: {name: pair}
spec:
  containers:
  - {name: web, image: "nginx:1.27"}
  - {name: cache, image: "redis:7"}
"""


def running_web(kubectl: Kubectl, kube: KubeTools, namespace: str, replicas: int = 2) -> list[Any]:
    kubectl("create", "deployment", "web", "--image=nginx:1.27", f"--replicas={replicas}",
            "-n", namespace)  # fmt: skip

    def all_running() -> list[Any]:
        items = kube.ok("list_resources", kind="pods", namespace=namespace)["items"]
        ready = [p for p in items if p["status"] == "Running" and p["ready"] == "1/1"]
        return items if len(ready) == replicas else []

    return eventually(all_running, what=f"{replicas} web pods running in {namespace}")


def test_list_pods_gives_kubectl_like_summary_rows(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    pods = running_web(shared_kubectl, kube, namespace)
    assert {p["namespace"] for p in pods} == {namespace}
    assert all(p["node"].startswith("node-") and p["restarts"] == 0 for p in pods)
    assert set(pods[0]) == {"name", "namespace", "ready", "status", "restarts", "node", "age"}


@pytest.mark.parametrize("kind", ["po", "pods", "Pod", "pod"])
def test_short_names_kinds_and_plurals_resolve_alike(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str, kind: str
) -> None:
    shared_kubectl("run", "solo", "--image=nginx:1.27", "-n", namespace)
    listed = kube.ok("list_resources", kind=kind, namespace=namespace)
    assert listed["kind"] == "Pod" and [p["name"] for p in listed["items"]] == ["solo"]


def test_deployments_by_short_name_and_group_show_rollout_columns(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    running_web(shared_kubectl, kube, namespace)
    for kind in ("deploy", "deployments.apps"):
        (row,) = kube.ok("list_resources", kind=kind, namespace=namespace)["items"]
        assert (row["ready"], row["up_to_date"], row["available"]) == ("2/2", 2, 2)


def test_fields_output_follows_dotted_paths_with_wildcards(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    running_web(shared_kubectl, kube, namespace)
    items = kube.ok(
        "list_resources",
        kind="pods",
        namespace=namespace,
        output="fields",
        fields=["spec.containers[*].image", "status.phase", "metadata.labels.app"],
    )["items"]
    assert [i["spec.containers[*].image"] for i in items] == [["nginx:1.27"]] * 2
    assert {i["status.phase"] for i in items} == {"Running"}
    assert {i["metadata.labels.app"] for i in items} == {"web"}


def test_get_as_yaml_hides_managed_fields_and_carries_the_kind(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    shared_kubectl("create", "configmap", "settings", "--from-literal=mode=fast", "-n", namespace)
    text = kube.ok("get_resource", kind="cm", name="settings", namespace=namespace)["yaml"]
    assert "kind: ConfigMap" in text and "mode: fast" in text
    assert "managedFields" not in text
    row = kube.ok("get_resource", kind="cm", name="settings", namespace=namespace, output="summary")
    assert row["keys"] == ["mode"]


def test_describe_pod_shows_owner_chain_containers_and_events(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    pod = running_web(shared_kubectl, kube, namespace)[0]["name"]
    described = kube.ok("describe", kind="pod", name=pod, namespace=namespace)
    assert [o["kind"] for o in described["owners"]] == ["ReplicaSet", "Deployment"]
    assert described["owners"][1]["name"] == "web"
    assert described["containers"][0]["image"] == "nginx:1.27"
    assert {"type": "Ready", "status": "True"}.items() <= next(
        c for c in described["conditions"] if c["type"] == "Ready"
    ).items()
    assert "Scheduled" in {e["reason"] for e in described["events"]}


def test_events_filter_by_object_type_and_reason(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    pod = running_web(shared_kubectl, kube, namespace)[0]["name"]
    scheduled = kube.ok("events", namespace=namespace, kind="po", reason="Scheduled")["items"]
    assert len(scheduled) == 2 and {e["reason"] for e in scheduled} == {"Scheduled"}
    mine = kube.ok("events", namespace=namespace, kind="Pod", name=pod)["items"]
    assert mine and {e["object"] for e in mine} == {f"Pod/{pod}"}
    assert kube.ok("events", namespace=namespace, type="Warning")["items"] == []
    assert kube.ok("events", namespace=namespace, since_seconds=10**9)["total"] >= 2
    assert "type" in kube.fails("events", namespace=namespace, type="Error")


def test_failing_image_shows_as_warning_events_and_unhealthy_in_overview(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    shared_kubectl("create", "deployment", "broken", "--image=nginx:no-such-tag", "-n", namespace)
    warnings = eventually(
        lambda: kube.ok("events", namespace=namespace, type="Warning")["items"],
        what="a warning event about the image",
    )
    assert all(w["type"] == "Warning" for w in warnings)
    overview = kube.ok("overview")
    assert overview["node_count"] == 3 and len(overview["nodes"]) == 3
    assert any(
        d["name"] == "broken" and d.get("namespace") == namespace
        for d in overview["unhealthy_deployments"]
    )


def test_logs_tail_and_grep_choose_the_container(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    pod = running_web(shared_kubectl, kube, namespace, replicas=1)[0]["name"]
    logs = eventually(
        lambda: kube.ok("logs", pod=pod, namespace=namespace)["log"], what="nginx logs"
    )
    assert "nginx" in logs
    grepped = kube.ok("logs", pod=pod, namespace=namespace, grep="NOTICE", tail=50)
    assert grepped["container"] == "nginx"
    assert grepped["log"] and all("notice" in line.lower() for line in grepped["log"].splitlines())
    assert len(kube.ok("logs", pod=pod, namespace=namespace, tail=1)["log"].splitlines()) == 1


def test_logs_of_a_pod_with_two_containers_ask_which_one(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    shared_kubectl("apply", "-n", namespace, "-f", "-", input=TWO_CONTAINERS)
    message = kube.fails("logs", pod="pair", namespace=namespace)
    assert "web" in message and "cache" in message and "container" in message


def test_top_reports_pod_and_node_usage(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    running_web(shared_kubectl, kube, namespace)
    pods = eventually(
        lambda: kube.ok("top", what="pods", namespace=namespace)["items"], what="pod metrics"
    )
    assert {p["namespace"] for p in pods} == {namespace}
    assert all(p["cpu_m"] >= 0 and p["memory_mi"] > 0 for p in pods)
    nodes = kube.ok("top", what="nodes", sort_by="memory")["items"]
    assert len(nodes) == 3 and all(n["memory_percent"] is not None for n in nodes)
    assert [n["memory_mi"] for n in nodes] == sorted((n["memory_mi"] for n in nodes), reverse=True)


def test_rollout_status_and_history_follow_a_new_image(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    running_web(shared_kubectl, kube, namespace)
    assert kube.ok("rollout_status", name="web", namespace=namespace)["done"]
    shared_kubectl("set", "image", "deployment/web", "nginx=nginx:1.28", "-n", namespace)
    eventually(
        lambda: (
            kube.ok("rollout_status", name="web", namespace=namespace)["done"]
            and kube.ok("rollout_status", name="web", namespace=namespace)["revision"] == "2"
        ),
        what="the second rollout to finish",
    )
    history = kube.ok("rollout_history", name="web", namespace=namespace)
    assert history["current_revision"] == "2"
    assert [(r["revision"], r["images"]) for r in history["revisions"]] == [
        (1, ["nginx:1.27"]),
        (2, ["nginx:1.28"]),
    ]


def test_can_i_answers_for_the_admin_identity(kube: KubeTools, namespace: str) -> None:
    answer = kube.ok("can_i", verb="delete", resource="deploy", namespace=namespace)
    assert answer["allowed"] and answer["resource"] == "deployments.apps"
    assert "verb" in kube.fails("can_i", verb="destroy", resource="pods")


def test_unknown_kind_says_how_to_name_one(kube: KubeTools) -> None:
    assert "api-resources" in kube.fails("list_resources", kind="widgets")


def test_missing_object_is_reported_as_not_found(kube: KubeTools, namespace: str) -> None:
    message = kube.fails("describe", kind="deploy", name="ghost", namespace=namespace)
    assert "ghost" in message and "not found" in message


def test_tools_over_stdio_with_the_module_entry_point(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "configmap", "over-stdio", "-n", namespace)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcp_servers.kube",
            "--kubeconfig",
            str(shared_sandbox.kubeconfig),
            "--read-only",
            "--namespaces",
            namespace,
        ],
        cwd=str(Path(__file__).resolve().parents[3]),
    )

    async def go() -> tuple[list[str], Any]:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool("list_resources", {"kind": "configmaps"})
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            return names, json.loads(text)

    names, listed = anyio.run(go)
    assert {"list_resources", "describe", "logs", "overview"} <= set(names)
    # No namespace given, yet the allow-list narrows "everywhere" to the one allowed namespace.
    assert {c["namespace"] for c in listed["items"]} == {namespace}
    assert "over-stdio" in {c["name"] for c in listed["items"]}


def test_ages_are_counted_on_the_clusters_clock(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    """The suite's sandboxes live ten times faster than life, and the kube server reads stamps
    as the cluster wrote them: an age counted on this machine's clock would be negative (shown
    as 0s); counted on the cluster's it grows ten times faster than life, as kubectl's does."""
    shared_kubectl("create", "configmap", "aged", "-n", namespace, "--from-literal=a=b")

    def age() -> int:
        [row] = kube.ok("list_resources", kind="configmaps", namespace=namespace,
                        field_selector="metadata.name=aged")["items"]  # fmt: skip
        value = str(row["age"])
        return int(value[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[value[-1]]

    # 30 s of cluster time pass in 3 real ones: by this machine's clock it would take half a
    # minute and more, as much longer as the sandbox has lived
    seen = eventually(lambda: age() >= 30 and age(), timeout=15, what="30 s old, by its row")
    assert seen < 10 * 60, seen  # minutes of cluster time, not a day
