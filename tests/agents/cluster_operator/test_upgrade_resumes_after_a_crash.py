"""An upgrade killed mid-wave resumes at the wave it was in: `kubecrew ask "upgrade the cluster
to 1.38" --skip-permissions` is killed (SIGKILL) once the workers pool has started rolling; a new
`kubecrew ask "continue the upgrade"` in the same home carries it to the end. The audit log then
shows every write once: the control plane's version, the pool's version, and at most one drain
per old node; every node runs v1.38. Checked on the API server's objects and the crew's policy
store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.store.sqlite import SqliteStore
from kubecrew.demo.shop import OWNERSHIP
from sandbox.server import Sandbox
from tests.support.crew import crew_env
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import (
    budgeted_web,
    cluster,
    control_plane,
    machine_deployment,
    template,
)
from tests.support.mcp_hosts import KUBECREW
from tests.support.pool_world import nodeless
from tests.support.waiting import eventually


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """No node of its own: every node is a workers machine."""
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def test_an_upgrade_killed_mid_wave_resumes_there_and_repeats_no_write(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    objects = [
        cluster(),
        control_plane(version="v1.37.0", upgrade_seconds=30),
        template("standard", provision_seconds=20),
        machine_deployment("workers", replicas=3),
    ]
    for obj in objects:
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(lambda: len(kubelets(kubectl)) == 3, what="three workers nodes")
    for obj in budgeted_web(3, min_available=2):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(
        lambda: kubectl.json("get", "deploy", "web")["status"].get("availableReplicas") == 3,
        what="web available",
    )
    policies, store = tmp_path / "policies", tmp_path / "store.sqlite"
    policies.mkdir()
    (policies / "ownership.yaml").write_text(OWNERSHIP)
    crew = ["--kubeconfig", str(sandbox.kubeconfig), "--policies", str(policies),
            "--policy-store", str(store)]  # fmt: skip
    env = crew_env(tmp_path / "home")

    started = subprocess.Popen(
        [KUBECREW, "ask", "upgrade the cluster to 1.38", "--skip-permissions", "-q", *crew],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        eventually(lambda: deleting(kubectl) >= 1, what="an old machine of workers deleting",
                   timeout=120)  # fmt: skip
    finally:
        os.killpg(started.pid, signal.SIGKILL)
        started.communicate()
    assert started.returncode == -signal.SIGKILL
    assert set(kubelets(kubectl).values()) != {"v1.38.0"}  # it was cut short mid-wave

    resumed = subprocess.run(
        [KUBECREW, "ask", "continue the upgrade", "-q", *crew], env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip

    assert resumed.stdout.startswith("The cluster is upgraded to v1.38.0"), resumed.stdout
    assert set(kubelets(kubectl).values()) == {"v1.38.0"}
    written = applied(store)
    patches = Counter(s.split(" under ")[0] for s in written if s.startswith("patch: "))
    assert patches["patch: patch KubeadmControlPlane default/prod-control-plane directly"] == 1
    assert patches["patch: patch MachineDeployment default/workers directly"] == 1, written
    drains = Counter(s.split(" (")[0] for s in written if s.startswith("drain: "))
    # an old node left with no pod to evict needs no drain: at most one each, never twice
    assert 1 <= len(drains) <= 3 and set(drains.values()) == {1}, drains


def kubelets(kubectl: Kubectl) -> dict[str, str]:
    nodes = kubectl.json("get", "nodes")["items"]
    return {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes}


def deleting(kubectl: Kubectl) -> int:
    machines = kubectl.json("get", "machines")["items"]
    return sum(1 for m in machines if m["metadata"].get("deletionTimestamp"))


def applied(path: Path) -> list[str]:
    store = SqliteStore(path)
    try:
        return [r.summary for r in store.audit(kind="mutation") if r.result == "applied"]
    finally:
        store.close()
