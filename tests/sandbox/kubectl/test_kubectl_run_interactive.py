"""`kubectl run -it --rm` and `kubectl exec -it` as a user types them, without a terminal.

Tests have no terminal, so kubectl says `Unable to use a TTY - input is not a terminal or the
right kind of file` and goes on without one; a run whose pod has already finished by the time
kubectl would attach shows the pod's log instead, as kubectl does against a real cluster.
"""

from __future__ import annotations

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

NS = "interactive"
NO_TTY = "Unable to use a TTY - input is not a terminal or the right kind of file\n"


@pytest.fixture(scope="module")
def admin(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """Admin kubectl, with Deployment and Service `web` (nginx) available."""
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("run") / "cache")
    kubectl("create", "namespace", NS)
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "-n", NS)
    kubectl("expose", "deployment", "web", "--port=80", "-n", NS)
    kubectl("wait", "--for=condition=Available", "deployment/web", "-n", NS, "--timeout=60s")
    return kubectl


def test_run_it_rm_prints_the_services_answer_and_deletes_the_pod(admin: Kubectl) -> None:
    done = admin.run(
        "run", "-it", "--rm", "probe", "--image=busybox:1.36", "--restart=Never", "-n", NS,
        "--", "wget", "-qO-", "web", check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == f'OK /\npod "probe" deleted from {NS} namespace\n'
    assert done.stderr.startswith(NO_TTY)
    assert "If you don't see a command prompt, try pressing enter." in done.stderr
    assert admin("get", "pods", "-n", NS, "-o", "name").startswith("pod/web-")
    assert admin.fails("get", "pod", "probe", "-n", NS).stderr == (
        'Error from server (NotFound): pods "probe" not found\n'
    )


def test_exec_it_sh_reads_a_scripted_stdin(admin: Kubectl) -> None:
    done = admin.run(
        "exec", "-it", "deploy/web", "-n", NS, "--", "sh",
        input="echo hi\nexit 3\necho never\n", check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (3, "hi\n")
    assert done.stderr.startswith(NO_TTY)
