"""kubectl node operations against the sandbox: cordon, taint, label, drain (evictions, daemon
sets, emptyDir data, PodDisruptionBudgets) and `kubectl top` over metrics.k8s.io.

Nodes are shared by everything in a sandbox, so each test gets a fresh one (`sandbox`, `kubectl`
fixtures) and works in `default`. The cluster is alive: the ReplicaSet and DaemonSet controllers
make the pods a drain meets, the scheduler places them (nodeSelector pins them where a test needs
them), the kubelet runs them and records their usage, the disruption controller keeps budgets'
status. A pod that must stay out of their reach names a scheduler nobody runs.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.cluster import Cluster
from sandbox.metrics import Usage
from sandbox.server import Options, Sandbox
from tests.sandbox.kubectl.suite import rows
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

PDB_REFUSAL = "Cannot evict pod as it would violate the pod's disruption budget."


def node(kubectl: Kubectl, name: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json("get", "node", name)
    return found


def status_of(kubectl: Kubectl, name: str) -> str:
    return {r["NAME"]: r["STATUS"] for r in rows(kubectl("get", "nodes"))}[name]


def test_cordon_and_uncordon_toggle_scheduling(kubectl: Kubectl) -> None:
    assert kubectl("cordon", "node-1") == "node/node-1 cordoned\n"
    assert node(kubectl, "node-1")["spec"]["unschedulable"] is True
    assert status_of(kubectl, "node-1") == "Ready,SchedulingDisabled"
    assert status_of(kubectl, "node-2") == "Ready"
    assert kubectl("cordon", "node-1") == "node/node-1 already cordoned\n"

    assert kubectl("uncordon", "node-1") == "node/node-1 uncordoned\n"
    assert not node(kubectl, "node-1")["spec"].get("unschedulable")
    assert status_of(kubectl, "node-1") == "Ready"


def test_taint_is_added_refused_twice_and_removed(kubectl: Kubectl) -> None:
    assert kubectl("taint", "nodes", "node-1", "dedicated=gpu:NoSchedule") == (
        "node/node-1 tainted\n"
    )
    assert node(kubectl, "node-1")["spec"]["taints"] == [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    ]

    again = kubectl.fails("taint", "nodes", "node-1", "dedicated=cpu:NoSchedule")
    assert again.stderr == (
        "error: node node-1 already has dedicated taint(s) with same "
        "effect(s) and --overwrite is false\n"
    )

    assert kubectl("taint", "nodes", "node-1", "dedicated:NoSchedule-") == (
        "node/node-1 untainted\n"
    )
    assert "taints" not in node(kubectl, "node-1")["spec"]
    missing = kubectl.fails("taint", "nodes", "node-1", "dedicated-")
    assert missing.stderr == 'error: taint "dedicated" not found\n'


def test_taint_with_overwrite_replaces_the_value(kubectl: Kubectl) -> None:
    kubectl("taint", "nodes", "node-2", "dedicated=gpu:NoExecute")

    out = kubectl("taint", "nodes", "node-2", "dedicated=db:NoExecute", "--overwrite")

    assert out == "node/node-2 modified\n"
    (taint,) = node(kubectl, "node-2")["spec"]["taints"]
    assert (taint["key"], taint["value"], taint["effect"]) == ("dedicated", "db", "NoExecute")


def test_label_node_makes_it_selectable(kubectl: Kubectl) -> None:
    assert kubectl("label", "node", "node-2", "disk=ssd") == "node/node-2 labeled\n"

    assert kubectl("get", "nodes", "-l", "disk=ssd", "-o", "name") == "node/node-2\n"
    assert node(kubectl, "node-2")["metadata"]["labels"]["kubernetes.io/hostname"] == "node-2"


# -- scheduling and drain --------------------------------------------------------------------


def create(kubectl: Kubectl, *objects: dict[str, Any]) -> None:
    kubectl("create", "-f", "-", input=yaml.safe_dump_all(objects))


def owner(
    kind: str,
    name: str,
    *,
    labels: dict[str, str],
    node_name: str | None = None,
    scratch: bool = False,
) -> dict[str, Any]:
    """A ReplicaSet (one replica) or DaemonSet whose pods carry `labels`; `node_name` pins the
    pods there through a nodeSelector, `scratch` gives them an emptyDir volume."""
    pod_spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "nginx:1.27"}],
    }
    if node_name:
        pod_spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
    if scratch:
        pod_spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        pod_spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if kind == "ReplicaSet":
        spec["replicas"] = 1
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def bare_pod(name: str, *, node_name: str | None = None) -> dict[str, Any]:
    """A pod no controller owns; without `node_name` it names a scheduler nobody runs, so it
    stays Pending and unbound (no kubelet runs it or records its usage)."""
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "nginx:1.27"}],
    }
    if node_name:
        spec["nodeName"] = node_name
    else:
        spec["schedulerName"] = "no-scheduler"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": spec,
    }


def bind(kubectl: Kubectl, name: str, node_name: str) -> subprocess.CompletedProcess[str]:
    """What the scheduler does: POST pods/binding."""
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }
    path = f"/api/v1/namespaces/default/pods/{name}/binding"
    return kubectl.run("create", "--raw", path, "-f", "-", input=json.dumps(binding), check=False)


def budget(min_available: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


def pod_table(kubectl: Kubectl) -> list[dict[str, str]]:
    return rows(kubectl("get", "pods", "-o", "wide", "--show-labels"))


def ready(kubectl: Kubectl, name: str) -> bool:
    conditions = kubectl.json("get", "pod", name)["status"].get("conditions") or ()
    return any((c["type"], c["status"]) == ("Ready", "True") for c in conditions)


@pytest.fixture
def workload(kubectl: Kubectl) -> dict[str, str]:
    """ReplicaSets web-a and web-b (emptyDir) with their pod on node-1, web-c with its pod on
    node-2 (all labelled app=web), DaemonSet agent with a pod on every node; all Running and
    Ready. Returns the pods' names: "web-a", "web-b", "web-c" and "agent" (node-1's)."""
    create(
        kubectl,
        owner("ReplicaSet", "web-a", labels={"app": "web", "part": "a"}, node_name="node-1"),
        owner(
            "ReplicaSet",
            "web-b",
            labels={"app": "web", "part": "b"},
            node_name="node-1",
            scratch=True,
        ),
        owner("ReplicaSet", "web-c", labels={"app": "web", "part": "c"}, node_name="node-2"),
        owner("DaemonSet", "agent", labels={"app": "agent"}),
    )

    def placed() -> dict[str, str] | None:
        found: dict[str, str] = {}
        for row in pod_table(kubectl):
            labels = dict(label.split("=", 1) for label in row["LABELS"].split(","))
            key = f"web-{labels['part']}" if "part" in labels else labels["app"]
            if key == "agent" and row["NODE"] != "node-1":
                continue
            found[key] = row["NAME"]
        if len(found) < 4 or not all(ready(kubectl, name) for name in found.values()):
            return None
        return found

    names: dict[str, str] = eventually(placed, timeout=30, what="the workload's pods run")
    return names


def with_budget(kubectl: Kubectl, min_available: int) -> None:
    """The budget, once the disruption controller has counted its three healthy pods."""
    create(kubectl, budget(min_available))
    kubectl(
        "wait",
        "--for=jsonpath={.status.currentHealthy}=3",
        "pdb/web",
        "--timeout=30s",
    )


def pods_on(kubectl: Kubectl) -> dict[str, str]:
    return {r["NAME"]: r["NODE"] for r in pod_table(kubectl)}


def test_binding_assigns_the_pod_to_a_node(kubectl: Kubectl) -> None:
    create(kubectl, bare_pod("waiting"))

    bound = bind(kubectl, "waiting", "node-2")

    assert bound.returncode == 0, bound.stderr
    assert pods_on(kubectl) == {"waiting": "node-2"}
    status = kubectl.json("get", "pod", "waiting")["status"]
    scheduled = [c["status"] for c in status["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled == ["True"]
    again = bind(kubectl, "waiting", "node-3")
    assert again.returncode == 1
    assert 'pod waiting is already assigned to node "node-2"' in again.stderr


def test_drain_evicts_pods_when_budget_allows(kubectl: Kubectl, workload: dict[str, str]) -> None:
    with_budget(kubectl, 1)

    done = kubectl.run(
        "drain", "node-1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=20s"
    )

    agent, web_a, web_b = workload["agent"], workload["web-a"], workload["web-b"]
    assert done.stderr == f"Warning: ignoring DaemonSet-managed Pods: default/{agent}\n"
    printed = done.stdout.splitlines()
    assert (printed[0], printed[-1]) == ("node/node-1 cordoned", "node/node-1 drained")
    assert sorted(printed[1:-1]) == sorted(  # evictions run in parallel, so their order varies
        [
            f"evicting pod default/{web_a}",
            f"evicting pod default/{web_b}",
            f"pod/{web_a} evicted",
            f"pod/{web_b} evicted",
        ]
    )
    placed = pods_on(kubectl)
    assert web_a not in placed and web_b not in placed
    assert [name for name, node in placed.items() if node == "node-1"] == [agent]
    assert placed[workload["web-c"]] == "node-2"
    assert node(kubectl, "node-1")["spec"]["unschedulable"] is True


def test_drain_is_blocked_by_disruption_budget(kubectl: Kubectl, workload: dict[str, str]) -> None:
    with_budget(kubectl, 3)

    done = kubectl.run(
        "drain",
        "node-1",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=5s",
        check=False,
    )

    assert done.returncode == 1
    for pod in (workload["web-a"], workload["web-b"]):
        assert (
            f'error when evicting pods/"{pod}" -n "default" (will retry after 5s): {PDB_REFUSAL}'
        ) in done.stderr.splitlines()
    assert 'error: unable to drain node "node-1"' in done.stderr
    assert set(workload.values()) <= set(pods_on(kubectl))
    assert not kubectl.json("get", "pod", workload["web-a"])["metadata"].get("deletionTimestamp")
    assert node(kubectl, "node-1")["spec"]["unschedulable"] is True


def test_eviction_refusal_is_a_429_with_the_budget_cause(
    kubectl: Kubectl, workload: dict[str, str]
) -> None:
    with_budget(kubectl, 3)
    name = workload["web-a"]
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"},
    }

    refused = kubectl.fails(
        "create",
        "--raw",
        f"/api/v1/namespaces/default/pods/{name}/eviction",
        "-f",
        "-",
        input=json.dumps(eviction),
    )

    assert refused.stderr == f"Error from server (TooManyRequests): {PDB_REFUSAL}\n"


@pytest.mark.parametrize(
    ("flags", "refusal", "refused"),
    [
        pytest.param(
            ("--delete-emptydir-data",),
            "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
            "agent",
            id="daemonset-pod",
        ),
        pytest.param(
            ("--ignore-daemonsets",),
            "cannot delete Pods with local storage (use --delete-emptydir-data to override)",
            "web-b",
            id="emptydir-data",
        ),
    ],
)
def test_drain_refuses_pods_it_must_not_delete(
    kubectl: Kubectl, workload: dict[str, str], flags: tuple[str, ...], refusal: str, refused: str
) -> None:
    done = kubectl.fails("drain", "node-1", *flags, "--timeout=5s")

    assert done.stdout == "node/node-1 cordoned\n"
    assert done.stderr.splitlines()[0] == (
        f'error: unable to drain node "node-1" due to error: {refusal}: '
        f"default/{workload[refused]}, continuing command..."
    )
    assert set(workload.values()) <= set(pods_on(kubectl))


def test_drain_refuses_pod_without_controller(kubectl: Kubectl) -> None:
    create(kubectl, bare_pod("bare", node_name="node-3"))
    eventually(lambda: ready(kubectl, "bare"), timeout=30, what="the kubelet runs pod bare")

    refused = kubectl.fails("drain", "node-3", "--timeout=5s")

    assert (
        "cannot delete Pods that declare no controller (use --force to override): default/bare"
    ) in refused.stderr
    assert set(pods_on(kubectl)) == {"bare"}


# -- top -------------------------------------------------------------------------------------


def test_top_pods_shows_recorded_usage(sandbox: Sandbox, kubectl: Kubectl) -> None:
    # Unbound pods: no kubelet records usage for them, only the test does.
    create(kubectl, bare_pod("web-a"), bare_pod("web-b"))
    sandbox.call(lambda c: c.metrics.record_pod("default", "web-a", {"app": Usage("10m", "20Mi")}))
    sandbox.call(
        lambda c: c.metrics.record_pod("default", "web-b", {"app": Usage("250m", "128Mi")})
    )

    table = rows(kubectl("top", "pods"))
    by_cpu = rows(kubectl("top", "pods", "--sort-by=cpu"))

    assert [(r["NAME"], r["CPU(cores)"], r["MEMORY(bytes)"]) for r in table] == [
        ("web-a", "10m", "20Mi"),
        ("web-b", "250m", "128Mi"),
    ]
    assert [r["NAME"] for r in by_cpu] == ["web-b", "web-a"]


def test_top_pod_containers_lists_each_container(sandbox: Sandbox, kubectl: Kubectl) -> None:
    create(kubectl, bare_pod("web-a"))
    sandbox.call(
        lambda c: c.metrics.record_pod(
            "default", "web-a", {"app": Usage("10m", "20Mi"), "proxy": Usage("5m", "8Mi")}
        )
    )

    table = rows(kubectl("top", "pod", "web-a", "--containers"))

    assert [(r["POD"], r["NAME"], r["CPU(cores)"], r["MEMORY(bytes)"]) for r in table] == [
        ("web-a", "app", "10m", "20Mi"),
        ("web-a", "proxy", "5m", "8Mi"),
    ]


def test_top_nodes_shows_usage_against_allocatable(sandbox: Sandbox, kubectl: Kubectl) -> None:
    usage = {
        "node-1": Usage("500m", "2Gi"),
        "node-2": Usage("2", "8Gi"),
        "node-3": Usage("100m", "512Mi"),
    }

    def record(cluster: Cluster) -> None:
        for name, used in usage.items():
            # A dead kubelet records no usage of its own over the test's.
            cluster.world.node(name).heartbeat = False
            cluster.metrics.record_node(name, used)

    sandbox.call(record)

    table = rows(kubectl("top", "nodes"))

    assert [
        (r["NAME"], r["CPU(cores)"], r["CPU(%)"], r["MEMORY(bytes)"], r["MEMORY(%)"]) for r in table
    ] == [
        ("node-1", "500m", "12%", "2048Mi", "12%"),
        ("node-2", "2000m", "50%", "8192Mi", "50%"),
        ("node-3", "100m", "2%", "512Mi", "3%"),
    ]


@pytest.fixture
def nodeless(tmp_path: Path) -> Iterator[Kubectl]:
    """kubectl on a sandbox whose nodes have not registered yet: no kubelet reports usage."""
    with Sandbox(Options(home=tmp_path / "nodeless", nodes=0, rate=RATE)) as running:
        yield Kubectl(running.kubeconfig, tmp_path / "kube-cache")


def test_top_without_metrics_says_not_available(nodeless: Kubectl) -> None:
    refused = nodeless.fails("top", "nodes")

    assert refused.stderr == "error: metrics not available yet\n"
