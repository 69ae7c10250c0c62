"""Namespace blueprints on the sandbox: a hand-made quota and a missing LimitRange are reported
field by field, fixed by a PR to the team's repository and confirmed from live state; a later
hand edit is found and put back; a changed blueprint is a new PR; a namespace no repository
manages is reported, not changed."""

from __future__ import annotations

from typing import Any

from tests.support.platform_agent import BLUEPRINT, Platform

HAND_QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: team-namespace, namespace: team-a}
spec: {hard: {requests.cpu: "64", requests.memory: 8Gi, pods: "50"}}
"""
PATH = "platform/blueprints/team-a.yaml"


def rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["namespace"]: row for row in result["namespaces"]}


def live(platform: Platform, kind: str, namespace: str = "team-a") -> dict[str, Any]:
    found: dict[str, Any] = platform.kubectl.json("get", kind, "team-namespace", "-n", namespace)
    return found


def test_drift_is_reported_then_fixed_by_pr_and_confirmed_live(platform: Platform) -> None:
    platform.policy("blueprint", BLUEPRINT)
    platform.kubectl("apply", "-f", "-", input=HAND_QUOTA)

    looked = platform.ask("is team-a on the blueprint?")
    assert looked.task == "blueprints" and set(rows(looked.data)) == {"team-a"}, looked.answer
    row = rows(looked.data)["team-a"]
    assert not row["in_sync"] and row["delivered"] == "reported" and row["team"] == "team-a"
    assert (
        "ResourceQuota team-a/team-namespace: spec.hard.requests.cpu: want '4', live '64'"
        in (row["drift"])
    ), row["drift"]
    assert "LimitRange team-a/team-namespace: missing" in row["drift"]
    assert not {"propose", "propose_change", "sync"} & set(platform.called())  # only looked

    synced = platform.sync_blueprints()
    done = rows(synced.data)
    a, b = done["team-a"], done["team-b"]
    assert a["delivered"] == "merged" and a["pr"] == 1 and a["in_sync"], synced.answer
    assert a["why"] == [] and any("writing " + PATH in step for step in a["steps"])
    assert live(platform, "quota")["spec"]["hard"]["requests.cpu"] == "4"
    limits = live(platform, "limitrange")["spec"]["limits"][0]
    assert limits["default"] == {"cpu": "500m", "memory": "512Mi"}
    binding = live(platform, "rolebinding")
    assert binding["roleRef"]["name"] == "edit"
    assert binding["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "team-a-admins"}
    ]
    assert live(platform, "networkpolicy")["spec"]["policyTypes"] == ["Ingress"]
    # team-b has no repository: reported with the reason, nothing written there.
    assert b["delivered"] == "not git-managed" and not b["in_sync"], synced.answer
    assert "LimitRange team-b/team-namespace: missing" in b["why"]
    assert platform.kubectl("get", "limitrange", "-n", "team-b").strip() == ""
    assert "scratch" in synced.data["uncovered"]
    assert "1 on the blueprint, 1 not" in synced.answer


def test_a_later_hand_edit_is_put_back_and_a_changed_blueprint_is_a_new_pr(
    platform: Platform,
) -> None:
    platform.policy("blueprint", BLUEPRINT)
    platform.sync_blueprints()
    platform.kubectl("patch", "quota", "team-namespace", "-n", "team-a", "--type=merge",
                     "-p", '{"spec": {"hard": {"pods": "500"}}}')  # fmt: skip
    platform.kubectl("delete", "limitrange", "team-namespace", "-n", "team-a")

    fixed = platform.ask("sync blueprints")
    row = rows(fixed.data)["team-a"]
    assert (
        "ResourceQuota team-a/team-namespace: spec.hard.pods: want '50', live '500'"
        in (row["drift"])
    ), row["drift"]
    assert "LimitRange team-a/team-namespace: missing" in row["drift"]
    assert row["in_sync"] and row["delivered"] == "merged", fixed.answer
    assert any("already says this in git" in step for step in row["steps"]), row["steps"]
    assert live(platform, "quota")["spec"]["hard"]["pods"] == "50"
    assert live(platform, "limitrange")["spec"]["limits"]

    platform.policy("blueprint", BLUEPRINT.replace('pods: "50"', 'pods: "80"'))
    changed = rows(platform.sync_blueprints().data)["team-a"]
    assert changed["pr"] == 2 and changed["in_sync"], changed
    assert live(platform, "quota")["spec"]["hard"]["pods"] == "80"
