"""`kubecrew heal`, the installed command in a subprocess, on a sandbox with the shipped policies
and no git: `heal service/web -n shop` points the Service that selects nothing at web's pods
(exit 0, endpoints present); a heal policy gives to a person exits 3 naming the approval request
it made and who answers it, and `kubecrew status` shows both the request and the waiting
incident; a heal with no fix exits 3 saying plainly that nothing waits for an approval, and
`kubecrew status` shows it as an open incident."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from core.policy.settings import SHIPPED
from core.policy.store import open_store
from sandbox.server import Sandbox
from tests.support.crew import crew_env
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.waiting import eventually

WORLD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: webapp}
  ports: [{port: 80, targetPort: 80}]
"""
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec:
  storageClassName: fast-ssd
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
CRASHING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - {name: api, image: "busybox:1.36", command: [sh, -c, "echo config is broken; exit 3"]}
"""


class Crew:
    def __init__(self, sandbox: Sandbox, home: Path, store: Path) -> None:
        self.options = ["--kubeconfig", str(sandbox.kubeconfig), "--policies", str(SHIPPED),
                        "--policy-store", str(store)]  # fmt: skip
        self.env = {**crew_env(home), "KUBECONFIG": str(sandbox.kubeconfig)}  # status's cluster
        self.store = store

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECREW, *args], capture_output=True, text=True, env=self.env, timeout=240,
            check=False,
        )  # fmt: skip

    def heal(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("heal", *args, *self.options)

    def status(self) -> dict[str, object]:
        done = self.run("status", "--store", str(self.store), "--json")
        assert done.returncode == 0, done.stderr
        found: dict[str, object] = json.loads(done.stdout)
        return found


@pytest.fixture
def crew(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Crew:
    kubectl("create", "namespace", "shop")
    return Crew(sandbox, tmp_path / "home", tmp_path / "store.sqlite")


def test_heal_service_web_points_it_at_the_pods_it_meant(crew: Crew, kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=WORLD)
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")

    done = crew.heal("service/web", "-n", "shop")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Healed Service web in shop:"), done.stdout
    assert "select the pods labelled {'app': 'web'} -> held" in done.stdout, done.stdout
    endpoints = kubectl.json("get", "endpoints", "web", "-n", "shop")
    assert [a for s in endpoints.get("subsets") or [] for a in s.get("addresses") or []]
    assert crew.status()["incidents"] == []


def test_a_heal_policy_gives_to_a_person_names_the_request_and_status_shows_it(
    crew: Crew, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=CLAIM)

    done = crew.heal("pvc/data", "-n", "shop")

    assert done.returncode == 3, done.stdout + done.stderr
    found = re.search(
        r"waiting for approval (a-[0-9a-f]+): a person decides: group shop-admins answer \1",
        done.stdout,
    )
    assert found, done.stdout
    assert "booked as incident StorageClassNotFound on PersistentVolumeClaim data" in done.stdout
    store = open_store(str(crew.store))
    try:
        assert store.approval(found.group(1)).state == "pending"
    finally:
        store.close()
    status = crew.status()
    assert [a["id"] for a in status["approvals"]] == [found.group(1)]  # type: ignore[index, union-attr]
    [incident] = status["incidents"]  # type: ignore[misc]
    assert incident["waiting_for"] == found.group(1), incident
    assert kubectl.json("get", "pvc", "data", "-n", "shop")["spec"]["storageClassName"] == (
        "fast-ssd"
    )


def test_a_heal_with_no_fix_says_nothing_waits_and_status_shows_the_incident(
    crew: Crew, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", input=CRASHING)
    eventually(
        lambda: "CrashLoopBackOff" in kubectl("get", "pods", "-n", "shop", "-l", "app=api"),
        what="api crash-looping",
    )

    done = crew.heal("api", "-n", "shop")

    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.startswith("I could not heal Deployment api in shop:"), done.stdout
    assert "no approval request waits" in done.stdout and "approve" not in done.stdout
    assert "booked as open incident" in done.stdout, done.stdout
    status = crew.status()
    assert status["approvals"] == []
    [incident] = status["incidents"]  # type: ignore[misc]
    assert incident["subject"].endswith("on Deployment api in shop"), incident
    assert incident["state"] == "open" and "waiting_for" not in incident
