"""kubectl delete and wait against the sandbox: immediate and graceful pod deletion, forced
deletion, cascading policies, finalizers, namespace deletion, selectors, and `kubectl wait` for
conditions, deletion and JSONPath values.

The cluster is alive: the scheduler binds pods, the kubelet runs them and finishes their graceful
deletion within a couple of sandbox seconds, and the deployment and replicaset controllers make
the objects a cascading delete reaches. A test that must change a pod's status at a moment of its
own choosing binds the pod to `ghost-node`, a node no kubelet runs, and reports the status itself
through pods/status. Waiting commands run in the background with `-v=6`, so a test changes state
only once kubectl's watch is open.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from tests.sandbox.kubectl.suite import MANIFESTS
from tests.support.background import Background
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

HOLD = "example.com/hold"
GHOST = "ghost-node"  # bound there, a pod is left alone: no kubelet runs it, no status, no events
STATUS = MANIFESTS / "b" / "status"
DELETE = MANIFESTS / "b" / "delete"


# -- objects ---------------------------------------------------------------------------------


def pod(
    name: str,
    *,
    node: str | None = None,
    labels: dict[str, str] | None = None,
    unscheduled: bool = False,
    never_ready: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels or {"app": "web"}}
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if never_ready:  # runs, but its readiness probe always fails
        container["readinessProbe"] = {"exec": {"command": ["false"]}, "periodSeconds": 1}
    spec: dict[str, Any] = {"containers": [container]}
    if node:
        spec["nodeName"] = node  # assigned at creation, as a DaemonSet or static pod is
    if unscheduled:
        spec["schedulerName"] = "no-scheduler"  # no such scheduler runs: it stays unbound
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create_all(kubectl: Kubectl, namespace: str, *objects: dict[str, Any]) -> None:
    kubectl("create", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(objects))


def set_running(kubectl: Kubectl, namespace: str, name: str, *, ready: bool = True) -> None:
    """What a kubelet would report for a started container, through pods/status (for pods on
    `GHOST`, whose status no kubelet writes)."""
    status = STATUS / ("ready.yaml" if ready else "not-ready.yaml")
    kubectl(
        "patch", "pod", name, "-n", namespace, "--subresource=status", "--patch-file", str(status)
    )


def running_pod(kubectl: Kubectl, namespace: str, name: str = "web") -> str:
    """A pod the kubelet on node-1 runs, once it reports it Ready."""
    create_all(kubectl, namespace, pod(name, node="node-1"))

    def ready() -> bool:
        status = kubectl.json("get", "pod", name, "-n", namespace).get("status") or {}
        return any(
            (c["type"], c["status"]) == ("Ready", "True") for c in status.get("conditions") or ()
        )

    eventually(ready, timeout=30, what=f"the kubelet runs pod {name}")
    return name


def find(kubectl: Kubectl, namespace: str, resource: str) -> dict[str, Any] | None:
    done = kubectl.run("get", resource, "-n", namespace, "-o", "json", check=False)
    if done.returncode and "(NotFound)" in done.stderr:
        return None
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def gone(kubectl: Kubectl, namespace: str, resource: str, *, timeout: float = 5) -> bool:
    """Whether the object disappears within `timeout`: garbage collection is asynchronous."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if find(kubectl, namespace, resource) is None:
            return True
        time.sleep(0.1)
    return False


def last_line(stderr: str) -> str:
    """kubectl's own message; client-go may log a watch it cut short at the deadline before it."""
    return stderr.splitlines()[-1] if stderr else ""


def names(kubectl: Kubectl, namespace: str, resources: str) -> list[str]:
    return kubectl("get", resources, "-n", namespace, "-o", "name").split()


def events_of(kubectl: Kubectl, namespace: str, name: str) -> list[tuple[str, str]]:
    """(reason, message) of the events about object `name`, oldest first."""
    listed = kubectl.json(
        "get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={name}"
    )["items"]
    listed.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return [(e["reason"], e["message"]) for e in listed]


# -- deleting pods ---------------------------------------------------------------------------


def test_delete_unscheduled_pod_is_immediate(shared_kubectl: Kubectl, namespace: str) -> None:
    create_all(shared_kubectl, namespace, pod("idle", unscheduled=True))

    out = shared_kubectl("delete", "pod", "idle", "-n", namespace, "--wait=false")

    assert out == f'pod "idle" deleted from {namespace} namespace\n'
    assert find(shared_kubectl, namespace, "pod/idle") is None, "no grace for an unscheduled pod"


def test_delete_running_pod_marks_it_terminating(
    shared_kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> None:
    name = running_pod(shared_kubectl, namespace)
    # The kubelet ends the pod within moments of the DELETE: watches see it Terminating.
    marks = background(
        "get",
        "pod",
        name,
        "-n",
        namespace,
        "--watch-only",
        "-o",
        "jsonpath={.metadata.deletionGracePeriodSeconds} {.metadata.deletionTimestamp}{'\\n'}",
    )
    table = background("get", "pod", name, "-n", namespace, "--watch-only", "--no-headers")
    for watcher in (marks, table):
        watcher.expect("watch=true", stream="stderr")

    out = shared_kubectl("delete", "pod", name, "-n", namespace, "--wait=false")

    assert out == f'pod "{name}" deleted from {namespace} namespace\n'
    grace, _, stamp = marks.expect(" ").partition(" ")
    assert (grace, bool(stamp.strip())) == ("30", True)
    assert table.expect(name).split()[2] == "Terminating"
    assert gone(shared_kubectl, namespace, f"pod/{name}"), "the kubelet never ended the pod"


def test_delete_waits_for_the_grace_period(
    shared_kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> None:
    name = running_pod(shared_kubectl, namespace)

    deleter = background("delete", "pod", name, "-n", namespace, "--grace-period=30")
    # The pod outlived its DELETE (Terminating), so kubectl watches for its end.
    deleter.expect("watch=true", stream="stderr")

    assert deleter.finish() == (0, f'pod "{name}" deleted from {namespace} namespace\n')
    assert find(shared_kubectl, namespace, f"pod/{name}") is None
    # Gone because the kubelet stopped its container, not because the DELETE removed it.
    assert ("Killing", "Stopping container app") in events_of(shared_kubectl, namespace, name)


def test_shorter_grace_period_speeds_up_termination(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    # On a node no kubelet runs, only the grace period ends a terminating pod, so the second
    # delete meets it still Terminating however slow the machine is.
    name = "web"
    create_all(shared_kubectl, namespace, pod(name, node=GHOST))
    set_running(shared_kubectl, namespace, name)
    shared_kubectl("delete", "pod", name, "-n", namespace, "--wait=false", "--grace-period=600")
    assert find(shared_kubectl, namespace, f"pod/{name}") is not None

    done = shared_kubectl.run(
        "delete", "pod", name, "-n", namespace, "--grace-period=1", "--timeout=20s", check=False
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert find(shared_kubectl, namespace, f"pod/{name}") is None


def test_force_delete_removes_running_pod_at_once(shared_kubectl: Kubectl, namespace: str) -> None:
    name = running_pod(shared_kubectl, namespace)

    done = shared_kubectl.run("delete", "pod", name, "-n", namespace, "--grace-period=0", "--force")

    assert done.stdout == f'pod "{name}" force deleted from {namespace} namespace\n'
    assert done.stderr.startswith(
        "Warning: Immediate deletion does not wait for confirmation "
        "that the running resource has been terminated."
    )
    assert find(shared_kubectl, namespace, f"pod/{name}") is None


# -- cascading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Owned:
    """A Deployment's namespace and what its controllers made: its ReplicaSet and their pods."""

    namespace: str
    replica_set: str
    pods: tuple[str, ...]


@pytest.fixture
def owned(shared_kubectl: Kubectl, namespace: str) -> Owned:
    """Deployment web -> ReplicaSet web-<hash> -> two pods, made by the real controllers."""
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}
    create_all(
        shared_kubectl,
        namespace,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec},
    )

    def made() -> Owned | None:
        replica_sets = shared_kubectl.json("get", "replicasets", "-n", namespace)["items"]
        pods = shared_kubectl.json("get", "pods", "-n", namespace)["items"]
        owners = {tuple(r["name"] for r in p["metadata"]["ownerReferences"]) for p in pods}
        if len(replica_sets) != 1 or len(pods) != 2:
            return None
        replica_set = replica_sets[0]["metadata"]["name"]
        assert owners == {(replica_set,)}, f"pods not all owned by {replica_set}: {owners}"
        return Owned(namespace, replica_set, tuple(sorted(p["metadata"]["name"] for p in pods)))

    found: Owned = eventually(made, timeout=30, what="deployment web's ReplicaSet and pods")
    return found


@pytest.mark.parametrize("cascade", ["background", "foreground"])
def test_cascading_delete_removes_dependents(
    shared_kubectl: Kubectl, owned: Owned, cascade: str
) -> None:
    ns = owned.namespace
    out = shared_kubectl("delete", "deployment", "web", "-n", ns, f"--cascade={cascade}")

    assert out == f'deployment.apps "web" deleted from {ns} namespace\n'
    assert find(shared_kubectl, ns, "deployment/web") is None
    dependents = [f"replicaset/{owned.replica_set}", *(f"pod/{name}" for name in owned.pods)]
    for dependent in dependents:
        assert gone(shared_kubectl, ns, dependent), f"{dependent} outlived its owner"


def test_orphan_delete_keeps_dependents_without_owner(
    shared_kubectl: Kubectl, owned: Owned
) -> None:
    ns = owned.namespace
    out = shared_kubectl("delete", "deployment", "web", "-n", ns, "--cascade=orphan")

    assert out == f'deployment.apps "web" deleted from {ns} namespace\n'
    assert find(shared_kubectl, ns, "deployment/web") is None
    replica_set = find(shared_kubectl, ns, f"replicaset/{owned.replica_set}")
    assert replica_set is not None
    assert "ownerReferences" not in replica_set["metadata"]
    for name in owned.pods:
        kept = find(shared_kubectl, ns, f"pod/{name}")
        assert kept is not None
        assert [r["name"] for r in kept["metadata"]["ownerReferences"]] == [owned.replica_set]


# -- finalizers and namespaces ---------------------------------------------------------------


def held_configmap(kubectl: Kubectl, namespace: str) -> None:
    kubectl("create", "-n", namespace, "-f", str(DELETE / "held.yaml"))


def release(kubectl: Kubectl, namespace: str) -> None:
    kubectl(
        "patch",
        "configmap",
        "held",
        "-n",
        namespace,
        "--type=json",
        "-p",
        '[{"op": "remove", "path": "/metadata/finalizers"}]',
    )


def test_finalizer_keeps_object_until_removed(shared_kubectl: Kubectl, namespace: str) -> None:
    held_configmap(shared_kubectl, namespace)

    shared_kubectl("delete", "configmap", "held", "-n", namespace, "--wait=false")

    terminating = find(shared_kubectl, namespace, "configmap/held")
    assert terminating is not None
    assert terminating["metadata"]["deletionTimestamp"]
    assert terminating["metadata"]["finalizers"] == [HOLD]
    release(shared_kubectl, namespace)
    assert gone(shared_kubectl, namespace, "configmap/held")


def test_delete_times_out_while_finalizer_remains(shared_kubectl: Kubectl, namespace: str) -> None:
    held_configmap(shared_kubectl, namespace)

    done = shared_kubectl.run(
        "delete", "configmap", "held", "-n", namespace, "--timeout=1s", check=False
    )

    assert done.returncode == 1
    assert last_line(done.stderr) == "error: timed out waiting for the condition on configmaps/held"
    release(shared_kubectl, namespace)


def test_delete_namespace_removes_everything_in_it(shared_kubectl: Kubectl, namespace: str) -> None:
    shared_kubectl("create", "-n", namespace, "-f", str(DELETE / "namespace-contents.yaml"))

    out = shared_kubectl("delete", "namespace", namespace, "--timeout=20s")

    assert out == f'namespace "{namespace}" deleted\n'
    refused = shared_kubectl.fails("get", "namespace", namespace)
    assert refused.stderr == (f'Error from server (NotFound): namespaces "{namespace}" not found\n')
    left = shared_kubectl(
        "get", "pods,configmaps,secrets,deployments", "-n", namespace, "-o", "name"
    )
    assert left == ""


# -- selecting what to delete ----------------------------------------------------------------


def test_delete_by_label_selector(shared_kubectl: Kubectl, namespace: str) -> None:
    create_all(
        shared_kubectl,
        namespace,
        pod("a-1", labels={"app": "a"}),
        pod("a-2", labels={"app": "a"}),
        pod("b-1", labels={"app": "b"}),
    )

    out = shared_kubectl("delete", "pods", "-l", "app=a", "-n", namespace)

    assert sorted(out.splitlines()) == [
        f'pod "a-{i}" deleted from {namespace} namespace' for i in (1, 2)
    ]
    assert names(shared_kubectl, namespace, "pods") == ["pod/b-1"]


def test_delete_all_empties_the_kind(shared_kubectl: Kubectl, namespace: str) -> None:
    create_all(
        shared_kubectl,
        namespace,
        pod("a-1"),
        pod("a-2"),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}},
    )

    out = shared_kubectl("delete", "pods", "--all", "-n", namespace)

    assert len(out.splitlines()) == 2
    done = shared_kubectl.run("get", "pods", "-n", namespace)
    assert (done.stdout, done.stderr) == ("", f"No resources found in {namespace} namespace.\n")
    assert "configmap/kept" in names(shared_kubectl, namespace, "configmaps")


@pytest.mark.parametrize(
    ("flags", "code", "stderr"),
    [
        pytest.param(
            (), 1, 'Error from server (NotFound): pods "ghost" not found\n', id="not-found"
        ),
        pytest.param(("--ignore-not-found",), 0, "", id="ignore-not-found"),
    ],
)
def test_delete_missing_object(
    shared_kubectl: Kubectl, namespace: str, flags: tuple[str, ...], code: int, stderr: str
) -> None:
    done = shared_kubectl.run("delete", "pod", "ghost", "-n", namespace, *flags, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (code, "", stderr)


# -- wait ------------------------------------------------------------------------------------


def test_wait_for_ready_returns_once_status_says_so(
    shared_kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> None:
    # On a node no kubelet runs, the test reports readiness itself, once kubectl watches.
    create_all(shared_kubectl, namespace, pod("web", node=GHOST))
    set_running(shared_kubectl, namespace, "web", ready=False)
    waiter = background(
        "wait",
        "--for=condition=Ready",
        "pod/web",
        "-n",
        namespace,
        "--timeout=20s",
    )
    waiter.expect("watch=true", stream="stderr")

    set_running(shared_kubectl, namespace, "web", ready=True)

    assert waiter.finish() == (0, "pod/web condition met\n")


def test_wait_for_delete_returns_once_object_is_gone(
    shared_kubectl: Kubectl, namespace: str, background: Callable[..., Background]
) -> None:
    held_configmap(shared_kubectl, namespace)
    shared_kubectl("delete", "configmap", "held", "-n", namespace, "--wait=false")
    waiter = background(
        "wait",
        "--for=delete",
        "configmap/held",
        "-n",
        namespace,
        "--timeout=20s",
    )
    waiter.expect("watch=true", stream="stderr")

    release(shared_kubectl, namespace)

    assert waiter.finish() == (0, "configmap/held condition met\n")


@pytest.mark.parametrize(
    ("condition", "resource"),
    [
        pytest.param("--for=condition=Ready", "pod/web", id="condition"),
        pytest.param("--for=condition=ready=true", "pod/web", id="condition-value"),
        pytest.param("--for=jsonpath={.status.phase}=Running", "pod/web", id="jsonpath"),
        pytest.param("--for=jsonpath={.spec.nodeName}=node-1", "pod/web", id="jsonpath-spec"),
        pytest.param("--for=create", "pod/web", id="create"),
    ],
)
def test_wait_met_at_once(
    shared_kubectl: Kubectl, namespace: str, condition: str, resource: str
) -> None:
    running_pod(shared_kubectl, namespace)

    out = shared_kubectl("wait", condition, resource, "-n", namespace, "--timeout=5s")

    assert out == f"{resource} condition met\n"


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param("--for=condition=Ready", id="condition"),
        pytest.param("--for=jsonpath={.status.phase}=Succeeded", id="jsonpath"),
        pytest.param("--for=delete", id="delete"),
    ],
)
def test_wait_times_out_with_kubectl_message(
    shared_kubectl: Kubectl, namespace: str, condition: str
) -> None:
    # Runs on node-1 but never passes readiness, never finishes, is never deleted.
    create_all(shared_kubectl, namespace, pod("web", node="node-1", never_ready=True))
    eventually(
        lambda: (
            shared_kubectl.json("get", "pod", "web", "-n", namespace)["status"].get("phase")
            == "Running"
        ),
        timeout=30,
        what="the kubelet runs pod web",
    )

    done = shared_kubectl.run(
        "wait", condition, "pod/web", "-n", namespace, "--timeout=1s", check=False
    )

    assert (done.returncode, done.stdout) == (1, "")
    assert last_line(done.stderr) == "error: timed out waiting for the condition on pods/web"
