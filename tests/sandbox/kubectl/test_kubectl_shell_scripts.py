"""Shell scripts in a busybox pod, through real kubectl: conditionals, arithmetic and a counting
loop mean the same in `kubectl exec` and in the container's own command."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

NS = "scripts"
TICKER = """
apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: scripts}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [sh, -c, 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 2; done']
"""


@pytest.fixture(scope="module")
def scripts(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    home: Path = tmp_path_factory.mktemp("scripts")
    admin = Kubectl(shared_sandbox.kubeconfig, home / "cache")
    admin("create", "namespace", NS)
    admin("apply", "-f", "-", input=TICKER)
    admin("wait", "--for=condition=Ready", "pod/ticker", "-n", NS, "--timeout=60s")
    return admin


def test_exec_runs_conditionals_and_arithmetic(scripts: Kubectl) -> None:
    script = 'if [ -f /etc/hostname ]; then echo yes; fi; echo "n=$((2+3))"'
    done = scripts.run("exec", "ticker", "-n", NS, "--", "sh", "-c", script, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "yes\nn=5\n", "")


def test_a_counting_loop_logs_each_count(scripts: Kubectl) -> None:
    def counted() -> str:
        logs = scripts("logs", "ticker", "-n", NS)
        return logs if "tick 1" in logs else ""

    logs = eventually(counted, timeout=30, what="tick 1 logged")
    assert logs.startswith("tick 0\ntick 1\n")
