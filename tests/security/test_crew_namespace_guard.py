"""Finding 11 (crew namespace): no crew identity makes a workload in the crew's own namespace.

The Dev Team may create Jobs, Pods and Deployments cluster-wide (a ClusterRole bound by a
ClusterRoleBinding), and RBAC cannot leave one namespace out of such a grant; so its token could
start a Job in kubecrew-system running as `serviceAccountName: cluster-operator` and borrow that
agent's rights. `kubecrew install` now ships a ValidatingAdmissionPolicy
(deploy/admission/crew-namespace.yaml) that refuses it. Checked on a sandbox with real kubectl
and the kubeconfig the install wrote for the Dev Team: each way it could start such a workload
(create, the server-side apply its prober Jobs go in by, a patch of a Deployment already there)
is refused with the policy's message, it cannot delete the guard, the same Job in a team
namespace still goes in, and the installer's own Deployment in the crew namespace runs (its
ReplicaSet and Pods come from controllers, not crew identities). Before the sandbox served
ValidatingAdmissionPolicy, the install skipped the guard and the Dev Team's Job was created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubecrew.install.footprint import NAMESPACE, Request, install
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

DEV_TEAM = f"system:serviceaccount:{NAMESPACE}:dev-team"
POD_SPEC = {
    "serviceAccountName": "cluster-operator",
    "restartPolicy": "Never",
    "containers": [{"name": "borrow", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
}


def job(namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "borrow", "namespace": namespace},
        "spec": {"template": {"spec": POD_SPEC}},
    }


def pod(namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "borrow", "namespace": namespace},
        "spec": POD_SPEC,
    }


def deployment(
    namespace: str, *, name: str = "borrow", account: str = "cluster-operator"
) -> dict[str, object]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {**POD_SPEC, "restartPolicy": "Always", "serviceAccountName": account},
            },
        },
    }


@pytest.fixture
def dev_team(sandbox: Sandbox, tmp_path: Path) -> Kubectl:
    """Real kubectl with the kubeconfig `kubecrew install` wrote for the Dev Team."""
    out = tmp_path / "kubeconfigs"
    install(Request(kubeconfig=sandbox.kubeconfig, out=out))
    return Kubectl(out / "dev-team.yaml", tmp_path / "dev-team-cache")


@pytest.mark.parametrize(
    ("manifest", "verb", "resource"),
    [
        pytest.param(job, "create", "jobs", id="job-create"),
        pytest.param(pod, "create", "pods", id="pod-create"),
        pytest.param(deployment, "create", "deployments", id="deployment-create"),
        pytest.param(job, "apply --server-side", "jobs", id="job-server-side-apply"),
    ],
)
def test_the_dev_team_cannot_start_a_workload_in_the_crew_namespace(
    dev_team: Kubectl,
    kubectl: Kubectl,
    manifest: object,
    verb: str,
    resource: str,
) -> None:
    assert callable(manifest)
    refused = dev_team.fails(*verb.split(), "-f", "-", input=yaml.safe_dump(manifest(NAMESPACE)))

    message = " ".join(refused.stderr.split())
    assert "Error from server (Forbidden)" in message, message
    assert "ValidatingAdmissionPolicy 'kubecrew-crew-namespace' with binding " in message
    assert (
        f"the crew namespace {NAMESPACE} is the installer's: {DEV_TEAM} may not create or change "
        f"{resource} there"
    ) in message
    kinds = "jobs,pods,deployments,replicasets"
    assert "borrow" not in kubectl("get", kinds, "-n", NAMESPACE, "-o", "name")


def test_the_same_job_in_a_team_namespace_is_allowed(dev_team: Kubectl, kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "shop")

    created = dev_team("create", "-f", "-", input=yaml.safe_dump(job("shop")))

    assert "job.batch/borrow created" in created
    assert kubectl("get", "job", "borrow", "-n", "shop", "-o", "name").strip() == "job.batch/borrow"


def test_the_dev_team_cannot_remove_the_guard(dev_team: Kubectl) -> None:
    for kind in ("validatingadmissionpolicybinding", "validatingadmissionpolicy"):
        refused = dev_team.fails("delete", kind, "kubecrew-crew-namespace")
        assert "Error from server (Forbidden)" in refused.stderr
        assert f'User "{DEV_TEAM}" cannot delete resource' in refused.stderr


def test_the_installer_still_runs_a_deployment_in_the_crew_namespace(
    dev_team: Kubectl, kubectl: Kubectl
) -> None:
    crew = deployment(NAMESPACE, name="crew", account="default")
    kubectl("create", "-f", "-", input=yaml.safe_dump(crew))

    def ready() -> bool:
        found = kubectl.json("get", "deployment", "crew", "-n", NAMESPACE)
        return bool(found.get("status", {}).get("readyReplicas") == 1)

    eventually(ready, timeout=60, what="the installer's Deployment has its pod ready")
    pods = kubectl("get", "pods", "-n", NAMESPACE, "-l", "app=crew", "-o", "name").split()
    assert len(pods) == 1


def test_the_dev_team_cannot_turn_the_installers_deployment_into_the_operator(
    dev_team: Kubectl, kubectl: Kubectl
) -> None:
    crew = deployment(NAMESPACE, name="crew", account="default")
    kubectl("create", "-f", "-", input=yaml.safe_dump(crew))
    borrow = '{"spec":{"template":{"spec":{"serviceAccountName":"cluster-operator"}}}}'

    refused = dev_team.fails("patch", "deployment", "crew", "-n", NAMESPACE, "-p", borrow)

    assert "Error from server (Forbidden)" in refused.stderr
    assert f"{DEV_TEAM} may not create or change deployments there" in refused.stderr
