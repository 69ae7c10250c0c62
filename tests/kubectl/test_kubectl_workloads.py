"""kubectl rollout and logs against the sandbox, with controller and kubelet state written the
way those components write it (ReplicaSets with revisions, deployments/status, pods/status,
the in-process log book), since the simulated controllers arrive later.

Long-running commands (`rollout status`, `logs -f`) run in the background with `-v=6`, so a
test can wait until kubectl's watch or stream is open before it changes anything: no sleeps.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import yaml

from sandbox.cluster import Cluster
from sandbox.server import Sandbox
from tests.kubectl import MANIFESTS, rows
from tests.support.background import Background
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl


# -- rollout ---------------------------------------------------------------------------------


@pytest.fixture
def web(shared_kubectl: Kubectl, namespace: str) -> dict[str, Any]:
    """Deployment `web` (2 replicas, image nginx:1.26) in the test's namespace, as stored."""
    manifest = MANIFESTS / "b" / "rollout" / "web.yaml"
    created: dict[str, Any] = shared_kubectl.json("create", "-n", namespace, "-f", str(manifest))
    return created


def deployment(kubectl: Kubectl, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json("get", "deployment", "web", "-n", namespace)
    return found


def replica_set(
    owner: dict[str, Any], *, revision: int, image: str, cause: str | None = None
) -> dict[str, Any]:
    """What the Deployment controller makes for a revision: the owner's template, hashed."""
    pod_hash = f"rev{revision}"
    template = copy.deepcopy(owner["spec"]["template"])
    template["spec"]["containers"][0]["image"] = image
    template["metadata"]["labels"]["pod-template-hash"] = pod_hash
    annotations = {"deployment.kubernetes.io/revision": str(revision)}
    if cause:
        annotations["kubernetes.io/change-cause"] = cause
    meta = owner["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"web-{pod_hash}",
            "labels": {"app": "web", "pod-template-hash": pod_hash},
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}},
            "template": template,
        },
    }


@pytest.fixture
def history(shared_kubectl: Kubectl, namespace: str, web: dict[str, Any]) -> str:
    """Revision 1 ran nginx:1.25; revision 2 (the Deployment's template now) runs nginx:1.26."""
    sets = [
        replica_set(web, revision=1, image="nginx:1.25"),
        replica_set(web, revision=2, image="nginx:1.26", cause="bump nginx to 1.26"),
    ]
    shared_kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(sets))
    return namespace


def test_rollout_restart_stamps_the_pod_template(
    shared_kubectl: Kubectl, namespace: str, web: dict[str, Any]
) -> None:
    out = shared_kubectl("rollout", "restart", "deployment/web", "-n", namespace)

    assert out == "deployment.apps/web restarted\n"
    after = deployment(shared_kubectl, namespace)
    stamp = after["spec"]["template"]["metadata"]["annotations"][
        "kubectl.kubernetes.io/restartedAt"
    ]
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert after["metadata"]["generation"] == web["metadata"]["generation"] + 1


def test_rollout_history_lists_revisions_of_owned_replicasets(
    shared_kubectl: Kubectl, history: str
) -> None:
    out = shared_kubectl("rollout", "history", "deployment/web", "-n", history)

    assert out.splitlines()[0] == "deployment.apps/web "
    table = rows("\n".join(out.splitlines()[1:]))
    assert [(r["REVISION"], r["CHANGE-CAUSE"]) for r in table] == [
        ("1", "<none>"),
        ("2", "bump nginx to 1.26"),
    ]


def test_rollout_history_shows_one_revision_template(shared_kubectl: Kubectl, history: str) -> None:
    out = shared_kubectl("rollout", "history", "deployment/web", "-n", history, "--revision=1")

    assert out.startswith("deployment.apps/web with revision #1\nPod Template:\n")
    assert "    Image:\tnginx:1.25" in out.splitlines()


@pytest.mark.parametrize(
    ("args", "printed", "image"),
    [
        pytest.param((), "deployment.apps/web rolled back", "nginx:1.25", id="previous"),
        pytest.param(
            ("--to-revision=1",),
            "deployment.apps/web rolled back",
            "nginx:1.25",
            id="to-revision-1",
        ),
        pytest.param(
            ("--to-revision=2",),
            "deployment.apps/web skipped rollback (current template already matches revision 2)",
            "nginx:1.26",
            id="to-current",
        ),
    ],
)
def test_rollout_undo_restores_a_revision(
    shared_kubectl: Kubectl, history: str, args: tuple[str, ...], printed: str, image: str
) -> None:
    out = shared_kubectl("rollout", "undo", "deployment/web", "-n", history, *args)

    assert out == printed + "\n"
    template = deployment(shared_kubectl, history)["spec"]["template"]
    assert template["spec"]["containers"][0]["image"] == image
    assert "pod-template-hash" not in template["metadata"]["labels"]


def test_rollout_undo_without_history_fails(
    shared_kubectl: Kubectl, namespace: str, web: dict[str, Any]
) -> None:
    refused = shared_kubectl.fails("rollout", "undo", "deployment/web", "-n", namespace)

    assert refused.stderr == 'error: no rollout history found for deployment "web"\n'


def write_status(kubectl: Kubectl, namespace: str, **status: Any) -> None:
    """What the Deployment controller does: a merge patch on deployments/status."""
    kubectl(
        "patch",
        "deployment",
        "web",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def rolled_out(generation: int, replicas: int = 2) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
                "message": 'ReplicaSet "web-rev2" has successfully progressed.',
            },
        ],
    }


@pytest.mark.parametrize(
    ("lag", "changes", "message"),
    [
        pytest.param(
            1,
            {},
            "Waiting for deployment spec update to be observed...",
            id="generation-not-observed",
        ),
        pytest.param(
            0,
            {"updatedReplicas": 1},
            'Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas '
            "have been updated...",
            id="updating",
        ),
        pytest.param(
            0,
            {"replicas": 3},
            'Waiting for deployment "web" rollout to finish: 1 old replicas are '
            "pending termination...",
            id="old-replicas-left",
        ),
        pytest.param(
            0,
            {"availableReplicas": 1},
            'Waiting for deployment "web" rollout to finish: 1 of 2 updated replicas '
            "are available...",
            id="not-yet-available",
        ),
        pytest.param(0, {}, 'deployment "web" successfully rolled out', id="done"),
    ],
)
def test_rollout_status_reads_deployment_status(
    shared_kubectl: Kubectl,
    namespace: str,
    web: dict[str, Any],
    lag: int,
    changes: dict[str, int],
    message: str,
) -> None:
    generation = web["metadata"]["generation"]
    write_status(shared_kubectl, namespace, **{**rolled_out(generation - lag), **changes})

    out = shared_kubectl("rollout", "status", "deployment/web", "-n", namespace, "--watch=false")

    assert out == message + "\n"


def test_rollout_status_waits_until_status_reports_rollout_done(
    shared_kubectl: Kubectl,
    namespace: str,
    web: dict[str, Any],
    background: Callable[..., Background],
) -> None:
    generation = web["metadata"]["generation"]
    write_status(shared_kubectl, namespace, **{**rolled_out(generation), "availableReplicas": 1})
    status = background(
        "rollout",
        "status",
        "deployment/web",
        "-n",
        namespace,
        "--timeout=20s",
    )
    status.expect("1 of 2 updated replicas are available")
    status.expect("watch=true", stream="stderr")

    write_status(shared_kubectl, namespace, **rolled_out(generation))

    status.expect('deployment "web" successfully rolled out')
    assert status.finish()[0] == 0
    table = rows(shared_kubectl("get", "deployment", "web", "-n", namespace))
    assert [(r["READY"], r["UP-TO-DATE"], r["AVAILABLE"]) for r in table] == [("2/2", "2", "2")]


# -- logs ------------------------------------------------------------------------------------


def create_pods(kubectl: Kubectl, namespace: str, *pods: dict[str, Any]) -> None:
    kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(pods))


def pod(name: str, *containers: str, node: str | None = "node-1") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": c, "image": "busybox:1.36"} for c in containers]
    }
    if node:
        spec["nodeName"] = node  # assigned at creation, as a DaemonSet or static pod is
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def logged(shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str) -> str:
    """Pods `solo` (container app) and `duo` (app, sidecar) on node-1, with lines logged."""
    create_pods(shared_kubectl, namespace, pod("solo", "app"), pod("duo", "app", "sidecar"))

    def record(cluster: Cluster) -> None:
        for line in ("starting", "listening on :8080", "ready"):
            cluster.logs.append(namespace, "solo", "app", line)
        cluster.logs.append(namespace, "duo", "app", "app line")
        cluster.logs.append(namespace, "duo", "sidecar", "sidecar line")

    shared_sandbox.call(record)
    return namespace


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("solo",), "starting\nlistening on :8080\nready\n", id="all-lines"),
        pytest.param(("solo", "--tail=2"), "listening on :8080\nready\n", id="tail"),
        pytest.param(("solo", "--tail=0"), "", id="tail-zero"),
        pytest.param(("duo", "-c", "sidecar"), "sidecar line\n", id="container-flag"),
        pytest.param(("duo", "-c", "app"), "app line\n", id="first-container"),
    ],
)
def test_logs_prints_the_containers_log(
    shared_kubectl: Kubectl, logged: str, args: tuple[str, ...], expected: str
) -> None:
    done = shared_kubectl.run("logs", "-n", logged, *args)

    assert (done.stdout, done.stderr) == (expected, "")


def test_logs_without_container_defaults_to_the_first(shared_kubectl: Kubectl, logged: str) -> None:
    # kubectl itself picks the first container (or the default-container annotation) and says
    # so, so the server's "container name must be specified" is only seen without kubectl's help.
    done = shared_kubectl.run("logs", "duo", "-n", logged)

    assert done.stdout == "app line\n"
    assert done.stderr == 'Defaulted container "app" out of: app, sidecar\n'
    raw = shared_kubectl.fails("get", "--raw", f"/api/v1/namespaces/{logged}/pods/duo/log")
    assert raw.stderr == (
        "Error from server (BadRequest): a container name must be specified "
        "for pod duo, choose one of: [app sidecar]\n"
    )


def test_logs_of_unknown_container_fails(shared_kubectl: Kubectl, logged: str) -> None:
    refused = shared_kubectl.fails("logs", "duo", "-n", logged, "-c", "db")

    assert refused.stderr == "error: container db is not valid for pod duo out of: app, sidecar\n"


def test_logs_previous_reads_the_log_before_restart(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, logged: str
) -> None:
    refused = shared_kubectl.fails("logs", "solo", "-n", logged, "--previous")
    assert refused.stderr == (
        "Error from server (BadRequest): previous terminated container "
        '"app" in pod "solo" not found\n'
    )

    def crash(cluster: Cluster) -> None:
        cluster.logs.restart(logged, "solo", "app")
        cluster.logs.append(logged, "solo", "app", "starting again")

    shared_sandbox.call(crash)

    previous = shared_kubectl("logs", "solo", "-n", logged, "--previous")
    current = shared_kubectl("logs", "solo", "-n", logged)
    assert previous == "starting\nlistening on :8080\nready\n"
    assert current == "starting again\n"


def test_logs_follow_streams_new_lines(
    shared_sandbox: Sandbox,
    shared_kubectl: Kubectl,
    logged: str,
    background: Callable[..., Background],
) -> None:
    follower = background("logs", "-f", "solo", "-n", logged)
    follower.expect("ready")
    follower.expect("follow=true", stream="stderr")

    shared_sandbox.call(lambda cluster: cluster.logs.append(logged, "solo", "app", "GET /health"))

    follower.expect("GET /health")
    assert follower.process.poll() is None, "logs -f ended while the pod still runs"


def test_logs_follow_ends_when_the_pod_is_deleted(
    shared_kubectl: Kubectl, logged: str, background: Callable[..., Background]
) -> None:
    follower = background("logs", "-f", "duo", "-c", "app", "-n", logged)
    follower.expect("app line")

    shared_kubectl("delete", "pod", "duo", "-n", logged, "--grace-period=0", "--force")

    assert follower.finish()[0] == 0


def test_logs_of_unscheduled_pod_are_empty(shared_kubectl: Kubectl, namespace: str) -> None:
    # Kubernetes has no kubelet to ask yet, so pods/log answers 204 with no body: not an error.
    create_pods(shared_kubectl, namespace, pod("pending", "app", node=None))

    done = shared_kubectl.run("logs", "pending", "-n", namespace, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
