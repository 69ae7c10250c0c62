"""kubectl node operations against the sandbox: cordon, taint, label, drain (evictions, daemon
sets, emptyDir data, PodDisruptionBudgets) and `kubectl top` over metrics.k8s.io.

Nodes are shared by everything in a sandbox, so each test gets a fresh one (`sandbox`, `kubectl`
fixtures) and works in `default`. Until the simulated scheduler and kubelet arrive, tests do their
part through the API: pods/binding places a pod, pods/status reports it Running and Ready, and
ownerReferences tie pods to the ReplicaSets and DaemonSets their controllers would have made.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from sandbox.cluster import Cluster
from sandbox.metrics import Usage
from sandbox.server import Sandbox
from tests.kubectl import MANIFESTS, rows
from tests.support.kubectl import Kubectl

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


def create_owner(kubectl: Kubectl, kind: str, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        },
    }
    if kind == "ReplicaSet":
        spec["replicas"] = 3
    manifest = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}
    created: dict[str, Any] = json.loads(
        kubectl("create", "-f", "-", "-o", "json", input=json.dumps(manifest))
    )
    return created


def owned_pod(
    name: str, owner: dict[str, Any] | None, *, node_name: str | None = None, scratch: bool = False
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"app": owner["metadata"]["name"] if owner else name},
    }
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "nginx:1.27"}],
    }
    if node_name:
        spec["nodeName"] = node_name  # placed at creation, as the DaemonSet controller may
    if scratch:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


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


def set_running(kubectl: Kubectl, *names: str) -> None:
    """What the kubelet reports for a started, ready container, through pods/status."""
    for name in names:
        kubectl(
            "patch",
            "pod",
            name,
            "--subresource=status",
            "--patch-file",
            str(MANIFESTS / "b" / "status" / "ready.yaml"),
        )


def budget(min_available: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


@pytest.fixture
def workload(kubectl: Kubectl) -> Kubectl:
    """ReplicaSet web: web-a, web-b (emptyDir) on node-1 and web-c on node-2, all Running and
    Ready; DaemonSet agent with its pod on node-1."""
    web = create_owner(kubectl, "ReplicaSet", "web")
    agent = create_owner(kubectl, "DaemonSet", "agent")
    create(
        kubectl,
        owned_pod("web-a", web),
        owned_pod("web-b", web, scratch=True),
        owned_pod("web-c", web),
        owned_pod("agent-node-1", agent, node_name="node-1"),
    )
    for name, node_name in (("web-a", "node-1"), ("web-b", "node-1"), ("web-c", "node-2")):
        assert bind(kubectl, name, node_name).returncode == 0
    set_running(kubectl, "web-a", "web-b", "web-c", "agent-node-1")
    return kubectl


def pods_on(kubectl: Kubectl) -> dict[str, str]:
    return {r["NAME"]: r["NODE"] for r in rows(kubectl("get", "pods", "-o", "wide"))}


def test_binding_assigns_the_pod_to_a_node(kubectl: Kubectl) -> None:
    create(kubectl, owned_pod("waiting", None))

    bound = bind(kubectl, "waiting", "node-2")

    assert bound.returncode == 0, bound.stderr
    assert pods_on(kubectl) == {"waiting": "node-2"}
    status = kubectl.json("get", "pod", "waiting")["status"]
    scheduled = [c["status"] for c in status["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled == ["True"]
    again = bind(kubectl, "waiting", "node-3")
    assert again.returncode == 1
    assert 'pod waiting is already assigned to node "node-2"' in again.stderr


def test_drain_evicts_pods_when_budget_allows(workload: Kubectl) -> None:
    create(workload, budget(1))

    done = workload.run(
        "drain", "node-1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=20s"
    )

    assert done.stderr == "Warning: ignoring DaemonSet-managed Pods: default/agent-node-1\n"
    printed = done.stdout.splitlines()
    assert (printed[0], printed[-1]) == ("node/node-1 cordoned", "node/node-1 drained")
    assert sorted(printed[1:-1]) == [  # evictions run in parallel, so their order varies
        "evicting pod default/web-a",
        "evicting pod default/web-b",
        "pod/web-a evicted",
        "pod/web-b evicted",
    ]
    assert pods_on(workload) == {"agent-node-1": "node-1", "web-c": "node-2"}
    assert node(workload, "node-1")["spec"]["unschedulable"] is True


def test_drain_is_blocked_by_disruption_budget(workload: Kubectl) -> None:
    create(workload, budget(3))

    done = workload.run(
        "drain",
        "node-1",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=5s",
        check=False,
    )

    assert done.returncode == 1
    for pod in ("web-a", "web-b"):
        assert (
            f'error when evicting pods/"{pod}" -n "default" (will retry after 5s): {PDB_REFUSAL}'
        ) in done.stderr.splitlines()
    assert 'error: unable to drain node "node-1"' in done.stderr
    assert set(pods_on(workload)) == {"web-a", "web-b", "web-c", "agent-node-1"}
    assert not workload.json("get", "pod", "web-a")["metadata"].get("deletionTimestamp")
    assert node(workload, "node-1")["spec"]["unschedulable"] is True


def test_eviction_refusal_is_a_429_with_the_budget_cause(workload: Kubectl) -> None:
    create(workload, budget(3))
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web-a", "namespace": "default"},
    }

    refused = workload.fails(
        "create",
        "--raw",
        "/api/v1/namespaces/default/pods/web-a/eviction",
        "-f",
        "-",
        input=json.dumps(eviction),
    )

    assert refused.stderr == f"Error from server (TooManyRequests): {PDB_REFUSAL}\n"


@pytest.mark.parametrize(
    ("flags", "refusal"),
    [
        pytest.param(
            ("--delete-emptydir-data",),
            "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): "
            "default/agent-node-1",
            id="daemonset-pod",
        ),
        pytest.param(
            ("--ignore-daemonsets",),
            "cannot delete Pods with local storage (use --delete-emptydir-data to "
            "override): default/web-b",
            id="emptydir-data",
        ),
    ],
)
def test_drain_refuses_pods_it_must_not_delete(
    workload: Kubectl, flags: tuple[str, ...], refusal: str
) -> None:
    refused = workload.fails("drain", "node-1", *flags, "--timeout=5s")

    assert refused.stdout == "node/node-1 cordoned\n"
    assert refused.stderr.splitlines()[0] == (
        f'error: unable to drain node "node-1" due to error: {refusal}, continuing command...'
    )
    assert set(pods_on(workload)) == {"web-a", "web-b", "web-c", "agent-node-1"}


def test_drain_refuses_pod_without_controller(kubectl: Kubectl) -> None:
    create(kubectl, owned_pod("bare", None, node_name="node-3"))
    set_running(kubectl, "bare")

    refused = kubectl.fails("drain", "node-3", "--timeout=5s")

    assert (
        "cannot delete Pods that declare no controller (use --force to override): default/bare"
    ) in refused.stderr
    assert set(pods_on(kubectl)) == {"bare"}


# -- top -------------------------------------------------------------------------------------


def test_top_pods_shows_recorded_usage(sandbox: Sandbox, kubectl: Kubectl) -> None:
    create(
        kubectl,
        owned_pod("web-a", None, node_name="node-1"),
        owned_pod("web-b", None, node_name="node-2"),
    )
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
    create(kubectl, owned_pod("web-a", None, node_name="node-1"))
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


def test_top_without_metrics_says_not_available(kubectl: Kubectl) -> None:
    refused = kubectl.fails("top", "nodes")

    assert refused.stderr == "error: metrics not available yet\n"
