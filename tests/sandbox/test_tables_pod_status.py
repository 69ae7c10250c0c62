"""Server-side Tables for Pods: the Status, Ready and Restarts cells `kubectl get pods` prints
(container waiting/terminated reasons, init containers, sidecars, deletion), the wide cells and
the row conditions of finished pods, as Kubernetes 1.37 does.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.table_objects import (
    READY,
    Json,
    ago,
    pod,
    render,
    row_by_name,
    running,
    terminated,
    waiting,
)


@pytest.mark.parametrize(
    ("obj", "status", "ready"),
    [
        pytest.param(pod(conditions=READY), "Running", "1/1", id="running"),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ContainerCreating")]),
            "ContainerCreating",
            "0/1",
            id="pending-container-creating",
        ),
        pytest.param(
            pod(phase="Pending", containers=[]), "Pending", "0/0", id="pending-unscheduled"
        ),
        pytest.param(
            pod(containers=[waiting("app", "CrashLoopBackOff", restarts=4)]),
            "CrashLoopBackOff",
            "0/1",
            id="crashloop",
        ),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ImagePullBackOff")]),
            "ImagePullBackOff",
            "0/1",
            id="image-pull-backoff",
        ),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ErrImagePull")]),
            "ErrImagePull",
            "0/1",
            id="err-image-pull",
        ),
        pytest.param(
            pod(phase="Succeeded", containers=[terminated("app", exit_code=0, reason="Completed")]),
            "Completed",
            "0/1",
            id="completed",
        ),
        pytest.param(
            pod(phase="Failed", containers=[terminated("app", exit_code=1, reason="Error")]),
            "Error",
            "0/1",
            id="error",
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=137, reason="OOMKilled")]),
            "OOMKilled",
            "0/1",
            id="oomkilled",
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=2)]), "ExitCode:2", "0/1", id="exit-code"
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=0, signal=9)]),
            "Signal:9",
            "0/1",
            id="signal",
        ),
        pytest.param(
            pod(containers=[running("app"), waiting("log", "CrashLoopBackOff")]),
            "CrashLoopBackOff",
            "1/2",
            id="second-container-crashing",
        ),
        pytest.param(
            pod(
                containers=[
                    waiting("app", "CreateContainerConfigError"),
                    waiting("log", "ErrImagePull"),
                ]
            ),
            "CreateContainerConfigError",
            "0/2",
            id="first-container-reason-wins",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[waiting("migrate", "PodInitializing")],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:0/1",
            "0/1",
            id="init-0-of-1",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[terminated("a", exit_code=0), running("b", ready=False)],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:1/2",
            "0/1",
            id="init-1-of-2",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[waiting("migrate", "CrashLoopBackOff", restarts=2)],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:CrashLoopBackOff",
            "0/1",
            id="init-crashloop",
        ),
        pytest.param(
            pod(phase="Pending", init=[terminated("migrate", exit_code=1, reason="Error")]),
            "Init:Error",
            "0/1",
            id="init-error",
        ),
        pytest.param(
            pod(phase="Pending", init=[terminated("migrate", exit_code=3)]),
            "Init:ExitCode:3",
            "0/1",
            id="init-exit-code",
        ),
        pytest.param(
            pod(
                init=[running("proxy")],
                init_specs=[{"name": "proxy", "restartPolicy": "Always"}],
                containers=[running("app")],
                conditions=READY,
            ),
            "Running",
            "2/2",
            id="sidecar-counts-as-container",
        ),
        pytest.param(
            pod(
                phase="Running",
                containers=[terminated("app", exit_code=0, reason="Completed"), running("log")],
                conditions=[{"type": "Ready", "status": "False"}],
            ),
            "NotReady",
            "1/2",
            id="completed-with-running-container-not-ready",
        ),
        pytest.param(
            pod(phase="Failed", reason="Evicted", containers=[]), "Evicted", "0/0", id="evicted"
        ),
        pytest.param(
            pod(
                phase="Pending",
                containers=[],
                conditions=[
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
                ],
            ),
            "SchedulingGated",
            "0/0",
            id="scheduling-gated",
        ),
        pytest.param(pod(phase="Unknown", reason="NodeLost"), "NodeLost", "1/1", id="node-lost"),
    ],
)
def test_pod_status_follows_kubectl_rules(obj: Json, status: str, ready: str) -> None:
    row = row_by_name(render("", "Pod", obj))
    assert (row["Status"], row["Ready"]) == (status, ready)


@pytest.mark.parametrize(
    ("phase", "reason", "expected"),
    [
        pytest.param("Running", None, "Terminating", id="running-pod-deleted"),
        pytest.param("Succeeded", None, "Completed", id="finished-pod-keeps-its-status"),
        pytest.param("Running", "NodeLost", "Unknown", id="lost-with-its-node"),
    ],
)
def test_deleted_pods_show_terminating(phase: str, reason: str | None, expected: str) -> None:
    containers = (
        [terminated("app", exit_code=0, reason="Completed")] if phase == "Succeeded" else None
    )
    obj = pod(phase=phase, containers=containers)
    if reason:
        obj["status"]["reason"] = reason
    obj["metadata"]["deletionTimestamp"] = ago(5)
    assert row_by_name(render("", "Pod", obj))["Status"] == expected


def test_restarts_show_how_long_ago_the_last_restart_was() -> None:
    crashed = waiting("app", "CrashLoopBackOff", restarts=3)
    crashed["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": ago(125)}}
    other = running("log", restarts=1)
    other["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": ago(3000)}}
    never = waiting("app", "CrashLoopBackOff", restarts=2)
    cells = [
        row_by_name(render("", "Pod", pod(containers=c)))["Restarts"]
        for c in ([crashed, other], [never])
    ]
    assert cells == ["4 (2m5s ago)", "2"]


def test_pod_wide_cells_show_ip_node_and_readiness_gates() -> None:
    obj = pod(
        conditions=[*READY, {"type": "example.com/lb", "status": "True"}],
        podIPs=[{"ip": "10.1.2.3"}],
    )
    obj["spec"] |= {
        "nodeName": "node-2",
        "readinessGates": [
            {"conditionType": "example.com/lb"},
            {"conditionType": "example.com/dns"},
        ],
    }
    row = row_by_name(render("", "Pod", obj))
    assert [row["IP"], row["Node"], row["Nominated Node"], row["Readiness Gates"]] == [
        "10.1.2.3",
        "node-2",
        "<none>",
        "1/2",
    ]


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        pytest.param(
            "Succeeded",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ],
            id="succeeded",
        ),
        pytest.param(
            "Failed",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Failed",
                    "message": "The pod failed.",
                }
            ],
            id="failed",
        ),
        pytest.param("Running", None, id="running-has-none"),
    ],
)
def test_finished_pods_carry_row_conditions(phase: str, expected: list[Any] | None) -> None:
    row = render("", "Pod", pod(phase=phase))["rows"][0]
    assert row.get("conditions") == expected
