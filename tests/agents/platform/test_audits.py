"""Audits of the fleet on the sandbox: over-grants and privileged pods are found with evidence
and reported, never changed; a multi-replica git-managed Deployment without a PDB gets a fix PR,
and the re-audit after merge and sync is clean from live state."""

from __future__ import annotations

from typing import Any

import pytest

from agents.platform.intents import read_question, read_scope
from tests.support.platform_agent import Platform

DIGEST = "@sha256:" + "0" * 64
IMAGES = """\
apiVersion: kubecrew.io/v1alpha1
kind: ImagePolicy
metadata: {name: org-registries}
spec:
  allowedRegistries: [registry.k8s.io]
  requireDigest: true
"""
WEB = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: team-a}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      securityContext: {{runAsNonRoot: true}}
      containers:
        - name: web
          image: registry.k8s.io/pause{DIGEST}
          resources:
            requests: {{cpu: 100m, memory: 64Mi}}
            limits: {{cpu: 200m, memory: 128Mi}}
          readinessProbe: {{tcpSocket: {{port: 8080}}}}
          livenessProbe: {{tcpSocket: {{port: 8080}}}}
          securityContext: {{allowPrivilegeEscalation: false}}
"""
PRIVILEGED = """\
apiVersion: v1
kind: Pod
metadata: {name: debug, namespace: team-b}
spec:
  hostNetwork: true
  containers:
    - name: shell
      image: busybox:1.36
      securityContext: {privileged: true}
"""


def of(result: dict[str, Any], key: str, obj: str) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in result[key] if f["object"] == obj}


def test_over_grants_and_a_privileged_pod_are_reported_with_evidence(platform: Platform) -> None:
    platform.policy("images", IMAGES)
    platform.kubectl("create", "serviceaccount", "deployer", "-n", "team-b")
    platform.kubectl("create", "clusterrolebinding", "team-b-deployer",
                     "--clusterrole=cluster-admin", "--serviceaccount=team-b:deployer")  # fmt: skip
    platform.kubectl("create", "rolebinding", "lazy", "-n", "scratch", "--clusterrole=view",
                     "--serviceaccount=scratch:default")  # fmt: skip
    platform.kubectl("apply", "-f", "-", input=PRIVILEGED)

    outcome = platform.audit()
    result = outcome.data
    assert result["scope"] == "fleet" and "kube-system" not in result["namespaces"]
    binding = of(result, "findings", "ClusterRoleBinding team-b-deployer")["rbac-cluster-admin"]
    assert binding["severity"] == "critical" and binding["field"] == "subjects[0]"
    assert binding["value"] == "ServiceAccount team-b/deployer", binding
    assert not of(result, "findings", "ClusterRoleBinding cluster-admin")  # system:masters
    lazy = of(result, "findings", "RoleBinding scratch/lazy")["rbac-default-sa"]
    assert lazy["value"] == "ServiceAccount scratch/default"

    pod = of(result, "findings", "Pod team-b/debug")
    privileged = pod["privileged"]
    assert privileged["severity"] == "critical" and privileged["value"] == "true"
    assert privileged["field"] == "spec.containers[0].securityContext.privileged"
    assert pod["host-network"]["field"] == "spec.hostNetwork"
    assert pod["image-registry"]["value"] == "busybox:1.36"
    assert pod["image-digest"]["severity"] == "medium"  # the ImagePolicy requires digests
    assert {"no-requests", "no-limits", "no-readiness-probe", "run-as-root"} <= set(pod)
    assert result["findings"][0]["severity"] == "critical"  # most severe first

    # Reported, never changed: no notice, no PR, no write; the remaining findings are the same.
    assert result["fixes"] == [] and result["remaining"] == result["findings"]
    assert not {"propose", "propose_change", "apply"} & set(platform.called())
    assert "[critical] rbac-cluster-admin: ClusterRoleBinding team-b-deployer" in outcome.answer
    assert platform.kubectl.json("get", "pod", "debug", "-n", "team-b")["spec"]["containers"]


def test_a_missing_pdb_gets_a_fix_pr_and_the_reaudit_is_clean_from_live(
    platform: Platform,
) -> None:
    platform.policy("images", IMAGES)
    platform.add_to_git("web.yaml", WEB)
    asked = platform.ask("audit team-a")
    assert asked.task == "audit" and asked.data["scope"] == "team-a", asked.answer
    before = of(asked.data, "findings", "Deployment team-a/web")
    assert set(before) == {"no-pdb"}, before  # otherwise a model workload
    assert before["no-pdb"]["value"] == "3" and before["no-pdb"]["fix"] == "pr"

    [fix] = asked.data["fixes"]
    assert fix["delivered"] == "merged" and fix["pr"] == 1, asked.answer
    assert fix["path"] == "platform/audits/team-a/pdb-web.yaml"
    # Confirmed from live state: the PDB exists and selects the Deployment's pods.
    assert not of(asked.data, "remaining", "Deployment team-a/web"), asked.answer
    live = platform.kubectl.json("get", "pdb", "web", "-n", "team-a")
    assert live["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert live["spec"]["maxUnavailable"] == 1
    assert live["metadata"]["labels"]["kubecrew.io/gitops-repo"] == "team-a-gitops"  # via sync
    told = platform.proposal(fix["proposal"])
    assert told.decision is not None and told.decision.outcome == "approved"
    assert "team-a" in [e.evaluation.stakeholder for e in told.transcript if e.evaluation]

    again = platform.audit("team-a")  # the next scheduled audit: nothing left, nothing done
    assert not of(again.data, "findings", "Deployment team-a/web"), again.answer
    assert again.data["fixes"] == [] and "propose_change" not in platform.called()


@pytest.mark.parametrize(
    ("question", "task", "scope"),
    [
        ("audit the fleet", "audit", ("", True)),
        ("please audit namespace shop", "audit", ("shop", True)),
        ("is shop on the blueprint?", "blueprints", ("shop", False)),
        ("sync blueprints", "blueprints", ("", True)),
        ("sync the blueprint for team-b", "blueprints", ("team-b", True)),
    ],
    ids=["fleet", "namespace", "look-only", "sync-all", "sync-one"],
)
def test_questions_route_to_their_task_and_scope(
    question: str, task: str, scope: tuple[str, bool]
) -> None:
    assert read_question(question) == task
    assert read_scope(question, read_question(question)) == scope
