"""`kubecrew ask` carries out a change asked in words, as a harness runs it (a subprocess,
`--skip-permissions`, the prompt given once): a scale, a scale to zero (the agent's own
"reply yes" answered by the permission the harness gave), and a node change routed to the
Cluster Operator; each checked on the cluster afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sandbox.server import Sandbox
from tests.support.changes import WEB
from tests.support.kubectl import Kubectl

KUBECREW = Path(sys.executable).parent / "kubecrew"


def ask(home: Path, kubeconfig: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECREW_HOME": str(home), "KUBECREW_MODEL_GUARD": "1"}
    for name in ("KUBECREW_MODEL", "KUBECREW_POLICIES", "KUBECREW_POLICY_STORE"):
        env.pop(name, None)
    return subprocess.run(
        [str(KUBECREW), "ask", *arguments, "--kubeconfig", str(kubeconfig)],
        capture_output=True, text=True, env=env, timeout=180,
        cwd=Path(__file__).resolve().parents[3],  # the checkout: ./policies are the defaults
    )  # fmt: skip


def test_ask_scales_and_cordons_as_asked(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "staging")
    kubectl("apply", "-f", "-", input=WEB % {"ns": "staging"})
    kubectl("rollout", "status", "deploy/web", "-n", "staging", "--timeout=60s")
    config = sandbox.kubeconfig

    done = ask(tmp_path, config, "scale web to 3 in staging", "--skip-permissions", "-o", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["outcome"] == "done"
    [scaled] = report["changes"]
    assert (scaled["what"], scaled["outcome"]) == (
        "scale Deployment web in staging to 3 replicas",
        "done",
    )
    assert scaled["change"] == report["change"] and scaled["proposal"].startswith("p-")
    assert report["links"] == [
        {
            "kind": "proposal",
            "id": scaled["proposal"],
            "command": f"kubecrew proposals show {scaled['proposal']}",
        }
    ]
    assert kubectl.json("get", "deploy", "web", "-n", "staging")["spec"]["replicas"] == 3

    nobody = ask(tmp_path, config, "take web down")  # no terminal, no permission: refused
    assert nobody.returncode == 1 and "--skip-permissions" in nobody.stderr
    assert kubectl.json("get", "deploy", "web", "-n", "staging")["spec"]["replicas"] == 3

    down = ask(tmp_path, config, "take web down", "--skip-permissions", "-q")
    assert down.returncode == 0, down.stdout + down.stderr
    assert kubectl.json("get", "deploy", "web", "-n", "staging")["spec"]["replicas"] == 0

    cordon = ask(tmp_path, config, "cordon node-2", "--skip-permissions", "--json")
    assert cordon.returncode == 0, cordon.stdout + cordon.stderr
    assert json.loads(cordon.stdout)["change"]["op"] == "cordon"
    assert kubectl.json("get", "node", "node-2")["spec"]["unschedulable"] is True
