"""The Prometheus text exposition of a sandbox cluster: kube-state-metrics, cAdvisor and traffic.

Objects are created through the Simulation's API path; statuses are then written by the test
(playing the kubelet and controllers) and rendered at once, without stepping the control plane,
so each test decides exactly what the exposition sees.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import timedelta
from typing import Any

import pytest

from sandbox.exposition import render
from sandbox.exposition.text import Exposition, labels, number
from sandbox.metrics import Usage
from sandbox.store import Obj
from tests.support.simulation import Simulation

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
Samples = list[tuple[str, dict[str, str], float]]


def parse(text: str) -> Samples:
    found: Samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, label_text, value = match.groups()
        pairs = dict(LABEL.findall(label_text or ""))
        found.append((name, pairs, float(value)))
    return found


def values(samples: Samples, name: str, **wanted: str) -> list[tuple[dict[str, str], float]]:
    return [
        (pairs, value)
        for metric, pairs, value in samples
        if metric == name and all(pairs.get(k) == v for k, v in wanted.items())
    ]


def value(samples: Samples, name: str, **wanted: str) -> float:
    [(_, found)] = values(samples, name, **wanted)
    return found


def put(sim: Simulation, plural: str, namespace: str, name: str, **changes: Any) -> Obj:
    """Replace top-level parts of an object (e.g. status=...) without running any controller."""
    old = sim.get(plural, namespace, name)
    assert old is not None, (plural, namespace, name)
    new = sim.objects.write(sim.rt(plural), {**old, **changes}, old, manager="test")
    sim.cluster.store.commit()
    return new


POD = """
apiVersion: v1
kind: Pod
metadata: {name: api-0, labels: {app: api}}
spec:
  nodeName: node-1
  containers:
  - name: api
    image: nginx:1.27
    resources:
      requests: {cpu: 250m, memory: 64Mi, nvidia.com/gpu: "1"}
      limits: {memory: 128Mi, nvidia.com/gpu: "1"}
  - name: sidecar
    image: busybox:1.36
"""

RUNNING_STATUS = {
    "phase": "Running",
    "hostIP": "10.0.0.1",
    "podIP": "10.244.1.7",
    "conditions": [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "False"},
    ],
    "containerStatuses": [
        {
            "name": "api",
            "image": "docker.io/library/nginx:1.27",
            "imageID": "docker.io/library/nginx@sha256:" + "a" * 64,
            "ready": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
        },
        {
            "name": "sidecar",
            "image": "docker.io/library/busybox:1.36",
            "imageID": "",
            "ready": False,
            "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
        },
    ],
}


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2)


@pytest.fixture
def running_pod(sim: Simulation) -> Obj:
    sim.apply(POD)
    return put(sim, "pods", "default", "api-0", status=RUNNING_STATUS)


def test_pod_phase_is_one_hot_and_readiness_follows_the_ready_condition(
    sim: Simulation, running_pod: Obj
) -> None:
    samples = parse(render(sim.cluster))
    phases = {p["phase"]: v for p, v in values(samples, "kube_pod_status_phase", pod="api-0")}
    assert phases == {"Pending": 0, "Running": 1, "Succeeded": 0, "Failed": 0, "Unknown": 0}
    ready = {p["condition"]: v for p, v in values(samples, "kube_pod_status_ready", pod="api-0")}
    assert ready == {"true": 0, "false": 1, "unknown": 0}
    assert value(samples, "kube_pod_status_scheduled", pod="api-0", condition="true") == 1


def test_container_restarts_and_reasons_are_exported_per_container(
    sim: Simulation, running_pod: Obj
) -> None:
    samples = parse(render(sim.cluster))
    restarts = "kube_pod_container_status_restarts_total"
    assert value(samples, restarts, pod="api-0", container="sidecar") == 4
    assert value(samples, restarts, pod="api-0", container="api") == 0
    waiting = values(samples, "kube_pod_container_status_waiting_reason", pod="api-0")
    assert [(p["container"], p["reason"], v) for p, v in waiting] == [
        ("sidecar", "CrashLoopBackOff", 1)
    ]
    last = values(samples, "kube_pod_container_status_last_terminated_reason", pod="api-0")
    assert [(p["container"], p["reason"]) for p, _ in last] == [("sidecar", "OOMKilled")]
    assert values(samples, "kube_pod_container_status_terminated_reason", pod="api-0") == []
    assert value(samples, "kube_pod_container_status_ready", container="api") == 1
    assert value(samples, "kube_pod_container_status_waiting", container="sidecar") == 1


def test_container_requests_and_limits_are_in_base_units(sim: Simulation, running_pod: Obj) -> None:
    samples = parse(render(sim.cluster))
    requests = {
        (p["resource"], p["unit"]): v
        for p, v in values(samples, "kube_pod_container_resource_requests", container="api")
    }
    assert requests == {
        ("cpu", "core"): 0.25,
        ("memory", "byte"): 64 * 2**20,
        ("nvidia_com_gpu", "integer"): 1,
    }
    limit = "kube_pod_container_resource_limits"
    assert value(samples, limit, container="api", resource="memory") == 128 * 2**20
    assert values(samples, limit, container="sidecar") == []


def test_pod_info_names_node_addresses_and_controlling_owner(sim: Simulation) -> None:
    sim.apply(
        """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
"""
    )
    [pod] = sim.pods(app="web")
    name = pod["metadata"]["name"]
    put(sim, "pods", "default", name, spec={**pod["spec"], "nodeName": "node-2"})
    samples = parse(render(sim.cluster))
    [(info, _)] = values(samples, "kube_pod_info", pod=name)
    replicaset = pod["metadata"]["ownerReferences"][0]["name"]
    assert info["node"] == "node-2"
    assert (info["created_by_kind"], info["created_by_name"]) == ("ReplicaSet", replicaset)
    [(owner, _)] = values(samples, "kube_pod_owner", pod=name)
    assert (owner["owner_kind"], owner["owner_is_controller"]) == ("ReplicaSet", "true")
    [(rs_owner, _)] = values(samples, "kube_replicaset_owner", replicaset=replicaset)
    assert (rs_owner["owner_kind"], rs_owner["owner_name"]) == ("Deployment", "web")


def test_deployment_numbers_and_conditions(sim: Simulation) -> None:
    sim.apply(
        """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
"""
    )
    status = {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "unavailableReplicas": 1,
        "conditions": [
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
            {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
        ],
    }
    put(sim, "deployments", "default", "web", status=status)
    samples = parse(render(sim.cluster))
    for name, expected in [
        ("kube_deployment_spec_replicas", 3),
        ("kube_deployment_status_replicas", 3),
        ("kube_deployment_status_replicas_available", 2),
        ("kube_deployment_status_replicas_unavailable", 1),
        ("kube_deployment_status_replicas_updated", 3),
        ("kube_deployment_status_replicas_ready", 2),
    ]:
        assert value(samples, name, namespace="default", deployment="web") == expected, name
    conditions = {
        (p["condition"], p["status"]): v
        for p, v in values(samples, "kube_deployment_status_condition", deployment="web")
        if v == 1
    }
    assert conditions == {("Available", "false"): 1, ("Progressing", "true"): 1}


def test_node_conditions_resources_taints_and_cordon(sim: Simulation) -> None:
    node = sim.get("nodes", "", "node-1")
    assert node is not None
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    put(sim, "nodes", "", "node-1", spec={**node["spec"], "unschedulable": True, "taints": [taint]})
    put(
        sim,
        "nodes",
        "",
        "node-1",
        status={
            **node["status"],
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3800m", "memory": "15Gi", "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"},
                {"type": "MemoryPressure", "status": "False"},
            ],
        },
    )
    samples = parse(render(sim.cluster))
    on = {
        (p["condition"], p["status"])
        for p, v in values(samples, "kube_node_status_condition", node="node-1")
        if v == 1
    }
    assert on == {("Ready", "unknown"), ("MemoryPressure", "false")}
    assert value(samples, "kube_node_spec_unschedulable", node="node-1") == 1
    assert value(samples, "kube_node_spec_unschedulable", node="node-2") == 0
    [(found, _)] = values(samples, "kube_node_spec_taint", node="node-1")
    assert (found["key"], found["value"], found["effect"]) == ("dedicated", "gpu", "NoSchedule")
    allocatable = "kube_node_status_allocatable"
    assert value(samples, allocatable, node="node-1", resource="cpu", unit="core") == 3.8
    capacity = "kube_node_status_capacity"
    assert value(samples, capacity, node="node-1", resource="memory", unit="byte") == 16 * 2**30
    assert value(samples, capacity, node="node-1", resource="pods", unit="integer") == 110


def test_service_info_and_endpoint_address_counts(sim: Simulation) -> None:
    sim.apply(
        """
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  ports: [{port: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: db}
subsets:
- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.6}]
  notReadyAddresses: [{ip: 10.244.0.7}]
  ports: [{port: 5432}]
"""
    )
    samples = parse(render(sim.cluster))
    [(info, _)] = values(samples, "kube_service_info", service="db")
    assert info["cluster_ip"] == sim.get("services", "default", "db")["spec"]["clusterIP"]
    assert value(samples, "kube_service_spec_type", service="db", type="ClusterIP") == 1
    assert value(samples, "kube_endpoint_address_available", endpoint="db") == 2
    assert value(samples, "kube_endpoint_address_not_ready", endpoint="db") == 1
    ready = {
        p["ip"]: p["ready"] for p, _ in values(samples, "kube_endpoint_address", endpoint="db")
    }
    assert ready == {"10.244.0.5": "true", "10.244.0.6": "true", "10.244.0.7": "false"}


def test_claim_phase_is_one_hot(sim: Simulation) -> None:
    sim.apply(
        """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
    )
    put(sim, "persistentvolumeclaims", "default", "data", status={"phase": "Pending"})
    samples = parse(render(sim.cluster))
    phases = {
        p["phase"]: v
        for p, v in values(
            samples, "kube_persistentvolumeclaim_status_phase", persistentvolumeclaim="data"
        )
    }
    assert phases == {"Pending": 1, "Bound": 0, "Lost": 0}
    requested = "kube_persistentvolumeclaim_resource_requests_storage_bytes"
    assert value(samples, requested, persistentvolumeclaim="data") == 2**30


def test_cadvisor_series_come_from_measured_usage(sim: Simulation, running_pod: Obj) -> None:
    metrics = sim.cluster.metrics
    metrics.record_pod("default", "api-0", {"api": Usage(cpu="500m", memory="100Mi")})
    metrics.record_node("node-1", Usage(cpu="2", memory="3Gi"))
    render(sim.cluster)  # the first scrape starts the CPU counters
    sim.cluster.clock.advance(timedelta(seconds=20))
    samples = parse(render(sim.cluster))
    where = {"namespace": "default", "pod": "api-0", "container": "api"}
    assert value(samples, "container_cpu_usage_seconds_total", **where) == 10.0
    assert value(samples, "container_memory_working_set_bytes", **where) == 100 * 2**20
    assert value(samples, "container_spec_memory_limit_bytes", **where) == 128 * 2**20
    [(found, _)] = values(samples, "container_memory_usage_bytes", **where)
    assert (found["node"], found["image"]) == ("node-1", "nginx:1.27")
    assert value(samples, "node_cpu_usage_seconds_total", node="node-1") == 40.0
    assert value(samples, "node_memory_working_set_bytes", node="node-1") == 3 * 2**30


def test_traffic_is_whole_requests_with_a_complete_histogram(sim: Simulation) -> None:
    sim.apply(
        """
apiVersion: v1
kind: Service
metadata: {name: typo}
spec:
  selector: {app: nothing-has-this}
  ports: [{port: 80}]
"""
    )
    render(sim.cluster)
    sim.cluster.clock.advance(timedelta(seconds=7.5))
    samples = parse(render(sim.cluster))
    codes = {p["code"]: v for p, v in values(samples, "http_requests_total", service="typo")}
    assert codes == {"200": 0, "500": 0, "503": 75}
    buckets = values(samples, "http_request_duration_seconds_bucket", service="typo")
    assert [p["le"] for p, _ in buckets][-1] == "+Inf"
    assert [v for _, v in buckets] == [75] * len(buckets)  # refused at once: every bucket
    assert value(samples, "http_request_duration_seconds_count", service="typo") == 75


def test_label_values_are_escaped_and_numbers_formatted() -> None:
    assert labels(("reason", 'say "hi"\\now\nplease')) == 'reason="say \\"hi\\"\\\\now\\nplease"'
    assert [number(v) for v in (3.0, 0.25, float("inf"), float("-inf"), float("nan"))] == [
        "3",
        "0.25",
        "+Inf",
        "-Inf",
        "NaN",
    ]
    out = Exposition()
    out.gauge("demo", "Help with a \\ backslash\nand a newline.").add(labels(("a", "b")), 1)
    assert out.text() == (
        "# HELP demo Help with a \\\\ backslash\\nand a newline.\n"
        "# TYPE demo gauge\n"
        'demo{a="b"} 1\n'
    )


def test_every_family_has_help_and_type_and_contiguous_samples(
    sim: Simulation, running_pod: Obj
) -> None:
    sim.apply(
        """
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80}]
"""
    )
    text = render(sim.cluster)
    typed: dict[str, str] = {}
    helped: set[str] = set()
    closed: set[str] = set()
    current = ""
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name not in typed, f"{name} declared twice"
            closed.add(current)
            typed[name], current = kind, name
        elif line:
            metric = SAMPLE.match(line)
            assert metric, line
            name = metric.group(1)
            family = name if name in typed else re.sub(r"_(bucket|sum|count)$", "", name)
            assert family == current and family not in closed, f"{name} outside its family"
    assert set(typed) == helped
    assert typed["http_request_duration_seconds"] == "histogram"
    assert typed["kube_pod_container_status_restarts_total"] == "counter"
    assert typed["container_cpu_usage_seconds_total"] == "counter"


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(
    PROMTOOL is None and not os.environ.get("CI"),
    reason="no `promtool` on PATH; `make install` installs it with prometheus (required in CI)",
)
def test_promtool_accepts_the_exposition(sim: Simulation, running_pod: Obj) -> None:
    assert PROMTOOL is not None, "promtool is missing: run `make install`"
    sim.cluster.metrics.record_pod("default", "api-0", {"api": Usage(cpu="1m", memory="1Mi")})
    text = render(sim.cluster)
    checked = subprocess.run(
        [PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
