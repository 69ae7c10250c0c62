"""kubectl reading from the sandbox: version, discovery, get in all its output forms, watches,
describe with events, `kubectl events` and explain, as a user of a real cluster sees them."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from sandbox.metrics import Usage
from sandbox.registry import BUILTINS, ResourceType
from sandbox.server import Sandbox
from tests.kubectl import create, header, rows
from tests.support.kubectl import KUBECTL, Kubectl

pytestmark = pytest.mark.kubectl

LISTABLE = [rt for rt in BUILTINS if "list" in rt.verbs]
GROUPS = sorted({rt.group for rt in BUILTINS})


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name: str, namespace: str, *, node: str = "", **labels: str) -> dict[str, Any]:
    """A Pod manifest; with `node`, created already bound, as when its creator picks the node."""
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def bind(kubectl: Kubectl, namespace: str, name: str, *, node: str) -> None:
    """What the scheduler does: POST pods/binding."""
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    kubectl(
        "create",
        "--raw",
        f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
        "-f",
        "-",
        input=json.dumps(binding),
    )


def mark_running(kubectl: Kubectl, namespace: str, name: str, *, ip: str) -> None:
    """What the kubelet does: write pods/status with phase Running and a Ready container."""
    now = _now()
    status = {
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "hostIP": "172.18.0.4",
        "startTime": now,
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
        ],
        "containerStatuses": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
        ],
    }
    kubectl(
        "patch",
        "pod",
        name,
        "-n",
        namespace,
        "--subresource=status",
        "-p",
        json.dumps({"status": status}),
    )


def names(output: str) -> set[str]:
    return set(output.split())


# -- version and discovery -------------------------------------------------------------------


@pytest.fixture(scope="module")
def api_resources(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> str:
    cache = tmp_path_factory.mktemp("api-resources") / "cache"
    return Kubectl(shared_sandbox.kubeconfig, cache)("api-resources")


def test_version_reports_a_v1_37_server(shared_kubectl: Kubectl) -> None:
    version = json.loads(shared_kubectl("version", "-o", "json"))["serverVersion"]
    assert (version["major"], version["minor"]) == ("1", "37")
    assert "Server Version: v1.37.0" in shared_kubectl("version")


@pytest.mark.parametrize(
    ("name", "short", "api_version", "namespaced", "kind"),
    [
        pytest.param("pods", "po", "v1", "true", "Pod", id="pods"),
        pytest.param("namespaces", "ns", "v1", "false", "Namespace", id="namespaces"),
        pytest.param("nodes", "no", "v1", "false", "Node", id="nodes"),
        pytest.param("deployments", "deploy", "apps/v1", "true", "Deployment", id="deployments"),
        pytest.param("cronjobs", "cj", "batch/v1", "true", "CronJob", id="cronjobs"),
        pytest.param(
            "horizontalpodautoscalers",
            "hpa",
            "autoscaling/v2",
            "true",
            "HorizontalPodAutoscaler",
            id="hpa",
        ),
        pytest.param(
            "customresourcedefinitions",
            "crd,crds",
            "apiextensions.k8s.io/v1",
            "false",
            "CustomResourceDefinition",
            id="crds",
        ),
        pytest.param(
            "clusterroles",
            "",
            "rbac.authorization.k8s.io/v1",
            "false",
            "ClusterRole",
            id="clusterroles",
        ),
        pytest.param("pods", "", "metrics.k8s.io/v1beta1", "true", "PodMetrics", id="pod-metrics"),
        pytest.param(
            "nodes", "", "metrics.k8s.io/v1beta1", "false", "NodeMetrics", id="node-metrics"
        ),
    ],
)
def test_api_resources_shows_short_names_scope_and_kind(
    api_resources: str, name: str, short: str, api_version: str, namespaced: str, kind: str
) -> None:
    assert header(api_resources) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    expected = {
        "NAME": name,
        "SHORTNAMES": short,
        "APIVERSION": api_version,
        "NAMESPACED": namespaced,
        "KIND": kind,
    }
    assert expected in rows(api_resources)


@pytest.mark.parametrize("group", GROUPS, ids=[g or "core" for g in GROUPS])
def test_api_resources_lists_every_kind_of_each_served_group(
    shared_kubectl: Kubectl, group: str
) -> None:
    listed = shared_kubectl("api-resources", f"--api-group={group}", "-o", "wide")
    kinds = {row["KIND"] for row in rows(listed)}
    assert kinds == {rt.kind for rt in BUILTINS if rt.group == group}


def test_api_versions_lists_every_served_group_version(shared_kubectl: Kubectl) -> None:
    assert names(shared_kubectl("api-versions")) == {rt.api_version for rt in BUILTINS}


# -- get -------------------------------------------------------------------------------------


@pytest.mark.parametrize("rt", LISTABLE, ids=[rt.qualified for rt in LISTABLE])
def test_get_lists_every_builtin_type(shared_kubectl: Kubectl, rt: ResourceType) -> None:
    scope = ["-A"] if rt.namespaced else []
    listed = shared_kubectl.json("get", rt.qualified, *scope)
    assert listed["kind"] == "List"
    assert {item["kind"] for item in listed["items"]} <= {rt.kind}
    done = shared_kubectl.run("get", rt.qualified, *scope)
    # kubectl itself marks the default StorageClass in the NAME column.
    shown = {row["NAME"].removesuffix(" (default)") for row in rows(done.stdout)}
    assert shown == {item["metadata"]["name"] for item in listed["items"]}
    if not listed["items"]:
        assert "No resources found" in done.stderr


def test_get_pod_metrics_lists_recorded_usage(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str
) -> None:
    usage = {"app": Usage("15m", "48Mi")}
    shared_sandbox.call(lambda cluster: cluster.metrics.record_pod(namespace, "web", usage))
    shown = shared_kubectl("get", "pods.metrics.k8s.io", "-n", namespace, "-o", "name")
    assert shown == "podmetrics.metrics.k8s.io/web\n"
    [metrics] = shared_kubectl.json("get", "pods.metrics.k8s.io", "-n", namespace)["items"]
    assert metrics["containers"] == [{"name": "app", "usage": {"cpu": "15m", "memory": "48Mi"}}]


def test_get_all_namespaces_adds_a_namespace_column(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    other = f"{namespace}-b"
    shared_kubectl("create", "namespace", other)
    create(shared_kubectl, pod("one", namespace), pod("two", other))
    table = shared_kubectl("get", "pods", "-A")
    assert header(table)[:2] == ["NAMESPACE", "NAME"]
    found = {(r["NAMESPACE"], r["NAME"]) for r in rows(table)}
    assert {(namespace, "one"), (other, "two")} <= found


def test_get_pods_wide_shows_ip_and_node(shared_kubectl: Kubectl, namespace: str) -> None:
    create(shared_kubectl, pod("web", namespace))
    bind(shared_kubectl, namespace, "web", node="node-2")
    mark_running(shared_kubectl, namespace, "web", ip="10.244.2.7")
    table = shared_kubectl("get", "pods", "-n", namespace, "-o", "wide")
    assert header(table) == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    [row] = rows(table)
    assert row | {"AGE": ""} == {
        "NAME": "web",
        "READY": "1/1",
        "STATUS": "Running",
        "RESTARTS": "0",
        "AGE": "",
        "IP": "10.244.2.7",
        "NODE": "node-2",
        "NOMINATED NODE": "<none>",
        "READINESS GATES": "<none>",
    }


def test_get_wide_shows_the_node_a_scheduler_bound_the_pod_to(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    create(shared_kubectl, pod("web", namespace))
    bind(shared_kubectl, namespace, "web", node="node-3")
    [row] = rows(shared_kubectl("get", "pods", "-n", namespace, "-o", "wide"))
    assert (row["STATUS"], row["NODE"]) == ("Pending", "node-3")
    stored = shared_kubectl.json("get", "pod", "web", "-n", namespace)
    scheduled = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]


@pytest.mark.parametrize(
    ("node", "ip"),
    [pytest.param(f"node-{i}", f"172.18.0.{i + 2}", id=f"node-{i}") for i in (1, 2, 3)],
)
def test_get_nodes_wide_shows_internal_ip(shared_kubectl: Kubectl, node: str, ip: str) -> None:
    table = rows(shared_kubectl("get", "nodes", "-o", "wide"))
    row = next(r for r in table if r["NAME"] == node)
    assert row["INTERNAL-IP"] == ip
    assert (row["STATUS"], row["VERSION"], row["EXTERNAL-IP"]) == ("Ready", "v1.37.0", "<none>")
    assert row["CONTAINER-RUNTIME"] == "containerd://2.1.0"


@pytest.fixture
def settings(shared_kubectl: Kubectl, namespace: str) -> dict[str, Any]:
    """A ConfigMap and its stored form, read with `kubectl get --raw` (no kubectl printing)."""
    create(
        shared_kubectl,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": namespace, "labels": {"app": "web"}},
            "data": {"color": "blue", "size": "3"},
        },
    )
    raw = shared_kubectl("get", "--raw", f"/api/v1/namespaces/{namespace}/configmaps/settings")
    stored: dict[str, Any] = json.loads(raw)
    return stored


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_get_structured_output_is_the_stored_object(
    shared_kubectl: Kubectl, namespace: str, settings: dict[str, Any], fmt: str
) -> None:
    printed = shared_kubectl("get", "configmap", "settings", "-n", namespace, "-o", fmt)
    # kubectl hides managedFields unless asked (--show-managed-fields).
    expected = {
        **settings,
        "metadata": {k: v for k, v in settings["metadata"].items() if k != "managedFields"},
    }
    assert (json.loads(printed) if fmt == "json" else yaml.safe_load(printed)) == expected
    assert settings["metadata"]["uid"] and settings["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        pytest.param("name", "configmap/settings\n", id="name"),
        pytest.param("jsonpath={.data.color}", "blue", id="jsonpath"),
        pytest.param("jsonpath={.items[*].metadata.name}", "settings", id="jsonpath-list"),
        pytest.param(
            "jsonpath={.metadata.labels.app}/{.data.size}", "web/3", id="jsonpath-template"
        ),
        pytest.param(
            "custom-columns=NAME:.metadata.name,COLOR:.data.color,MISSING:.data.x",
            "NAME       COLOR   MISSING\nsettings   blue    <none>\n",
            id="custom-columns",
        ),
    ],
)
def test_get_formats_output_as_requested(
    shared_kubectl: Kubectl, namespace: str, settings: dict[str, Any], output: str, expected: str
) -> None:
    what = ["configmaps"] if "items" in output else ["configmap", "settings"]
    assert shared_kubectl("get", *what, "-n", namespace, "-o", output) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("app=web", {"web"}, id="equals"),
        pytest.param("app!=web", {"db", "cache"}, id="not-equals"),
        pytest.param("app in (web,db)", {"web", "db"}, id="in"),
        pytest.param("app notin (web,db)", {"cache"}, id="notin"),
        pytest.param("tier", {"web", "db"}, id="exists"),
        pytest.param("!tier", {"cache"}, id="does-not-exist"),
        pytest.param("app=web,tier=front", {"web"}, id="and"),
        pytest.param("app=nothing", set(), id="matches-none"),
    ],
)
def test_get_filters_by_label_selector(
    shared_kubectl: Kubectl, namespace: str, selector: str, expected: set[str]
) -> None:
    create(
        shared_kubectl,
        pod("web", namespace, app="web", tier="front"),
        pod("db", namespace, app="db", tier="back"),
        pod("cache", namespace, app="cache"),
    )
    shown = shared_kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "name")
    assert names(shown) == {f"pod/{name}" for name in expected}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("metadata.name=a", {"a"}, id="name"),
        pytest.param("metadata.name!=a", {"b", "c"}, id="name-not-equal"),
        pytest.param("status.phase=Running", {"a"}, id="phase"),
        pytest.param("status.phase!=Running", {"b", "c"}, id="phase-not-equal"),
        pytest.param("spec.nodeName=node-2", {"b"}, id="node"),
        pytest.param("spec.nodeName=", {"c"}, id="unscheduled"),
        pytest.param("spec.nodeName=node-1,status.phase=Running", {"a"}, id="and"),
    ],
)
def test_get_filters_pods_by_field_selector(
    shared_kubectl: Kubectl, namespace: str, selector: str, expected: set[str]
) -> None:
    create(
        shared_kubectl,
        pod("a", namespace, node="node-1"),
        pod("b", namespace),
        pod("c", namespace),
    )
    bind(shared_kubectl, namespace, "b", node="node-2")
    mark_running(shared_kubectl, namespace, "a", ip="10.244.1.3")
    shown = shared_kubectl(
        "get", "pods", "-n", namespace, "--field-selector", selector, "-o", "name"
    )
    assert names(shown) == {f"pod/{name}" for name in expected}


class Watcher:
    """A `kubectl get -w` process whose output lines arrive on a queue, read with deadlines."""

    def __init__(self, kubectl: Kubectl, *args: str) -> None:
        self.process = subprocess.Popen(
            [KUBECTL, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=kubectl.env(),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, starts: str, *, timeout: float = 10) -> str:
        """The next line starting with `starts`, skipping others; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if line.startswith(starts):
                return line
        raise AssertionError(
            f"kubectl get -w printed no line starting with {starts!r}; it printed {self.seen}"
        )

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def watcher(shared_kubectl: Kubectl, namespace: str) -> Iterator[Watcher]:
    create(
        shared_kubectl,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "first", "namespace": namespace},
        },
    )
    running = Watcher(shared_kubectl, "get", "configmaps", "-n", namespace, "-w")
    yield running
    running.stop()


def test_get_watch_prints_a_row_for_each_change(
    shared_kubectl: Kubectl, namespace: str, watcher: Watcher
) -> None:
    assert watcher.until("NAME").split() == ["NAME", "DATA", "AGE"]
    assert watcher.until("first").split()[:2] == ["first", "0"]
    shared_kubectl("patch", "configmap", "first", "-n", namespace, "-p", '{"data":{"k":"v"}}')
    assert watcher.until("first").split()[:2] == ["first", "1"]
    create(
        shared_kubectl,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "second", "namespace": namespace},
        },
    )
    assert watcher.until("second").split()[:2] == ["second", "0"]
    assert watcher.process.poll() is None, "kubectl get -w ended while the watch was open"


def test_get_all_shows_the_workload_kinds(shared_kubectl: Kubectl, namespace: str) -> None:
    selector = {"matchLabels": {"app": "web"}}
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }
    create(
        shared_kubectl,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"replicas": 0, "selector": selector, "template": template},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "not-in-all", "namespace": namespace},
        },
    )
    shown = shared_kubectl("get", "all", "-n", namespace, "-o", "name")
    assert names(shown) == {"service/web", "deployment.apps/web"}
    table = shared_kubectl("get", "all", "-n", namespace)
    assert "deployment.apps/web   0/0" in table
    assert "service/web   ClusterIP" in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("pods", "x"), 'pods "x" not found', id="pod"),
        pytest.param(("deploy", "x"), 'deployments.apps "x" not found', id="deployment"),
        pytest.param(("node", "x"), 'nodes "x" not found', id="node"),
        pytest.param(("namespace", "x"), 'namespaces "x" not found', id="namespace"),
        pytest.param(
            ("crd", "x.example.com"),
            'customresourcedefinitions.apiextensions.k8s.io "x.example.com" not found',
            id="crd",
        ),
    ],
)
def test_get_missing_object_fails_with_not_found(
    shared_kubectl: Kubectl, args: tuple[str, ...], message: str
) -> None:
    done = shared_kubectl.fails("get", *args)
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error from server (NotFound): {message}"


# -- describe and events ---------------------------------------------------------------------


def event_for(
    obj: dict[str, Any], *, namespace: str, reason: str, message: str, kind_type: str = "Normal"
) -> dict[str, Any]:
    meta = obj["metadata"]
    now = _now()
    involved = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    if meta.get("namespace"):
        involved["namespace"] = meta["namespace"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{meta['name']}.{reason.lower()}", "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind_type,
        "source": {"component": "kubecrew-test"},
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
    }


def _describe_target(kubectl: Kubectl, kind: str, namespace: str) -> tuple[list[str], str]:
    """Make the object to describe; returns the resource/name args and the event's namespace."""
    if kind == "pod":
        create(kubectl, pod("web", namespace))
        return ["pod", "web", "-n", namespace], namespace
    if kind == "deployment":
        kubectl("create", "deployment", "web", "--image=nginx:1.27", "-n", namespace)
        return ["deployment", "web", "-n", namespace], namespace
    return ["node", "node-3"], "default"


@pytest.mark.parametrize("kind", ["pod", "deployment", "node"])
def test_describe_shows_the_object_and_its_events(
    shared_kubectl: Kubectl, namespace: str, kind: str
) -> None:
    args, event_namespace = _describe_target(shared_kubectl, kind, namespace)
    obj = shared_kubectl.json("get", *args)
    message = f"checked by {namespace}"
    create(
        shared_kubectl,
        event_for(
            obj, namespace=event_namespace, reason="Checked", message=message, kind_type="Warning"
        ),
    )
    described = shared_kubectl("describe", *args)
    assert described.splitlines()[0].split() == ["Name:", obj["metadata"]["name"]]
    _, _, events = described.partition("\nEvents:\n")
    shown = [(r["Type"], r["Reason"], r["From"], r["Message"]) for r in rows(events)]
    assert ("Warning", "Checked", "kubecrew-test", message) in shown


def test_describe_namespace_shows_status_quota_and_limits(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "quota", "small", "--hard=pods=4", "-n", namespace)
    # What the ResourceQuota controller would write.
    usage = {"status": {"hard": {"pods": "4"}, "used": {"pods": "1"}}}
    shared_kubectl(
        "patch",
        "quota",
        "small",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(usage),
    )
    described = shared_kubectl("describe", "namespace", namespace)
    assert f"Labels:       kubernetes.io/metadata.name={namespace}\n" in described
    assert "Status:       Active\n" in described
    _, _, quotas = described.partition("Resource Quotas\n  Name:     small\n")
    table = rows(quotas.split("\n\n")[0])
    assert table[1:] == [{"Resource": "pods", "Used": "1", "Hard": "4"}]
    assert "No LimitRange resource." in described
    # kubectl 1.37 looks up no events for a namespace, so its describe has no Events section.
    assert "Events:" not in described


@pytest.fixture
def two_events(shared_kubectl: Kubectl, namespace: str) -> None:
    create(shared_kubectl, pod("web", namespace), pod("db", namespace))
    web = shared_kubectl.json("get", "pod", "web", "-n", namespace)
    db = shared_kubectl.json("get", "pod", "db", "-n", namespace)
    create(
        shared_kubectl,
        event_for(web, namespace=namespace, reason="Pulled", message="image pulled"),
        event_for(
            db,
            namespace=namespace,
            reason="BackOff",
            message="back-off restarting",
            kind_type="Warning",
        ),
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            (), {("Normal", "Pulled", "Pod/web"), ("Warning", "BackOff", "Pod/db")}, id="all"
        ),
        pytest.param(("--for", "pod/db"), {("Warning", "BackOff", "Pod/db")}, id="for-object"),
        pytest.param(("--types", "Normal"), {("Normal", "Pulled", "Pod/web")}, id="types"),
    ],
)
@pytest.mark.usefixtures("two_events")
def test_kubectl_events_lists_the_namespace_events(
    shared_kubectl: Kubectl, namespace: str, args: tuple[str, ...], expected: set[tuple[str, ...]]
) -> None:
    table = shared_kubectl("events", "-n", namespace, *args)
    # Unlike `get events` (a server-side Table), `kubectl events` prints OBJECT as Kind/name.
    assert header(table) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert {(r["TYPE"], r["REASON"], r["OBJECT"]) for r in rows(table)} == expected


@pytest.mark.usefixtures("two_events")
def test_get_events_shows_type_reason_object_and_message(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    table = shared_kubectl("get", "events", "-n", namespace)
    assert header(table) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    shown = {(r["TYPE"], r["REASON"], r["OBJECT"], r["MESSAGE"]) for r in rows(table)}
    assert shown == {
        ("Normal", "Pulled", "pod/web", "image pulled"),
        ("Warning", "BackOff", "pod/db", "back-off restarting"),
    }


# -- explain ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "lines"),
    [
        pytest.param(
            "deployment.spec.replicas",
            [
                "GROUP:      apps",
                "KIND:       Deployment",
                "VERSION:    v1",
                "FIELD: replicas <integer>",
                "Number of desired pods.",
            ],
            id="deployment-replicas",
        ),
        pytest.param(
            "pod.spec.containers.image",
            ["KIND:       Pod", "VERSION:    v1", "FIELD: image <string>", "Container image name."],
            id="pod-container-image",
        ),
    ],
)
def test_explain_prints_the_field_documentation(
    shared_kubectl: Kubectl, field: str, lines: list[str]
) -> None:
    explained = shared_kubectl("explain", field)
    for line in lines:
        assert line in explained
