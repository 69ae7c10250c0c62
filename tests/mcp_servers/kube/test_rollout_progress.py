"""`rollout_status` for StatefulSets and DaemonSets as well as Deployments, on a living sandbox,
with kubectl's wording; the strategies and kinds it cannot watch are refused, saying why."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from mcp_servers.kube import progress
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "redis:7"}]}
"""
DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "busybox:1.36", command: [sleep, infinity]}]}
"""


def test_a_statefulset_rollout_is_followed_to_its_new_revision(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    shared_kubectl("apply", "-n", namespace, "-f", "-", input=STATEFULSET)
    first = eventually(
        lambda: _done(kube, "db", namespace, "sts"), what="the statefulset's first rollout"
    )
    assert first["kind"] == "StatefulSet" and "rolling update complete 2 pods" in first["message"]
    shared_kubectl("set", "image", "statefulset/db", "db=redis:7.2", "-n", namespace)
    second = eventually(
        lambda: (
            status
            if (status := _done(kube, "db", namespace, "statefulset"))
            and status["revision"] != first["revision"]
            else None
        ),
        what="the statefulset's second rollout",
    )
    assert second["message"].endswith(f"at revision {second['revision']}...")


def test_a_daemonset_rollout_counts_its_scheduled_pods(
    shared_kubectl: Kubectl, kube: KubeTools, namespace: str
) -> None:
    shared_kubectl("apply", "-n", namespace, "-f", "-", input=DAEMONSET)
    status = eventually(lambda: _done(kube, "agent", namespace, "ds"), what="the daemonset")
    assert status["message"] == 'daemon set "agent" successfully rolled out'
    assert status["replicas"] == status["available"] > 0


def test_other_kinds_and_strategies_are_refused_saying_why(kube: KubeTools, namespace: str) -> None:
    assert "not 'pods'" in kube.fails("rollout_status", name="x", namespace=namespace, kind="pods")
    on_delete = {
        "metadata": {"name": "db", "generation": 1},
        "spec": {"updateStrategy": {"type": "OnDelete"}},
        "status": {"observedGeneration": 1},
    }
    with pytest.raises(InvalidArgument, match="OnDelete"):
        progress.statefulset(on_delete)


def test_a_partitioned_statefulset_is_done_when_its_partition_is_updated() -> None:
    sts = {
        "metadata": {"name": "db", "generation": 2},
        "spec": {
            "replicas": 3,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
        },
        "status": {"observedGeneration": 2, "readyReplicas": 3, "updatedReplicas": 0},
    }
    assert not progress.statefulset(sts)["done"]
    assert "0 out of 1 new pods" in progress.statefulset(sts)["message"]
    sts["status"]["updatedReplicas"] = 1
    assert progress.statefulset(sts)["done"]


def _done(kube: KubeTools, name: str, namespace: str, kind: str) -> dict[str, object] | None:
    status = kube.ok("rollout_status", name=name, namespace=namespace, kind=kind)
    return status if status["done"] else None
