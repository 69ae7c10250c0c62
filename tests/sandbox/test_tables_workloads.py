"""Server-side Tables for workloads: the columns and cells `kubectl get` prints for
Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, HorizontalPodAutoscalers,
PodDisruptionBudgets and ControllerRevisions, as Kubernetes 1.37 does; with the Job status and
HPA target rules in detail.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.table_objects import (
    Json,
    ago,
    check_columns_and_cells,
    meta,
    render,
    row_by_name,
)

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "app", "image": "nginx:1.27"},
            {"name": "log", "image": "fluentbit"},
        ]
    },
}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
}

KIND_CASES = [
    pytest.param(
        "apps",
        "Deployment",
        {
            "metadata": meta("web"),
            "spec": {"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        },
        ["Name", "Ready", "Up-to-date", "Available", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Ready": "2/3",
            "Up-to-date": 3,
            "Available": 2,
            "Age": "60m",
            "Containers": "app,log",
            "Images": "nginx:1.27,fluentbit",
            "Selector": "app=web,tier in (a,b)",
        },
        id="deployment",
    ),
    pytest.param(
        "apps",
        "ReplicaSet",
        {
            "metadata": meta("web-7d4b9"),
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
            "status": {"replicas": 1, "readyReplicas": 1},
        },
        ["Name", "Desired", "Current", "Ready", "Age"],
        ["Containers", "Images", "Selector"],
        {"Desired": 1, "Current": 1, "Ready": 1, "Selector": "app=web"},
        id="replicaset-defaults-replicas-to-1",
    ),
    pytest.param(
        "apps",
        "StatefulSet",
        {
            "metadata": meta("db", age=45 * 86400),
            "spec": {"replicas": 3, "template": TEMPLATE},
            "status": {"readyReplicas": 3},
        },
        ["Name", "Ready", "Age"],
        ["Containers", "Images"],
        {"Ready": "3/3", "Age": "45d"},
        id="statefulset",
    ),
    pytest.param(
        "apps",
        "DaemonSet",
        {
            "metadata": meta("agent"),
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "spec": {
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "containers": [{"name": "a", "image": "agent:1"}],
                    }
                },
            },
            "status": {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
            },
        },
        ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Desired": 3,
            "Ready": 2,
            "Node Selector": "kubernetes.io/os=linux",
            "Selector": "app=agent",
        },
        id="daemonset",
    ),
    pytest.param(
        "batch",
        "Job",
        {
            "metadata": meta("migrate"),
            "spec": {"completions": 1, "template": TEMPLATE},
            "status": {
                "succeeded": 1,
                "startTime": ago(600),
                "completionTime": ago(555),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
        },
        ["Name", "Status", "Completions", "Duration", "Age"],
        ["Containers", "Images", "Selector"],
        {"Status": "Complete", "Completions": "1/1", "Duration": "45s", "Selector": "<none>"},
        id="job-complete",
    ),
    pytest.param(
        "batch",
        "CronJob",
        {
            "metadata": meta("backup"),
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
            "status": {"lastScheduleTime": ago(200), "active": [{"name": "backup-1"}]},
        },
        ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Schedule": "*/5 * * * *",
            "Timezone": "<none>",
            "Suspend": "False",
            "Active": 1,
            "Last Schedule": "3m20s",
        },
        id="cronjob",
    ),
    pytest.param(
        "autoscaling",
        "HorizontalPodAutoscaler",
        {
            "metadata": meta("web"),
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 80},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 3,
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 42}},
                    }
                ],
            },
        },
        ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        [],
        {
            "Reference": "Deployment/web",
            "Targets": "cpu: 42%/80%",
            "MinPods": "1",
            "MaxPods": 10,
            "Replicas": 3,
        },
        id="hpa",
    ),
    pytest.param(
        "policy",
        "PodDisruptionBudget",
        {
            "metadata": meta("web"),
            "spec": {"minAvailable": "50%"},
            "status": {"disruptionsAllowed": 1},
        },
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        [],
        {"Min Available": "50%", "Max Unavailable": "N/A", "Allowed Disruptions": 1},
        id="pdb",
    ),
    pytest.param(
        "apps",
        "ControllerRevision",
        {
            "metadata": meta(
                "db-5f7",
                ownerReferences=[
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": "db",
                        "controller": True,
                    }
                ],
            ),
            "revision": 2,
        },
        ["Name", "Controller", "Revision", "Age"],
        [],
        {"Controller": "statefulset.apps/db", "Revision": 2},
        id="controllerrevision",
    ),
]


@pytest.mark.parametrize(("group", "kind", "obj", "normal", "wide", "sample"), KIND_CASES)
def test_builtin_kind_columns_and_cells(
    group: str, kind: str, obj: Json, normal: list[str], wide: list[str], sample: dict[str, Any]
) -> None:
    check_columns_and_cells(group, kind, obj, normal, wide, sample)


# --- Job and HPA status rules --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "extra_meta", "expected"),
    [
        pytest.param(
            {"parallelism": 3},
            {"succeeded": 1, "startTime": ago(130)},
            {},
            ("Running", "1/1 of 3", "2m10s"),
            id="running-parallel",
        ),
        pytest.param(
            {"completions": 5},
            {"conditions": [{"type": "Failed", "status": "True"}]},
            {},
            ("Failed", "0/5", ""),
            id="failed-never-started",
        ),
        pytest.param(
            {"completions": 1, "suspend": True},
            {"conditions": [{"type": "Suspended", "status": "True"}]},
            {},
            ("Suspended", "0/1", ""),
            id="suspended",
        ),
        pytest.param(
            {"completions": 1},
            {},
            {"deletionTimestamp": ago(1)},
            ("Terminating", "0/1", ""),
            id="terminating",
        ),
    ],
)
def test_job_status_completions_and_duration(
    spec: Json, status: Json, extra_meta: Json, expected: tuple[str, ...]
) -> None:
    obj = {
        "metadata": meta("job", **extra_meta),
        "spec": {**spec, "template": TEMPLATE},
        "status": status,
    }
    row = row_by_name(render("batch", "Job", obj))
    assert (row["Status"], row["Completions"], row["Duration"]) == expected


@pytest.mark.parametrize(
    ("metrics", "current", "expected"),
    [
        pytest.param([], [], "cpu: <unknown>/80%", id="defaulted-cpu-target"),
        pytest.param(
            [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "200Mi"},
                    },
                },
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                },
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue"},
                        "target": {"type": "Value", "value": "30"},
                    },
                },
            ],
            [
                {
                    "type": "Resource",
                    "resource": {"name": "memory", "current": {"averageValue": "120Mi"}},
                }
            ],
            "memory: 120Mi/200Mi, <unknown>/10 + 1 more...",
            id="mixed-metrics-capped-at-two",
        ),
        pytest.param(
            [
                {
                    "type": "Object",
                    "object": {"target": {"type": "AverageValue", "averageValue": "5"}},
                }
            ],
            [{"type": "Object", "object": {"current": {"averageValue": "7"}}}],
            "7/5 (avg)",
            id="object-average",
        ),
    ],
)
def test_hpa_targets(metrics: list[Any], current: list[Any], expected: str) -> None:
    obj = {
        "metadata": meta("hpa"),
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "w"},
            "maxReplicas": 5,
            "minReplicas": 2,
            "metrics": metrics,
        },
        "status": {"currentMetrics": current},
    }
    row = row_by_name(render("autoscaling", "HorizontalPodAutoscaler", obj))
    assert (row["Targets"], row["MinPods"]) == (expected, "2")
