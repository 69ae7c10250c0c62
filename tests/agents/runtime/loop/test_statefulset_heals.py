"""A StatefulSet whose image was changed to a typo is stuck: Kubernetes will not replace its
broken pod by itself (OrderedReady waits for it to be Ready), so the fix is the image back *and*
deleting that pod. Deleting is outside the Dev Team's allow-list, so the loop does not try half
of the fix: it escalates, naming the fix and why it was not applied, and changes nothing."""

from __future__ import annotations

from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor
from tests.support.team import Team

CACHE = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache, namespace: shop}
spec:
  serviceName: cache
  replicas: 2
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec: {containers: [{name: cache, image: "redis:7-alpine"}]}
"""


def test_a_stuck_statefulset_escalates_with_the_fix_it_may_not_apply(
    team: Team, sandbox: Sandbox
) -> None:
    team.kubectl("apply", "-f", "-", input=CACHE)
    team.kubectl("rollout", "status", "statefulset/cache", "-n", "shop", "--timeout=60s")
    team.kubectl("set", "image", "statefulset/cache", "cache=redis:7-alpinee", "-n", "shop")
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="statefulset", name="cache")

    result = team.heal("cache")

    assert result.outcome == "escalated", result.summary
    assert "set image of container cache to redis:7-alpine" in result.summary
    assert "outside this agent's allow-list" in result.summary
    assert not result.attempts
    live = team.kubectl.json("get", "statefulset", "cache", "-n", "shop")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:7-alpinee"
