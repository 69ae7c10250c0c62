"""Findings that explain another object's trouble, through the real MCP client on a sandbox: a
Service whose backend is scaled to 0 (the cause is the replicas, the fix a scale, not a selector
patch), a Service with no ready endpoint (the cause is its pods' failing readiness probe), a
Deployment Pending on a claim for a StorageClass that does not exist (the claim is named), an
autoscaler whose target has no CPU requests (asked about the Deployment it scales).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment, rollout, tool
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

WEB = {"image": "nginx:1.27", "ports": [{"containerPort": 80}]}


@pytest.fixture
def doctor(shared_sandbox: Sandbox) -> Doctor:
    return Doctor(shared_sandbox)


def apply(kubectl: Kubectl, manifest: dict[str, Any] | str) -> None:
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    kubectl("apply", "-f", "-", input=text)


def storefront(kubectl: Kubectl, namespace: str) -> None:
    """Service `storefront` selecting app=web on port 80."""
    apply(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "storefront", "namespace": namespace},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]},
        },
    )


def about(doctor: Doctor, kind: str, name: str, namespace: str) -> dict[str, dict[str, Any]]:
    """diagnose of one object: its findings by code."""
    found = doctor.ok("diagnose", namespace=namespace, kind=kind, name=name)["findings"]
    return {f["code"]: f for f in found}


def test_backend_scaled_to_zero_is_scaled_up_not_reselected(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    apply(shared_kubectl, deployment("web", WEB, namespace=namespace, replicas=0))
    storefront(shared_kubectl, namespace)

    finding = doctor.finding(
        "ServiceBackendScaledToZero", namespace=namespace, kind="service", name="storefront"
    )
    assert "scaled to 0 replicas" in finding["summary"] and "Deployment web" in finding["summary"]
    assert {"kind": "Deployment", "name": "web", "namespace": namespace} in finding["related"]
    assert "ServiceSelectorNoMatch" not in doctor.codes(namespace=namespace)
    fixes = doctor.ok("recommend", namespace=namespace, kind="service", name="storefront")["fixes"]
    assert [f["finding"] for f in fixes] == ["ServiceBackendScaledToZero"]  # no selector patch
    (step,) = fixes[0]["steps"]
    assert step == {
        "tool": "scale",
        "arguments": {"kind": "deployment", "name": "web", "replicas": 1, "namespace": namespace},
    }
    doctor.apply(fixes[0])
    rollout(shared_kubectl, "web", namespace)
    eventually(
        lambda: not about(doctor, "service", "storefront", namespace),
        what="storefront has a ready endpoint",
    )


def test_no_ready_endpoint_is_explained_by_the_pods_readiness_probe(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    probe = {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 2}
    apply(shared_kubectl, deployment("web", {**WEB, "readinessProbe": probe}, namespace=namespace))
    storefront(shared_kubectl, namespace)

    def both() -> dict[str, dict[str, Any]]:
        found = about(doctor, "service", "storefront", namespace)
        return found if {"ProbeFailing", "ServiceNoReadyEndpoints"} <= found.keys() else {}

    found = eventually(both, what="the Service's finding and its pods' cause, asked about it")
    cause = found["ProbeFailing"]
    assert cause["ref"] == {"kind": "Deployment", "name": "web", "namespace": namespace}
    assert "port 8081 is not a container port" in cause["summary"]
    service = {"kind": "Service", "name": "storefront", "namespace": namespace}
    assert service in cause["related"]
    assert {"kind": "Deployment", "name": "web", "namespace": namespace} in found[
        "ServiceNoReadyEndpoints"
    ]["related"]
    fixes = doctor.ok("recommend", namespace=namespace, kind="service", name="storefront")["fixes"]
    probe_fix = next(f for f in fixes if f["finding"] == "ProbeFailing")
    assert tool(probe_fix) == ["patch"] and probe_fix["target"]["name"] == "web"


def test_pending_workload_names_the_claim_whose_class_is_missing(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": namespace},
        "spec": {
            "storageClassName": "fast-ssd",
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    apply(shared_kubectl, claim)
    volume = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}
    apply(shared_kubectl, deployment("db", WEB, namespace=namespace, pod=volume))

    def both() -> dict[str, dict[str, Any]]:
        found = about(doctor, "deployment", "db", namespace)
        return found if {"StorageClassNotFound", "Unschedulable"} <= found.keys() else {}

    found = eventually(both, what="the claim's finding, asked about the Deployment")
    first = doctor.ok("diagnose", namespace=namespace, kind="deployment", name="db")["findings"][0]
    assert first["code"] == "StorageClassNotFound"  # the cause ranks before the Pending pods
    assert "'fast-ssd', which does not exist" in first["summary"]
    claim_ref = {"kind": "PersistentVolumeClaim", "name": "data", "namespace": namespace}
    assert claim_ref in found["Unschedulable"]["related"]
    waiting = about(doctor, "persistentvolumeclaim", "data", namespace)
    assert waiting.keys() == {"StorageClassNotFound", "Unschedulable"}


def test_autoscaler_without_requests_is_found_asking_about_its_deployment(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor
) -> None:
    apply(shared_kubectl, deployment("web", WEB, namespace=namespace))
    rollout(shared_kubectl, "web", namespace)
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web-cpu", "namespace": namespace},
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

    finding = doctor.finding(
        "HPAMissingRequests", namespace=namespace, kind="deployment", name="web"
    )
    assert finding["ref"] == {
        "kind": "HorizontalPodAutoscaler",
        "name": "web-cpu",
        "namespace": namespace,
    }
    assert "missing request for cpu" in finding["summary"]
    fixes = doctor.ok("recommend", namespace=namespace, kind="deployment", name="web")["fixes"]
    assert any(f["finding"] == "HPAMissingRequests" for f in fixes)
