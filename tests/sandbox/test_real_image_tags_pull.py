"""A Deployment naming a real tag the old catalog lacked becomes Ready through the API with
real kubectl; one naming a tag no registry holds waits in ErrImagePull / ImagePullBackOff with
the registry's "not found"."""

from __future__ import annotations

from typing import Any

from tests.support.diagnosis import NS, deployment, rollout
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually


def test_a_real_tag_rolls_out_and_a_near_miss_fails_to_pull(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", NS)
    kubectl("apply", "-f", "-", input=deployment("old", {"image": "nginx:1.21"}))
    kubectl("apply", "-f", "-", input=deployment("typo", {"image": "nginx:1.277"}))
    rollout(kubectl, "old")

    def waiting() -> dict[str, Any] | None:
        pods = kubectl.json("get", "pods", "-n", NS, "-l", "app=typo")["items"]
        statuses = pods[0].get("status", {}).get("containerStatuses") if pods else None
        state = (statuses or [{}])[0].get("state", {}).get("waiting") or {}
        return state if state.get("reason") in ("ErrImagePull", "ImagePullBackOff") else None

    eventually(waiting, what="typo's pod waits for its image")
    events = kubectl.json("get", "events", "-n", NS, "--field-selector", "reason=Failed")["items"]
    assert any(
        'failed to pull and unpack image "docker.io/library/nginx:1.277"' in e["message"]
        and e["message"].endswith("not found")
        for e in events
    ), [e["message"] for e in events]
    [ready] = kubectl.json("get", "pods", "-n", NS, "-l", "app=old")["items"]
    assert ready["status"]["containerStatuses"][0]["image"] == "docker.io/library/nginx:1.21"
