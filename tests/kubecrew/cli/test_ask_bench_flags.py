"""`kubecrew ask` as the k8s-ai-bench harness drives it: the prompt on stdin, `--kubeconfig`,
`--quiet`, and `--skip-permissions`; a subprocess against the sandbox, as a harness runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.diagnosis import NS, Doctor, deployment, rollout
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

KUBECREW = Path(sys.executable).parent / "kubecrew"


def ask(home: Path, *arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECREW_HOME": str(home), "KUBECREW_MODEL_GUARD": "1"}
    for name in ("KUBECREW_MODEL", "KUBECREW_POLICIES", "KUBECREW_POLICY_STORE"):
        env.pop(name, None)
    return subprocess.run(
        [str(KUBECREW), "ask", *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        cwd=Path(__file__).resolve().parents[3],  # the checkout: ./policies are the defaults
    )


def image_of(kubectl: Kubectl) -> str:
    return kubectl("get", "deployment", "web", "-n", NS, "-o",
                   "jsonpath={.spec.template.spec.containers[0].image}").strip()  # fmt: skip


@pytest.fixture
def typo(sandbox: Sandbox, kubectl: Kubectl) -> Path:
    """web in the shop, rolled out on nginx:1.27, then moved to an image that does not exist."""
    kubectl("create", "namespace", NS)
    kubectl("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    rollout(kubectl, "web")
    kubectl("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)
    Doctor(sandbox).finding("ImagePullBackOff", namespace=NS, kind="deployment", name="web")
    return sandbox.kubeconfig


def test_a_prompt_on_stdin_is_answered_quietly(typo: Path, tmp_path: Path) -> None:
    done = ask(tmp_path, "--kubeconfig", str(typo), "--quiet", stdin="why is web failing\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Deployment web in shop is failing:")
    assert done.stderr == ""  # --quiet: no progress at all

    nothing = ask(tmp_path, "--kubeconfig", str(typo), stdin="  \n")
    assert nothing.returncode == 1 and "no question" in nothing.stderr


def test_a_change_without_skip_permissions_is_refused_when_nobody_can_be_asked(
    typo: Path, tmp_path: Path, kubectl: Kubectl
) -> None:
    done = ask(tmp_path, "--kubeconfig", str(typo), stdin="fix web\n")
    assert done.returncode == 1
    assert "--skip-permissions" in done.stderr and "Traceback" not in done.stderr
    assert image_of(kubectl) == "nginx:1.27-alpinee"  # nothing changed


def test_skip_permissions_lets_a_policy_allowed_fix_through_gated_and_audited(
    typo: Path, tmp_path: Path, kubectl: Kubectl
) -> None:
    done = ask(tmp_path, "fix web", "--kubeconfig", str(typo), "--skip-permissions", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    eventually(lambda: image_of(kubectl) == "nginx:1.27", timeout=30, what="web's image back")
    audit = subprocess.run(  # the default store: this cluster's, as $KUBECONFIG names it
        [str(KUBECREW), "audit", "list"], capture_output=True, text=True, timeout=60,
        env={**os.environ, "KUBECREW_HOME": str(tmp_path), "KUBECONFIG": str(typo)},
    )  # fmt: skip
    assert audit.returncode == 0, audit.stderr
    assert "mutation" in audit.stdout and "agent dev_team" in audit.stdout
