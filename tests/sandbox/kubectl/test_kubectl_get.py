"""`kubectl get` against the sandbox, as a user of a real cluster sees it: every built-in type
listed, pod metrics, all namespaces, wide pod and node columns, JSON/YAML/name/jsonpath/
custom-columns output, label and field selectors, `get all`, and NotFound for missing objects.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from sandbox.metrics import Usage
from sandbox.registry import BUILTINS, ResourceType
from sandbox.server import Sandbox
from tests.sandbox.kubectl.read_objects import names, pod
from tests.sandbox.kubectl.suite import create, header, rows
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

LISTABLE = [rt for rt in BUILTINS if "list" in rt.verbs]


def untouched(manifest: dict[str, Any]) -> dict[str, Any]:
    """The pod with a scheduler nobody runs: it stays Pending and unbound, with no events."""
    return {**manifest, "spec": {**manifest["spec"], "schedulerName": "no-scheduler"}}


def running(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any]:
    """The pod once the kubelet reports it Running and Ready."""
    kubectl("wait", "--for=condition=Ready", f"pod/{name}", "-n", namespace, "--timeout=30s")
    found: dict[str, Any] = kubectl.json("get", "pod", name, "-n", namespace)
    return found


def listed_names(kubectl: Kubectl, rt: ResourceType, scope: list[str]) -> set[str]:
    listed = kubectl.json("get", rt.qualified, *scope)
    assert listed["kind"] == "List"
    assert {item["kind"] for item in listed["items"]} <= {rt.kind}
    return {item["metadata"]["name"] for item in listed["items"]}


@pytest.mark.parametrize("rt", LISTABLE, ids=[rt.qualified for rt in LISTABLE])
def test_get_lists_every_builtin_type(shared_kubectl: Kubectl, rt: ResourceType) -> None:
    scope = ["-A"] if rt.namespaced else []
    # Events print their NAME only in the wide table.
    wide = ["-o", "wide"] if rt.kind == "Event" else []
    # The living cluster keeps adding objects (events, leases): the table must show at least
    # what was listed before it and at most what is listed after it.
    before = listed_names(shared_kubectl, rt, scope)
    done = shared_kubectl.run("get", rt.qualified, *scope, *wide)
    after = listed_names(shared_kubectl, rt, scope)
    # kubectl itself marks the default StorageClass in the NAME column.
    shown = {row["NAME"].removesuffix(" (default)") for row in rows(done.stdout)}
    assert before <= shown <= after
    if not shown:
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
    create(shared_kubectl, pod("web", namespace, node="node-2"))
    ip = running(shared_kubectl, namespace, "web")["status"]["podIP"]
    assert ip.startswith("10.244.")
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
        "IP": ip,
        "NODE": "node-2",
        "NOMINATED NODE": "<none>",
        "READINESS GATES": "<none>",
    }


def test_get_wide_shows_the_node_a_scheduler_bound_the_pod_to(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    create(shared_kubectl, pod("web", namespace))

    def bound() -> str:
        [row] = rows(shared_kubectl("get", "pods", "-n", namespace, "-o", "wide"))
        return row["NODE"] if row["NODE"] != "<none>" else ""

    node = eventually(bound, timeout=30, what="the scheduler binds pod web")
    assert node in {"node-1", "node-2", "node-3"}
    stored = shared_kubectl.json("get", "pod", "web", "-n", namespace)
    assert stored["spec"]["nodeName"] == node
    scheduled = [c for c in stored["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert [c["status"] for c in scheduled] == ["True"]
    events = shared_kubectl.json(
        "get", "events", "-n", namespace, "--field-selector", "reason=Scheduled"
    )["items"]
    assert [e["message"] for e in events] == [f"Successfully assigned {namespace}/web to {node}"]


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
    got = json.loads(printed) if fmt == "json" else yaml.safe_load(printed)
    # kubectl hides managedFields unless asked (--show-managed-fields). The creation stamp is
    # shown on the wall clock as of each read, and the test sandboxes live faster than that
    # (sandbox/timeframe.py): it is there, and the rest is the stored object.
    unstamped = ("managedFields", "creationTimestamp")
    expected = {
        **settings,
        "metadata": {k: v for k, v in settings["metadata"].items() if k not in unstamped},
    }
    assert got["metadata"].pop("creationTimestamp")
    assert got == expected
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
        pytest.param("spec.nodeName=ghost-node", {"b"}, id="node"),
        pytest.param("spec.nodeName=", {"c"}, id="unscheduled"),
        pytest.param("spec.nodeName=node-1,status.phase=Running", {"a"}, id="and"),
    ],
)
def test_get_filters_pods_by_field_selector(
    shared_kubectl: Kubectl, namespace: str, selector: str, expected: set[str]
) -> None:
    # a runs on node-1; b is bound to a node without a kubelet (Pending); c is never scheduled.
    create(
        shared_kubectl,
        pod("a", namespace, node="node-1"),
        pod("b", namespace, node="ghost-node"),
        untouched(pod("c", namespace)),
    )
    running(shared_kubectl, namespace, "a")
    shown = shared_kubectl(
        "get", "pods", "-n", namespace, "--field-selector", selector, "-o", "name"
    )
    assert names(shown) == {f"pod/{name}" for name in expected}


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

    # The deployment controller gives the Deployment its ReplicaSet, which `get all` shows too.
    def replica_set() -> str:
        listed = shared_kubectl.json("get", "replicasets", "-n", namespace)["items"]
        return ",".join(rs["metadata"]["name"] for rs in listed)

    owned = eventually(replica_set, timeout=30, what="the Deployment's ReplicaSet")
    assert owned.startswith("web-")
    shown = shared_kubectl("get", "all", "-n", namespace, "-o", "name")
    assert names(shown) == {"service/web", "deployment.apps/web", f"replicaset.apps/{owned}"}
    table = shared_kubectl("get", "all", "-n", namespace)
    assert "deployment.apps/web   0/0" in table
    assert "service/web   ClusterIP" in table
    assert f"replicaset.apps/{owned}   0         0         0" in table


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
