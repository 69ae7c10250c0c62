"""Upgrade readiness on a live sandbox: "are we ready to upgrade to 1.38?" reads what stands in
the way and changes nothing. A node whose kubelet would trail v1.38 by more than three minors,
a PodDisruptionBudget that allows no disruption, a pod no controller owns, a pod pinned to one
node and a CronJob manifest in git on an API removed long ago are blockers, each with its team;
a single-replica Deployment and a running Job are warnings; Cluster API node pools are read, and
one not fully ready blocks. Two minors ahead is refused, as the
control plane moves one at a time; an upgrade asked for says why it is not started.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import POOL_LABEL, pool
from tests.support.waiting import eventually

SHOP = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubecrew.io/team: shop}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ledger, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: ledger}}
  template:
    metadata: {labels: {app: ledger}}
    spec:
      nodeSelector: {kubernetes.io/hostname: node-1}
      containers: [{name: ledger, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: debug, namespace: shop}
spec: {containers: [{name: shell, image: "busybox:1.36", command: [sleep, "3600"]}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: train, image: "busybox:1.36", command: [sleep, "3600"]}]
"""
OLD_CRONJOB = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: "busybox:1.36"}]
"""


def git_repo(root: Path) -> Path:
    repo = root / "gitops"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "report.yaml").write_text(OLD_CRONJOB)
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qm", "old"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True)  # fmt: skip
    return repo


def settled(kubectl: Kubectl) -> bool:
    pdb = kubectl.json("get", "pdb", "web", "-n", "shop").get("status") or {}
    pods = kubectl.json("get", "pods", "-n", "shop")["items"]
    running = sum(1 for p in pods if p["status"].get("phase") == "Running")
    return pdb.get("currentHealthy") == 2 and running == 5


def test_readiness_names_blockers_and_warnings_with_owners_and_changes_nothing(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = Operator(sandbox, tmp_path, repo=git_repo(tmp_path))
    kubectl("apply", "-f", "-", input=SHOP)
    old = {"status": {"nodeInfo": {"kubeletVersion": "v1.34.2"}}}
    kubectl("patch", "node", "node-3", "--subresource=status", "--type=merge", "-p",
            json.dumps(old))  # fmt: skip
    eventually(lambda: settled(kubectl), what="the shop running, its PDB counting 2 healthy")

    outcome = operator.ask("are we ready to upgrade to 1.38?")

    found = outcome.data["upgrade"]
    assert (found["current"], found["target"], found["refused"]) == ("v1.37.0", "v1.38", "")
    kinds = {(f["severity"], f["kind"], f["what"].split(" in ")[0], f["team"])
             for f in found["findings"]}  # fmt: skip
    assert kinds == {
        ("blocker", "skew", "node node-3", ""),
        ("blocker", "removed-api", "CronJob shop/report", "shop"),
        ("blocker", "pdb", "PodDisruptionBudget shop/web", "shop"),
        ("blocker", "unmanaged-pod", "pod shop/debug", "shop"),
        ("blocker", "pinned-pod", next(f["what"] for f in found["findings"]
                                       if f["kind"] == "pinned-pod"), "shop"),
        ("warning", "single-replica", "Deployment shop/ledger", "shop"),
        ("warning", "training", "Job shop/train", "shop"),
    }  # fmt: skip
    assert any(f["what"].startswith("pod shop/ledger-") for f in found["findings"])
    answer = outcome.answer
    assert answer.startswith("Not ready to upgrade v1.37.0 to v1.38: 5 blocker(s)"), answer
    assert "batch/v1beta1 CronJob is no longer served since v1.25: use batch/v1" in answer
    assert "upgrade it to v1.35 or later first" in answer
    assert "Kubelets: v1.34.2 on node-3; v1.37.0 on node-1, node-2." in answer
    assert "Nothing was changed" in answer
    assert operator.mutations() == []


def test_a_target_two_minors_ahead_is_refused(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = Operator(sandbox, tmp_path)

    outcome = operator.ask("upgrade the cluster to v1.39")

    found = outcome.data["readiness"]
    assert found["refused"].startswith("the control plane moves one minor version at a time")
    assert outcome.answer.startswith("Not started: the upgrade of v1.37.0 to v1.39"), outcome.answer
    assert "upgrade v1.37 to v1.38 first" in outcome.answer
    assert any("no GitOps repository is set" in unseen for unseen in found["unseen"])
    assert operator.mutations() == []


def test_node_pools_are_read_and_a_pool_not_fully_ready_blocks(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = Operator(sandbox, tmp_path)
    fault = {"kind": "node-joins-not-ready", "count": 1}
    sandbox.call(lambda cluster: cluster.faults.add(fault))
    for obj in pool(replicas=2, provision_seconds=5):
        kubectl("apply", "-f", "-", input=json.dumps(obj))

    def joined() -> int:
        return len(kubectl.json("get", "nodes", "-l", POOL_LABEL)["items"])

    eventually(lambda: joined() == 2, what="the pool's two nodes joined")

    outcome = operator.ask("are we ready to upgrade to 1.38?")

    assert outcome.data["upgrade"]["pools"] == [
        {"pool": "default/workers", "version": "v1.37.0", "replicas": 2, "ready": 1}
    ]
    said = "Node pools: default/workers v1.37.0 (1/2 ready); the upgrade rolls default/workers."
    assert said in outcome.answer, outcome.answer
    assert "- pool default/workers: 1 of 2 machines ready" in outcome.answer, outcome.answer
    assert operator.mutations() == []
