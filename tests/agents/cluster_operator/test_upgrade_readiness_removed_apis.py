"""Upgrade readiness and the APIs the target removes, on a live sandbox whose control plane serves
batch/v1beta2 CronJob until v1.38 and policy/v1beta2 PodDisruptionBudget until v1.39
(sandbox/deprecations.py). A CronJob applied as batch/v1beta2 blocks an upgrade to 1.38, named
with its team, from the live object; the API server's record of deprecated requests adds a
warning. Re-applied as batch/v1 the blocker goes, while the record, which lasts until the API
server restarts, stays a warning: it never blocks on its own. A version removed only by a later
minor is not in the way of this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl

SHOP = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {kubecrew.io/team: shop}}
---
apiVersion: policy/v1beta2
kind: PodDisruptionBudget
metadata: {name: batch, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: nothing-yet}}}
"""
REPORT = """\
apiVersion: {api_version}
kind: CronJob
metadata: {{name: report, namespace: shop}}
spec:
  schedule: "0 2 * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{{name: report, image: "busybox:1.36"}}]
"""
LIVE = ("blocker", "removed-api", "CronJob shop/report", "shop")
REQUESTED = ("warning", "deprecated-request", "batch/v1beta2 cronjobs", "")


def findings(found: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    return {(f["severity"], f["kind"], f["what"], f["team"]) for f in found["findings"]}


def test_a_live_object_on_a_removed_version_blocks_until_reapplied_and_requests_are_told(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = Operator(sandbox, tmp_path)
    kubectl("apply", "-f", "-", input=SHOP)
    kubectl("apply", "-f", "-", input=REPORT.format(api_version="batch/v1beta2"))

    outcome = operator.ask("are we ready to upgrade to 1.38?")

    found = outcome.data["upgrade"]
    assert (found["current"], found["target"], found["refused"]) == ("v1.37.0", "v1.38", "")
    assert findings(found) == {LIVE, REQUESTED}  # policy/v1beta2 goes only at v1.39
    answer = outcome.answer
    assert answer.startswith("Not ready to upgrade v1.37.0 to v1.38: 1 blocker(s)"), answer
    assert (
        "- CronJob shop/report (team shop): last applied as batch/v1beta2 CronJob, which "
        "v1.38 no longer serves: the next apply of its manifest fails there; apply it as batch/v1"
    ) in answer
    assert "- batch/v1beta2 cronjobs: requested since the API server started" in answer
    assert "move them to batch/v1" in answer
    assert "apiserver_metrics" in operator.called()

    kubectl("apply", "-f", "-", input=REPORT.format(api_version="batch/v1"))
    again = operator.ask("are we ready to upgrade to 1.38?")

    assert findings(again.data["upgrade"]) == {REQUESTED}
    assert again.answer.startswith("Ready to upgrade v1.37.0 to v1.38: nothing blocks it"), (
        again.answer
    )
    assert operator.mutations() == []


def test_the_next_removal_is_read_for_the_minor_that_makes_it(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = Operator(sandbox, tmp_path)
    kubectl("apply", "-f", "-", input=SHOP)

    outcome = operator.ask("are we ready to upgrade to 1.39?")

    found = outcome.data["upgrade"]
    assert found["refused"].startswith("the control plane moves one minor version at a time")
    assert findings(found) == {
        ("blocker", "removed-api", "PodDisruptionBudget shop/batch", "shop"),
        ("warning", "deprecated-request", "policy/v1beta2 poddisruptionbudgets", ""),
    }
    assert "apply it as policy/v1" in outcome.answer
