"""Real kubectl upgrading the sandbox's control plane through its Cluster API
KubeadmControlPlane: `kubectl get kcp` prints Cluster API's columns, an edit that skips a minor
is refused with 422, and a one-minor edit moves what `kubectl version` reports once the roll's
`upgradeSeconds` have passed.

Each test has a sandbox of its own (`kubectl`), since an upgrade moves the whole sandbox's version.
"""

from __future__ import annotations

import json

import pytest

from tests.sandbox.kubectl.suite import create, header, rows
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import CONTROL_PLANE, cluster, control_plane
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl


def server_version(kubectl: Kubectl) -> str:
    return str(json.loads(kubectl("version", "-o", "json"))["serverVersion"]["gitVersion"])


def control_plane_row(kubectl: Kubectl) -> dict[str, str]:
    [row] = rows(kubectl("get", "kcp"))
    return row


def test_kubectl_upgrades_the_control_plane_one_minor_at_a_time(kubectl: Kubectl) -> None:
    manifests = [cluster(control_plane=CONTROL_PLANE), control_plane("v1.37.0", upgrade_seconds=40)]
    create(kubectl, *manifests)
    eventually(
        lambda: control_plane_row(kubectl)["CLUSTER"] == "prod",
        timeout=10,
        what="the control plane labelled with its Cluster",
    )
    table = kubectl("get", "kubeadmcontrolplanes")
    assert header(table) == [
        "NAME",
        "CLUSTER",
        "INITIALIZED",
        "API SERVER AVAILABLE",
        "REPLICAS",
        "READY",
        "UPDATED",
        "UNAVAILABLE",
        "AGE",
        "VERSION",
    ]
    assert control_plane_row(kubectl) | {"AGE": ""} == {
        "NAME": CONTROL_PLANE,
        "CLUSTER": "prod",
        "INITIALIZED": "true",
        "API SERVER AVAILABLE": "true",
        "REPLICAS": "1",
        "READY": "1",
        "UPDATED": "1",
        "UNAVAILABLE": "0",
        "AGE": "",
        "VERSION": "v1.37.0",
    }

    skip = json.dumps({"spec": {"version": "v1.39.0"}})
    refused = kubectl.fails("patch", f"kcp/{CONTROL_PLANE}", "--type=merge", "-p", skip)
    assert f'The KubeadmControlPlane "{CONTROL_PLANE}" is invalid: spec.version: Forbidden' in (
        refused.stderr
    )
    assert "cannot update Kubernetes version from v1.37.0 to v1.39.0" in refused.stderr
    assert server_version(kubectl) == "v1.37.0"

    step = json.dumps({"spec": {"version": "v1.38.0"}})
    kubectl("patch", f"kcp/{CONTROL_PLANE}", "--type=merge", "-p", step)
    assert server_version(kubectl) == "v1.37.0"  # 40 sandbox seconds are 4 real ones
    conditions = kubectl.json("get", f"kcp/{CONTROL_PLANE}")["status"]["conditions"]
    [rolling] = [c for c in conditions if c["type"] == "MachinesSpecUpToDate"]
    assert rolling["reason"] == "RollingUpdateInProgress"
    eventually(lambda: server_version(kubectl) == "v1.38.0", timeout=20, what="v1.38.0 served")
    row = control_plane_row(kubectl)
    assert (row["VERSION"], row["UPDATED"]) == ("v1.38.0", "1")
    status = kubectl.json("get", f"kcp/{CONTROL_PLANE}")["status"]
    assert status["version"] == "v1.38.0"
