"""Real kubectl and a deprecated API version (sandbox/deprecations.py): applying a batch/v1beta2
CronJob prints the API server's deprecation warning on stderr and makes one object kubectl reads
in either version; once the control plane reaches v1.38, where batch/v1beta2 is no longer served,
kubectl says of it what it says of any version a cluster does not serve.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.api_client import api_client
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

REPORT = """\
apiVersion: batch/v1beta2
kind: CronJob
metadata: {name: report}
spec:
  schedule: "0 2 * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: "busybox:1.36"}]
"""
WARNING = (
    "Warning: batch/v1beta2 CronJob is deprecated in v1.35+, unavailable in v1.38+; "
    "use batch/v1 CronJob"
)


def upgrade_control_plane(sandbox: Sandbox, version: str) -> None:
    with api_client(sandbox) as admin:
        moved = admin.put("/kubecrew/v1/version", json={"gitVersion": version})
        assert moved.status_code == 200, moved.text


def test_applying_a_deprecated_version_warns_and_makes_one_object(kubectl: Kubectl) -> None:
    applied = kubectl.run("apply", "-f", "-", input=REPORT)

    assert applied.stdout.strip() == "cronjob.batch/report created"
    assert WARNING in applied.stderr.splitlines()
    reapplied = kubectl.run("apply", "-f", "-", input=REPORT.replace('"0 2', '"0 3'))
    assert reapplied.stdout.strip() == "cronjob.batch/report configured"
    assert WARNING in reapplied.stderr.splitlines()
    as_deprecated = kubectl.json("get", "cronjobs.v1beta2.batch", "report")
    as_current = kubectl.json("get", "cronjob", "report")
    assert as_deprecated["apiVersion"] == "batch/v1beta2"
    assert as_current["apiVersion"] == "batch/v1"
    assert as_current["metadata"]["uid"] == as_deprecated["metadata"]["uid"]
    assert as_current["spec"]["schedule"] == "0 3 * * *"
    assert "Warning:" not in kubectl.run("get", "cronjob", "report").stderr


def test_after_the_removal_minor_kubectl_finds_no_such_version(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=REPORT)

    upgrade_control_plane(sandbox, "v1.38.0")

    upgraded = Kubectl(sandbox.kubeconfig, tmp_path / "cache-after-upgrade")
    get = upgraded.fails("get", "cronjobs.v1beta2.batch")
    assert 'the server doesn\'t have a resource type "cronjobs"' in get.stderr, get.stderr
    apply = upgraded.fails("apply", "-f", "-", input=REPORT)
    assert 'no matches for kind "CronJob" in version "batch/v1beta2"' in apply.stderr
    assert upgraded.json("get", "cronjob", "report")["apiVersion"] == "batch/v1"
    versions = set(upgraded("api-versions").split())
    assert "batch/v1beta2" not in versions and "policy/v1beta2" in versions
