"""kubectl rollout and logs against the living sandbox: the Deployment and ReplicaSet controllers
make the revisions and the status kubectl reads, the kubelet runs the pods whose logs it prints.

A rollout passes through its intermediate states (new replicas being added, old ones left, new
ones not yet available) only briefly in a healthy cluster. The tests hold such a state still the
way it happens in a real one: a new template whose pods never become ready (a readiness probe on a
port nginx does not listen on) stops a rolling update where `maxSurge` and `maxUnavailable` leave
it. Pods print known lines through their command (`sh -c "echo ...; sleep 3600"`), which the
kubelet interprets, so a log's content is known exactly.

Long-running commands (`rollout status`, `logs -f`) run in the background with `-v=6`, so a
test can wait until kubectl's watch or stream is open before it changes anything: no sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import pytest
import yaml

from tests.sandbox.kubectl.suite import MANIFESTS, rows
from tests.support.background import Background
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

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


# nginx listens on 80 only: a pod probed on 8081 runs but never becomes ready.
NEVER_READY = {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 1}


def create_web(
    kubectl: Kubectl,
    namespace: str,
    *,
    replicas: int = 2,
    image: str = "nginx:1.25",
    surge: int | None = None,
    unavailable: int | None = None,
    never_ready: bool = False,
) -> None:
    """Deployment `web` running nginx, with the rolling-update bounds given."""
    container: dict[str, Any] = {"name": "web", "image": image}
    if never_ready:
        container["readinessProbe"] = NEVER_READY
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}},
        # A stuck rollout must stay "in progress" for the test, not reach its deadline.
        "progressDeadlineSeconds": 3600,
    }
    if surge is not None or unavailable is not None:
        spec["strategy"] = {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
        }
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": spec,
    }
    kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(body))


def roll_out_never_ready(kubectl: Kubectl, namespace: str) -> None:
    """Update `web` to nginx:1.26 with a readiness probe its pods never pass."""
    patch = [
        {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.26"},
        {
            "op": "add",
            "path": "/spec/template/spec/containers/0/readinessProbe",
            "value": NEVER_READY,
        },
    ]
    kubectl("patch", "deployment", "web", "-n", namespace, "--type=json", "-p", json.dumps(patch))


def wait_rolled_out(kubectl: Kubectl, namespace: str) -> None:
    kubectl("rollout", "status", "deployment/web", "-n", namespace, "--timeout=60s")


def wait_status(kubectl: Kubectl, namespace: str, **counts: int) -> None:
    """Until the controllers have observed the latest spec and report these counts."""

    def reached() -> bool:
        found = deployment(kubectl, namespace)
        status = found.get("status") or {}
        seen = {field: status.get(field, 0) for field in counts}
        assert (status.get("observedGeneration"), seen) == (
            found["metadata"]["generation"],
            counts,
        )
        return True

    eventually(reached, what=f"deployment web reports {counts}")


@pytest.fixture
def history(shared_kubectl: Kubectl, namespace: str) -> str:
    """Revision 1 ran nginx:1.25; revision 2 (the Deployment's template now) runs nginx:1.26,
    with the change cause recorded as people do, by annotating the Deployment."""
    create_web(shared_kubectl, namespace, image="nginx:1.25")
    wait_rolled_out(shared_kubectl, namespace)
    shared_kubectl("set", "image", "deployment/web", "web=nginx:1.26", "-n", namespace)
    shared_kubectl(
        "annotate",
        "deployment/web",
        "kubernetes.io/change-cause=bump nginx to 1.26",
        "-n",
        namespace,
    )
    wait_rolled_out(shared_kubectl, namespace)
    return namespace


def revisions(kubectl: Kubectl, namespace: str) -> list[tuple[str, str]]:
    out = kubectl("rollout", "history", "deployment/web", "-n", namespace)
    assert out.splitlines()[0] == "deployment.apps/web "
    table = rows("\n".join(out.splitlines()[1:]))
    return [(r["REVISION"], r["CHANGE-CAUSE"]) for r in table]


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
    assert revisions(shared_kubectl, history) == [("1", "<none>"), ("2", "bump nginx to 1.26")]


def test_rollout_history_shows_one_revision_template(shared_kubectl: Kubectl, history: str) -> None:
    out = shared_kubectl("rollout", "history", "deployment/web", "-n", history, "--revision=1")

    assert out.startswith("deployment.apps/web with revision #1\nPod Template:\n")
    assert "    Image:\tnginx:1.25" in out.splitlines()


@pytest.mark.parametrize(
    ("args", "printed", "image", "after"),
    [
        pytest.param(
            (),
            "deployment.apps/web rolled back",
            "nginx:1.25",
            ["2", "3"],
            id="previous",
        ),
        pytest.param(
            ("--to-revision=1",),
            "deployment.apps/web rolled back",
            "nginx:1.25",
            ["2", "3"],
            id="to-revision-1",
        ),
        pytest.param(
            ("--to-revision=2",),
            "deployment.apps/web skipped rollback (current template already matches revision 2)",
            "nginx:1.26",
            ["1", "2"],
            id="to-current",
        ),
    ],
)
def test_rollout_undo_restores_a_revision(
    shared_kubectl: Kubectl,
    history: str,
    args: tuple[str, ...],
    printed: str,
    image: str,
    after: list[str],
) -> None:
    out = shared_kubectl("rollout", "undo", "deployment/web", "-n", history, *args)

    assert out == printed + "\n"
    template = deployment(shared_kubectl, history)["spec"]["template"]
    assert template["spec"]["containers"][0]["image"] == image
    assert "pod-template-hash" not in template["metadata"]["labels"]
    # The controller brings the old ReplicaSet back as the newest revision.
    wait_rolled_out(shared_kubectl, history)
    assert [revision for revision, _ in revisions(shared_kubectl, history)] == after


def test_rollout_undo_without_history_fails(
    shared_kubectl: Kubectl, namespace: str, web: dict[str, Any]
) -> None:
    wait_rolled_out(shared_kubectl, namespace)  # its one ReplicaSet exists: revision 1, no more

    refused = shared_kubectl.fails("rollout", "undo", "deployment/web", "-n", namespace)

    assert refused.stderr == 'error: no rollout history found for deployment "web"\n'


Story = Literal["healthy", "stuck-update", "never-ready"]


def tell(kubectl: Kubectl, namespace: str, story: Story, *, replicas: int, surge: int) -> None:
    """Bring Deployment `web` to where `story` leaves it. maxUnavailable is 0, so old pods stay
    until new ones are available, which a never-ready template's pods never are."""
    never_ready = story == "never-ready"
    create_web(
        kubectl, namespace, replicas=replicas, surge=surge, unavailable=0, never_ready=never_ready
    )
    if story != "never-ready":
        wait_rolled_out(kubectl, namespace)
    if story == "stuck-update":
        roll_out_never_ready(kubectl, namespace)


@pytest.mark.parametrize(
    ("story", "replicas", "surge", "counts", "message"),
    [
        pytest.param(
            "stuck-update",
            3,
            1,
            {"replicas": 4, "updatedReplicas": 1, "availableReplicas": 3},
            'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas '
            "have been updated...",
            id="updating",
        ),
        pytest.param(
            "stuck-update",
            2,
            2,
            {"replicas": 4, "updatedReplicas": 2, "availableReplicas": 2},
            'Waiting for deployment "web" rollout to finish: 2 old replicas are '
            "pending termination...",
            id="old-replicas-left",
        ),
        pytest.param(
            "never-ready",
            2,
            1,
            {"replicas": 2, "updatedReplicas": 2, "availableReplicas": 0},
            'Waiting for deployment "web" rollout to finish: 0 of 2 updated replicas '
            "are available...",
            id="not-yet-available",
        ),
        pytest.param(
            "healthy",
            2,
            1,
            {"replicas": 2, "updatedReplicas": 2, "availableReplicas": 2},
            'deployment "web" successfully rolled out',
            id="done",
        ),
    ],
)
def test_rollout_status_reads_deployment_status(
    shared_kubectl: Kubectl,
    namespace: str,
    story: Story,
    replicas: int,
    surge: int,
    counts: dict[str, int],
    message: str,
) -> None:
    tell(shared_kubectl, namespace, story, replicas=replicas, surge=surge)
    wait_status(shared_kubectl, namespace, **counts)

    out = shared_kubectl("rollout", "status", "deployment/web", "-n", namespace, "--watch=false")

    assert out == message + "\n"


def test_rollout_status_times_out_on_a_stuck_rollout(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    tell(shared_kubectl, namespace, "stuck-update", replicas=3, surge=1)
    wait_status(shared_kubectl, namespace, replicas=4, updatedReplicas=1, availableReplicas=3)

    done = shared_kubectl.run(
        "rollout", "status", "deployment/web", "-n", namespace, "--timeout=2s", check=False
    )

    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been '
        "updated..."
    )
    assert done.stderr == "error: timed out waiting for the condition\n"


def test_rollout_status_waits_until_status_reports_rollout_done(
    shared_kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> None:
    tell(shared_kubectl, namespace, "stuck-update", replicas=3, surge=1)
    wait_status(shared_kubectl, namespace, replicas=4, updatedReplicas=1, availableReplicas=3)
    status = background("rollout", "status", "deployment/web", "-n", namespace, "--timeout=60s")
    status.expect("1 out of 3 new replicas have been updated")
    status.expect("watch=true", stream="stderr")

    shared_kubectl("rollout", "undo", "deployment/web", "-n", namespace)

    # kubectl sees the new generation before the controller has observed it.
    status.expect("Waiting for deployment spec update to be observed...")
    status.expect('deployment "web" successfully rolled out', timeout=60)
    assert status.finish()[0] == 0
    table = rows(shared_kubectl("get", "deployment", "web", "-n", namespace))
    assert [(r["READY"], r["UP-TO-DATE"], r["AVAILABLE"]) for r in table] == [("3/3", "3", "3")]


# -- logs ------------------------------------------------------------------------------------


def create_pods(kubectl: Kubectl, namespace: str, *pods: dict[str, Any]) -> None:
    kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(pods))


def pod(name: str, *containers: tuple[str, str], **spec: Any) -> dict[str, Any]:
    """A pod of busybox containers, each (name, shell script) run by `sh -c`."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": c, "image": "busybox:1.36", "command": ["sh", "-c", script]}
                for c, script in containers
            ],
            **spec,
        },
    }


def wait_ready(kubectl: Kubectl, namespace: str, *pods: str) -> None:
    names = [f"pod/{name}" for name in pods]
    kubectl("wait", "--for=condition=Ready", *names, "-n", namespace, "--timeout=60s")


@pytest.fixture
def logged(shared_kubectl: Kubectl, namespace: str) -> str:
    """Running pods `solo` (container app) and `duo` (app, sidecar) that printed known lines."""
    create_pods(
        shared_kubectl,
        namespace,
        pod("solo", ("app", "echo starting; echo listening on :8080; echo ready; sleep 3600")),
        pod(
            "duo",
            ("app", "echo app line; sleep 3600"),
            ("sidecar", "echo sidecar line; sleep 3600"),
        ),
    )
    wait_ready(shared_kubectl, namespace, "solo", "duo")
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


NGINX_STARTED = "/docker-entrypoint.sh: Configuration complete; ready for start up"
HTTPD_STARTED = (
    "[mpm_event:notice] [pid 1:tid 1] AH00489: Apache/2.4.62 (Unix) configured -- "
    "resuming normal operations"
)


def test_logs_previous_reads_the_log_before_restart(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    # A bare pod's image may change: the kubelet kills the container and starts the new image,
    # so the log of the nginx run becomes the previous one.
    server = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "server"}}
    server["spec"] = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    create_pods(shared_kubectl, namespace, server)
    wait_ready(shared_kubectl, namespace, "server")
    refused = shared_kubectl.fails("logs", "server", "-n", namespace, "--previous")
    assert refused.stderr == (
        "Error from server (BadRequest): previous terminated container "
        '"app" in pod "server" not found\n'
    )

    shared_kubectl("set", "image", "pod/server", "app=httpd:2.4", "-n", namespace)

    def restarted() -> bool:
        found = shared_kubectl.json("get", "pod", "server", "-n", namespace)
        (status,) = found["status"]["containerStatuses"]
        return bool(status["restartCount"] == 1 and status["ready"])

    eventually(restarted, what="the container restarted with httpd")
    previous = shared_kubectl("logs", "server", "-n", namespace, "--previous").splitlines()
    current = shared_kubectl("logs", "server", "-n", namespace).splitlines()
    assert (NGINX_STARTED in previous, HTTPD_STARTED in previous) == (True, False)
    assert (NGINX_STARTED in current, HTTPD_STARTED in current) == (False, True)


@pytest.fixture
def ticker(shared_kubectl: Kubectl, namespace: str) -> str:
    """Running pod `ticker` that printed "one" and "two" and prints "tick" every 5 s."""
    script = "echo one; echo two; while true; do echo tick; sleep 5; done"
    create_pods(shared_kubectl, namespace, pod("ticker", ("app", script)))
    wait_ready(shared_kubectl, namespace, "ticker")
    return namespace


def follow_ticker(
    kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> Background:
    """`logs -f ticker`, once a line has reached kubectl through the open stream."""
    follower = background("logs", "-f", "ticker", "-n", namespace)
    follower.expect("two")
    follower.expect("follow=true", stream="stderr")
    # The stream opened on at most the lines logged by now; kubectl printing one line more than
    # that means a line reached it after the stream opened.
    logged_now = len(kubectl("logs", "ticker", "-n", namespace).splitlines())
    for _ in range(logged_now + 1 - len(["one", "two"])):
        follower.expect("tick")
    return follower


def test_logs_follow_streams_new_lines(
    shared_kubectl: Kubectl, ticker: str, background: Callable[..., Background]
) -> None:
    follower = follow_ticker(shared_kubectl, ticker, background)

    assert follower.process.poll() is None, "logs -f ended while the pod still runs"


def test_logs_follow_ends_when_the_pod_is_deleted(
    shared_kubectl: Kubectl, ticker: str, background: Callable[..., Background]
) -> None:
    follower = follow_ticker(shared_kubectl, ticker, background)

    # A graceful delete: the kubelet stops the container and removes the pod.
    shared_kubectl("delete", "pod", "ticker", "-n", ticker, "--wait")

    assert follower.finish()[0] == 0


def test_logs_of_unscheduled_pod_are_empty(shared_kubectl: Kubectl, namespace: str) -> None:
    # Kubernetes has no kubelet to ask yet, so pods/log answers 204 with no body: not an error.
    unscheduled = pod("pending", ("app", "echo never; sleep 3600"), schedulerName="no-scheduler")
    create_pods(shared_kubectl, namespace, unscheduled)

    done = shared_kubectl.run("logs", "pending", "-n", namespace, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
