"""`kubectl exec` into a public application's pod finds it listening where the real one does:
grafana answers its health endpoint on localhost:3000, and nothing answers on the generic 8080."""

from __future__ import annotations

import pytest

from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

GRAFANA = """
apiVersion: v1
kind: Pod
metadata: {name: grafana}
spec:
  containers:
  - name: grafana
    image: grafana/grafana:11.4.0
    readinessProbe: {httpGet: {path: /api/health, port: 3000}, periodSeconds: 1}
"""


def exec_in(kubectl: Kubectl, namespace: str, *command: str) -> tuple[int, str, str]:
    done = kubectl.run(
        "exec", "grafana", "-n", namespace, "--", *command, check=False, timeout=30
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_grafana_answers_its_health_endpoint_on_3000(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("apply", "-n", namespace, "-f", "-", input=GRAFANA)
    shared_kubectl(
        "wait", "--for=condition=Ready", "pod/grafana", "-n", namespace, "--timeout=60s"
    )  # fmt: skip
    health = exec_in(shared_kubectl, namespace, "wget", "-qO-", "localhost:3000/api/health")
    assert health == (0, "OK /api/health\n", "")
    refused = exec_in(shared_kubectl, namespace, "wget", "-qO-", "localhost:8080/")
    assert refused == (1, "", "wget: can't connect to remote host (127.0.0.1): Connection refused\n"
                       "command terminated with exit code 1\n")  # fmt: skip
