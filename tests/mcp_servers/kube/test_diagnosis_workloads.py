"""The workload analyzers through the real MCP client: Jobs and CronJobs that fail or are
suspended, StatefulSets and DaemonSets short of ready pods, autoscalers with no requests to
scale on, budgets that block every eviction, pods no node tolerates. Where a fix exists it is
applied through the write tools (its `steps`) and the object is healthy afterwards.

Each test has its own namespace in the module's shared sandbox; the taint test taints every node,
so it has a sandbox of its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment, first, rollout, tool
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


@pytest.fixture
def doctor(shared_sandbox: Sandbox) -> Doctor:
    return Doctor(shared_sandbox)


def apply(kubectl: Kubectl, manifest: dict[str, Any]) -> None:
    kubectl("apply", "-f", "-", input=json.dumps(manifest))


def job_spec(command: str, *, backoff: int) -> dict[str, Any]:
    return {
        "backoffLimit": backoff,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", command]}
                ],
            }
        },
    }


def cronjob(name: str, namespace: str, command: str, *, suspend: bool) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedule": "* * * * *",
            "suspend": suspend,
            "jobTemplate": {"spec": job_spec(command, backoff=0)},
        },
    }


def test_failed_job_shows_its_exit_code_and_last_log_lines(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": namespace},
        "spec": job_spec("echo cannot reach db; exit 4", backoff=1),
    }
    apply(shared_kubectl, job)

    finding = doctor.finding("JobFailed", namespace=namespace)
    assert finding["ref"] == {"kind": "Job", "name": "migrate", "namespace": namespace}
    assert "BackoffLimitExceeded" in finding["summary"]
    texts = [e["text"] for e in finding["evidence"]]
    assert any("exit code 4" in t for t in texts)
    assert "cannot reach db" in texts
    # the cause is in the application: nothing to patch, and recommend says so
    assert "JobFailed" in doctor.ok("recommend", namespace=namespace)["findings_without_fix"]


def test_cronjob_whose_last_job_failed_is_diagnosed_with_its_logs(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    apply(shared_kubectl, cronjob("report", namespace, "echo smtp refused; exit 1", suspend=False))

    def with_logs() -> dict[str, Any]:
        # The CronJob starts a new Job every schedule; the finding names the newest failed one,
        # whose log is read once its pod has run, so wait for a finding that carries it.
        found = doctor.finding("CronJobFailing", namespace=namespace)
        logs = [e["text"] for e in found["evidence"] if e["kind"] == "log"]
        return found if "smtp refused" in logs else {}

    finding = eventually(with_logs, what="CronJobFailing with the failed Job's log line")
    assert finding["ref"] == {"kind": "CronJob", "name": "report", "namespace": namespace}
    assert finding["related"][0]["kind"] == "Job"


def test_suspended_cronjob_is_resumed_and_runs(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    apply(shared_kubectl, cronjob("cleanup", namespace, "echo cleaned", suspend=True))

    finding = doctor.finding("CronJobSuspended", namespace=namespace)
    assert any("suspend: true" in e["text"] for e in finding["evidence"])
    fix = doctor.fix("CronJobSuspended", namespace=namespace)
    assert fix["patch"] == {"spec": {"suspend": False}}
    doctor.apply(fix)

    def completed() -> bool:
        jobs = shared_kubectl.json("get", "jobs", "-n", namespace)["items"]
        return any(
            c["type"] == "Complete" and c["status"] == "True"
            for j in jobs
            for c in (j.get("status") or {}).get("conditions") or []
        )

    eventually(completed, what="the resumed CronJob runs a Job to completion")


def test_statefulset_ready_gap_is_fixed_by_the_last_good_image_and_a_forced_rollback(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "main", "image": "redis:7.2"}]},
            },
        },
    }
    apply(shared_kubectl, statefulset)
    shared_kubectl.run("rollout", "status", "sts/db", "-n", namespace, "--timeout=60s")
    shared_kubectl("set", "image", "sts/db", "main=redis:7.2-typo", "-n", namespace)

    gap = doctor.finding("ReplicasMismatch", namespace=namespace, kind="sts", name="db")
    assert gap["summary"] == "1 of 2 pods ready"
    doctor.finding("ImagePullBackOff", namespace=namespace, kind="sts", name="db")
    fix = doctor.fix("ImagePullBackOff", namespace=namespace)
    assert fix["patch"]["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:7.2"
    assert any("ControllerRevision" in why for why in fix["evidence"])
    # a StatefulSet never replaces its stuck pod by itself: the fix deletes it
    assert tool(fix) == ["patch", "delete"] and fix["steps"][1]["arguments"]["name"] == "db-1"
    doctor.apply(fix)
    shared_kubectl.run("rollout", "status", "sts/db", "-n", namespace, "--timeout=60s")
    assert doctor.codes(namespace=namespace, kind="sts", name="db") == set()


def test_daemonset_ready_gap_is_fixed_by_the_last_good_image(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
            },
        },
    }
    apply(shared_kubectl, daemonset)
    shared_kubectl.run("rollout", "status", "ds/agent", "-n", namespace, "--timeout=60s")
    shared_kubectl("set", "image", "ds/agent", "main=nginx:1.27-typo", "-n", namespace)

    gap = doctor.finding("ReplicasMismatch", namespace=namespace, kind="ds", name="agent")
    assert gap["ref"]["kind"] == "DaemonSet" and gap["summary"] == "2 of 3 pods ready"
    doctor.finding("ImagePullBackOff", namespace=namespace, kind="ds", name="agent")
    fix = doctor.fix("ImagePullBackOff", namespace=namespace, kind="ds", name="agent")
    assert fix["patch"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert tool(fix) == ["patch"]
    doctor.apply(fix)
    shared_kubectl.run("rollout", "status", "ds/agent", "-n", namespace, "--timeout=60s")


def test_autoscaler_without_requests_gets_requests_from_observed_usage(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    shared_kubectl(
        "apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}, namespace=namespace)
    )
    rollout(shared_kubectl, "web", namespace)
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
        },
    }
    apply(shared_kubectl, hpa)

    finding = doctor.finding("HPAMissingRequests", namespace=namespace)
    assert "missing request for cpu" in finding["summary"]

    def observed() -> dict[str, Any]:  # once metrics.k8s.io has sampled the pod
        fix = doctor.fix("HPAMissingRequests", namespace=namespace)
        return fix if any("peak cpu use" in why for why in fix["evidence"]) else {}

    fix = eventually(observed, what="requests sized from the pods' observed cpu use")
    assert fix["target"] == {"kind": "Deployment", "name": "web", "namespace": namespace}
    container = fix["patch"]["spec"]["template"]["spec"]["containers"][0]
    assert container["name"] == "main" and set(container["resources"]["requests"]) == {"cpu"}
    doctor.apply(fix)

    def scaling_active() -> bool:
        status = shared_kubectl.json("get", "hpa", "web", "-n", namespace).get("status") or {}
        return any(
            c["type"] == "ScalingActive" and c["status"] == "True"
            for c in status.get("conditions") or []
        )

    eventually(scaling_active, what="the autoscaler computes utilization")


@pytest.mark.parametrize(
    ("replicas", "expected_tool_patch"),
    [
        pytest.param(2, {"spec": {"minAvailable": 1}}, id="relax-min-available"),
        pytest.param(1, {"spec": {"replicas": 2}}, id="one-replica-scales-up"),
    ],
)
def test_budget_blocking_every_eviction_is_relaxed_or_outgrown(
    shared_kubectl: Kubectl,
    namespace: str,
    doctor: Doctor,
    replicas: int,
    expected_tool_patch: dict[str, Any],
) -> None:
    web = deployment("web", {"image": "nginx:1.27"}, namespace=namespace, replicas=replicas)
    shared_kubectl("apply", "-f", "-", input=web)
    rollout(shared_kubectl, "web", namespace)
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"minAvailable": replicas, "selector": {"matchLabels": {"app": "web"}}},
    }
    apply(shared_kubectl, pdb)

    finding = doctor.finding("PDBBlocksDisruptions", namespace=namespace)
    assert any("yet the budget allows no disruption" in e["text"] for e in finding["evidence"])
    fixes = doctor.fixes("PDBBlocksDisruptions", namespace=namespace)
    assert fixes[0]["patch"] == expected_tool_patch
    assert all(f["risk"] and f["risk_note"] for f in fixes)
    doctor.apply(fixes[0])

    def allowed() -> int:
        status = shared_kubectl.json("get", "pdb", "web", "-n", namespace).get("status") or {}
        return int(status.get("disruptionsAllowed") or 0)

    eventually(allowed, what="the budget allows one disruption")


def test_taint_no_pod_tolerates_ranks_the_toleration_over_untainting(
    sandbox: Sandbox, kubectl: Kubectl
) -> None:
    doctor = Doctor(sandbox)
    kubectl("create", "namespace", "batch")
    kubectl("taint", "nodes", "--all", "dedicated=batch:NoSchedule")
    kubectl("label", "node", "node-1", "pool=batch")
    pod = {"nodeSelector": {"pool": "batch"}}
    etl = deployment("etl", {"image": "nginx:1.27"}, namespace="batch", pod=pod)
    kubectl("apply", "-f", "-", input=etl)

    finding = doctor.finding("Unschedulable", namespace="batch")
    assert "untolerated taint" in finding["summary"]
    fixes = doctor.fixes("Unschedulable", namespace="batch")
    toleration = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
    assert fixes[0]["patch"]["spec"]["template"]["spec"]["tolerations"] == [toleration]
    untaint = first(fixes, lambda f: tool(f) == ["taint"])
    assert untaint["steps"][0]["arguments"]["remove"] is True
    assert untaint["confidence"] < fixes[0]["confidence"]  # the pods asked for these nodes
    doctor.apply(fixes[0])
    rollout(kubectl, "etl", "batch")


def test_warning_events_no_rule_reads_are_reported_on_the_workload(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    shared_kubectl(
        "apply", "-f", "-", input=deployment("db", {"image": "redis:7.2"}, namespace=namespace)
    )
    rollout(shared_kubectl, "db", namespace)
    (pod,) = shared_kubectl.json("get", "pods", "-n", namespace)["items"]
    message = "Multi-Attach error for volume pvc-1 Volume is already exclusively attached"
    event = {  # as the attach-detach controller writes it
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "db-attach", "namespace": namespace},
        "type": "Warning",
        "reason": "FailedAttachVolume",
        "message": message,
        "count": 4,
        "involvedObject": {"kind": "Pod", "name": pod["metadata"]["name"], "namespace": namespace},
        "source": {"component": "attachdetach-controller"},
    }
    apply(shared_kubectl, event)

    finding = doctor.finding("WarningEvents", namespace=namespace, kind="deployment", name="db")
    assert finding["ref"] == {"kind": "Deployment", "name": "db", "namespace": namespace}
    assert (
        finding["severity"] == "medium"
        and "4 Warning event(s) FailedAttachVolume" in (finding["summary"])
    )
    assert [e["text"] for e in finding["evidence"]] == [message]
