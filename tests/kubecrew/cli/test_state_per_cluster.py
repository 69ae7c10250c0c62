"""Two sandboxes one after another in one home: the second's `status` shows nothing of the
first's, whose incidents wait in the first cluster's own state folder for when the crew points at
it again; a command given `--kubeconfig` keeps what it learns with the cluster it was given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from core.home import current_cluster
from tests.support.crew import crew_env
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.sandbox_command import kubecrew as sandbox_command
from tests.support.sandbox_command import stop

SUBJECT = "ImagePullBackOff on Deployment web in shop"
BROKEN = ("create", "deployment", "web", "--image=registry.invalid/web:1", "-n", "shop")


def crew(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**crew_env(home), **env},
    )


def incidents(home: Path, **env: str) -> list[str]:
    done = crew(home, "status", "--json", **env)
    assert done.returncode == 0, done.stderr
    return [i["subject"] for i in json.loads(done.stdout)["incidents"]]


def up(sandbox: Path) -> Kubectl:
    started = sandbox_command("sandbox", "up", "--detach", "--nodes", "1", home=sandbox)
    assert started.returncode == 0, started.stderr
    kubectl = Kubectl(sandbox / "kubeconfig", sandbox.parent / "kube-cache")
    kubectl("create", "namespace", "shop")
    return kubectl


def test_a_second_sandbox_in_the_same_home_knows_nothing_of_the_first(tmp_path: Path) -> None:
    sandbox, home = tmp_path / "sandbox", tmp_path / "kubecrew-home"  # as sandbox_env sets it
    first = up(sandbox)
    try:
        first(*BROKEN)
        healed = crew(home, "heal", "web", "-n", "shop")  # the crew file names the sandbox
        assert "booked as open incident" in healed.stdout, healed.stdout + healed.stderr
        assert incidents(home) == [SUBJECT]
        cluster = current_cluster([sandbox / "kubeconfig"])
    finally:
        stop(sandbox)
    assert cluster is not None
    first_state = home / "clusters" / cluster.folder

    second = up(sandbox)  # the same address and kubeconfig path, a new cluster (and CA)
    try:
        assert incidents(home) == []
        second(*BROKEN)
        asked = crew(home, "ask", "why is web failing in shop?")
        assert asked.returncode == 0, asked.stderr
        assert "seen before" not in asked.stdout, asked.stdout  # no memory of the first's
    finally:
        stop(sandbox)
    assert incidents(home, KUBECREW_STATE=str(first_state)) == [SUBJECT]
    folders = [p.name for p in (home / "clusters").iterdir()]
    assert cluster.folder in folders and len(folders) == 2  # one folder per cluster


def test_a_typed_kubeconfig_keeps_what_is_learned_with_its_cluster(
    tmp_path: Path, kubectl: Kubectl
) -> None:
    home = tmp_path / "home"
    kubectl("create", "namespace", "shop")
    kubectl(*BROKEN)
    healed = crew(home, "heal", "web", "-n", "shop", "--kubeconfig", str(kubectl.kubeconfig))
    assert "booked as open incident" in healed.stdout, healed.stdout + healed.stderr

    assert incidents(home) == []  # no crew file, no $KUBECONFIG: not this cluster
    shown = json.loads(
        crew(home, "status", "-o", "json", KUBECONFIG=str(kubectl.kubeconfig)).stdout
    )
    cluster = current_cluster([kubectl.kubeconfig])
    assert cluster is not None
    assert shown["cluster"] == {
        "server": cluster.server,
        "state": str(home / "clusters" / cluster.folder),
    }
    assert incidents(home, KUBECONFIG=str(kubectl.kubeconfig)) == [SUBJECT]
