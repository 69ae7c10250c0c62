"""Containers without requests or limits in a git-managed workload get a fix PR that writes the
namespace blueprint's LimitRange defaults into the workload's manifest (what the API server
gives such a container anyway), and the re-audit after merge and sync is clean from live state.
Without a blueprint the same finding is only reported."""

from __future__ import annotations

from typing import Any

from tests.support.gitops import git
from tests.support.platform_agent import Platform

BLUEPRINT = """\
apiVersion: kubecrew.io/v1alpha1
kind: NamespaceBlueprint
metadata: {name: team-baseline}
spec:
  namespaces: [team-a]
  limitRange:
    defaultRequest: {cpu: 100m, memory: 128Mi}
    default: {cpu: 500m, memory: 512Mi}
    max: {cpu: "4", memory: 8Gi}
"""
# web asks for a whole CPU and nothing else; its sidecar sets nothing at all.
API = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team-a}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: web
          image: registry.k8s.io/pause:3.9
          resources:
            requests: {cpu: "1"}  # sized by the team for the checkout burst
        - name: sidecar
          image: registry.k8s.io/pause:3.9
"""
RESOURCES = ("no-requests", "no-limits")


def resource_findings(result: dict[str, Any], key: str) -> list[tuple[str, str, str]]:
    return sorted(
        (f["check"], f["field"], f["fix"])
        for f in result[key]
        if f["object"] == "Deployment team-a/api" and f["check"] in RESOURCES
    )


def test_missing_requests_and_limits_are_filled_from_the_blueprint_by_pr(
    platform: Platform,
) -> None:
    platform.policy("blueprint", BLUEPRINT)
    platform.add_to_git("api.yaml", API)

    asked = platform.ask("audit team-a")
    base = "spec.template.spec.containers"
    assert resource_findings(asked.data, "findings") == [
        ("no-limits", f"{base}[0].resources.limits", "pr"),
        ("no-limits", f"{base}[1].resources.limits", "pr"),
        ("no-requests", f"{base}[0].resources.requests", "pr"),
        ("no-requests", f"{base}[1].resources.requests", "pr"),
    ]
    [fix] = asked.data["fixes"]
    assert (fix["check"], fix["delivered"], fix["pr"], fix["path"]) == (
        "no-limits,no-requests", "merged", 1, "api.yaml",
    ), asked.answer  # fmt: skip
    assert fix["values"] == [
        "web limits.cpu 1 (its request: the default limit 500m is below it)",
        "web requests.memory 128Mi (the blueprint's default request)",
        "web limits.memory 512Mi (the blueprint's default limit)",
        "sidecar requests.cpu 100m (the blueprint's default request)",
        "sidecar limits.cpu 500m (the blueprint's default limit)",
        "sidecar requests.memory 128Mi (the blueprint's default request)",
        "sidecar limits.memory 512Mi (the blueprint's default limit)",
    ]
    # Confirmed from live state: the Deployment now carries them, and nothing is left.
    assert resource_findings(asked.data, "remaining") == [], asked.answer
    live = platform.kubectl.json("get", "deployment", "api", "-n", "team-a")
    web, sidecar = (c["resources"] for c in live["spec"]["template"]["spec"]["containers"])
    assert web == {"requests": {"cpu": "1", "memory": "128Mi"},
                   "limits": {"cpu": "1", "memory": "512Mi"}}  # fmt: skip
    assert sidecar == {"requests": {"cpu": "100m", "memory": "128Mi"},
                       "limits": {"cpu": "500m", "memory": "512Mi"}}  # fmt: skip
    # The owners' manifest keeps its comments; the PR said which values and why.
    merged = git(platform.repo, "show", "main:api.yaml")
    assert '{cpu: "1", memory: 128Mi} # sized by the team for the checkout burst' in merged
    assert "set from NamespaceBlueprint team-baseline's LimitRange defaults: web " in (asked.answer)
    told = platform.proposal(fix["proposal"])
    assert told.proposal.action.describe() == "apply Deployment team-a/api via a pull request"
    assert "what the API server gives any container in team-a" in told.proposal.rationale

    again = platform.audit("team-a")
    assert resource_findings(again.data, "findings") == []
    assert again.data["fixes"] == [] and "propose_change" not in platform.called()


def test_without_a_blueprint_the_values_are_the_owners_and_only_reported(
    platform: Platform,
) -> None:
    platform.add_to_git("api.yaml", API)
    outcome = platform.audit("team-a")
    found = resource_findings(outcome.data, "findings")
    assert len(found) == 4 and {fix for *_, fix in found} == {"report"}
    assert outcome.data["fixes"] == []
    assert not {"propose", "propose_change"} & set(platform.called())
