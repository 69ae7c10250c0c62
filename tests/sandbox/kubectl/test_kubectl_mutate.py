"""kubectl changing live objects in the sandbox: patch (strategic, merge, JSON), optimistic
concurrency, label and annotate, scale with its precondition, and the `set` commands.

Each test gets a two-container Deployment `web` in its own namespace of the module's shared
sandbox, and checks both what kubectl prints and what the sandbox then stores.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

CONFLICT = (
    'Operation cannot be fulfilled on deployments.apps "web": the object has been '
    "modified; please apply your changes to the latest version and try again"
)


def workload(kind: str, name: str, *, replicas: int = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx:1.25"},
                    {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "infinity"]},
                ]
            },
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": spec,
    }


@pytest.fixture
def web(shared_kubectl: Kubectl, namespace: str) -> str:
    """Namespace holding Deployment `web` (2 replicas; containers web nginx:1.25, sidecar),
    rolled out, so its controller has stopped writing its status when the test reads it."""
    shared_kubectl(
        "create", "-n", namespace, "-f", "-", input=json.dumps(workload("Deployment", "web"))
    )
    shared_kubectl("rollout", "status", "-n", namespace, "deployment/web", "--timeout=60s")
    return namespace


def get(kubectl: Kubectl, namespace: str, resource: str = "deployment/web") -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json("get", resource, "-n", namespace)
    return found


def containers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["name"], c["image"]) for c in obj["spec"]["template"]["spec"]["containers"]]


# -- patch -----------------------------------------------------------------------------------


def _template_patch(*items: dict[str, str]) -> str:
    return json.dumps({"spec": {"template": {"spec": {"containers": list(items)}}}})


@pytest.mark.parametrize(
    ("flags", "patch", "expected", "replicas"),
    [
        pytest.param(
            (),
            _template_patch({"name": "sidecar", "image": "busybox:1.37"}),
            [("web", "nginx:1.25"), ("sidecar", "busybox:1.37")],
            2,
            id="strategic-merges-container-by-name",
        ),
        pytest.param(
            ("--type=merge",),
            _template_patch({"name": "web", "image": "nginx:1.27"}),
            [("web", "nginx:1.27")],
            2,
            id="merge-replaces-the-list",
        ),
        pytest.param(
            ("--type=json",),
            json.dumps(
                [
                    {
                        "op": "replace",
                        "path": "/spec/template/spec/containers/1/image",
                        "value": "busybox:1.37",
                    },
                    {"op": "replace", "path": "/spec/replicas", "value": 3},
                ]
            ),
            [("web", "nginx:1.25"), ("sidecar", "busybox:1.37")],
            3,
            id="json-patch-ops",
        ),
    ],
)
def test_patch_types_change_the_deployment(
    shared_kubectl: Kubectl,
    web: str,
    flags: tuple[str, ...],
    patch: str,
    expected: list[tuple[str, str]],
    replicas: int,
) -> None:
    before = get(shared_kubectl, web)

    out = shared_kubectl("patch", "deployment", "web", "-n", web, *flags, "-p", patch)

    assert out == "deployment.apps/web patched\n"
    after = get(shared_kubectl, web)
    assert containers(after) == expected
    assert after["spec"]["replicas"] == replicas
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1


def test_patch_that_changes_nothing_says_so(shared_kubectl: Kubectl, web: str) -> None:
    before = get(shared_kubectl, web)

    out = shared_kubectl(
        "patch",
        "deployment",
        "web",
        "-n",
        web,
        "-p",
        _template_patch({"name": "web", "image": "nginx:1.25"}),
    )

    assert out == "deployment.apps/web patched (no change)\n"
    after = get(shared_kubectl, web)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_patch_with_stale_resource_version_conflicts(shared_kubectl: Kubectl, web: str) -> None:
    stale = get(shared_kubectl, web)["metadata"]["resourceVersion"]
    shared_kubectl("label", "deployment", "web", "-n", web, "touched=yes")

    refused = shared_kubectl.fails(
        "patch",
        "deployment",
        "web",
        "-n",
        web,
        "--type=merge",
        "-p",
        json.dumps({"metadata": {"resourceVersion": stale}, "spec": {"replicas": 7}}),
    )

    assert refused.stderr == f"Error from server (Conflict): {CONFLICT}\n"
    assert get(shared_kubectl, web)["spec"]["replicas"] == 2


def test_replace_with_stale_copy_conflicts_like_edit(shared_kubectl: Kubectl, web: str) -> None:
    edited = get(shared_kubectl, web)  # what `kubectl edit` opens in the editor
    shared_kubectl("scale", "deployment", "web", "-n", web, "--replicas=3")  # someone else
    edited["spec"]["replicas"] = 9

    refused = shared_kubectl.fails("replace", "-n", web, "-f", "-", input=json.dumps(edited))

    assert refused.stderr == (
        f'Error from server (Conflict): error when replacing "STDIN": {CONFLICT}\n'
    )
    assert get(shared_kubectl, web)["spec"]["replicas"] == 3


def test_replace_with_current_copy_succeeds(shared_kubectl: Kubectl, web: str) -> None:
    current = get(shared_kubectl, web)
    current["spec"]["replicas"] = 4

    out = shared_kubectl("replace", "-n", web, "-f", "-", input=yaml.safe_dump(current))

    assert out == "deployment.apps/web replaced\n"
    assert get(shared_kubectl, web)["spec"]["replicas"] == 4


# -- label and annotate ----------------------------------------------------------------------


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict(obj["metadata"].get("labels") or {})


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return dict(obj["metadata"].get("annotations") or {})


METADATA_COMMANDS = [
    pytest.param(
        "label",
        "labeled",
        "unlabeled",
        _labels,
        "error: 'owner' already has a value (team-a), and --overwrite is false\n",
        id="label",
    ),
    pytest.param(
        "annotate",
        "annotated",
        "annotated",
        _annotations,
        "error: --overwrite is false but found the following declared annotation(s): "
        "'owner' already has a value (team-a)\n",
        id="annotate",
    ),
]


@pytest.mark.parametrize(("command", "done", "removed", "read", "refusal"), METADATA_COMMANDS)
def test_label_and_annotate_add_overwrite_and_remove(
    shared_kubectl: Kubectl,
    web: str,
    command: str,
    done: str,
    removed: str,
    read: Callable[[dict[str, Any]], dict[str, str]],
    refusal: str,
) -> None:
    def run(*args: str) -> str:
        return shared_kubectl(command, "deployment", "web", "-n", web, *args)

    assert run("owner=team-a") == f"deployment.apps/web {done}\n"
    assert read(get(shared_kubectl, web))["owner"] == "team-a"

    refused = shared_kubectl.fails(command, "deployment", "web", "-n", web, "owner=team-b")
    assert refused.stderr == refusal
    assert read(get(shared_kubectl, web))["owner"] == "team-a"

    assert run("owner=team-b", "--overwrite") == f"deployment.apps/web {done}\n"
    assert read(get(shared_kubectl, web))["owner"] == "team-b"

    assert run("owner-") == f"deployment.apps/web {removed}\n"
    assert "owner" not in read(get(shared_kubectl, web))


def test_label_selects_objects_afterwards(shared_kubectl: Kubectl, web: str) -> None:
    shared_kubectl("label", "deployment", "web", "-n", web, "tier=frontend")

    selected = shared_kubectl("get", "deployments", "-n", web, "-l", "tier=frontend", "-o", "name")
    excluded = shared_kubectl("get", "deployments", "-n", web, "-l", "tier!=frontend", "-o", "name")

    assert (selected, excluded) == ("deployment.apps/web\n", "")


# -- scale -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "resource", "printed"),
    [
        pytest.param("Deployment", "deployment/web", "deployment.apps/web", id="deployment"),
        pytest.param("StatefulSet", "statefulset/web", "statefulset.apps/web", id="statefulset"),
        pytest.param("ReplicaSet", "replicaset/web", "replicaset.apps/web", id="replicaset"),
    ],
)
def test_scale_sets_replicas(
    shared_kubectl: Kubectl, namespace: str, kind: str, resource: str, printed: str
) -> None:
    shared_kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(workload(kind, "web")))

    out = shared_kubectl("scale", resource, "-n", namespace, "--replicas=5")

    assert out == f"{printed} scaled\n"
    assert get(shared_kubectl, namespace, resource)["spec"]["replicas"] == 5
    scale = json.loads(shared_kubectl("get", "--raw", _scale_path(namespace, resource)))
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 5)


def _scale_path(namespace: str, resource: str) -> str:
    kind, name = resource.split("/")
    return f"/apis/apps/v1/namespaces/{namespace}/{kind}s/{name}/scale"


def test_scale_refuses_when_current_replicas_differ(shared_kubectl: Kubectl, web: str) -> None:
    refused = shared_kubectl.fails(
        "scale", "deployment/web", "-n", web, "--current-replicas=3", "--replicas=5"
    )

    assert refused.stderr == "error: Expected replicas to be 3, was 2\n"
    assert get(shared_kubectl, web)["spec"]["replicas"] == 2


def test_scale_proceeds_when_current_replicas_match(shared_kubectl: Kubectl, web: str) -> None:
    out = shared_kubectl(
        "scale", "deployment/web", "-n", web, "--current-replicas=2", "--replicas=5"
    )

    assert out == "deployment.apps/web scaled\n"
    assert get(shared_kubectl, web)["spec"]["replicas"] == 5


# -- set image / resources / env -------------------------------------------------------------


def _container(obj: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        c for c in obj["spec"]["template"]["spec"]["containers"] if c["name"] == name
    )
    return found


@pytest.mark.parametrize(
    ("args", "printed", "field", "value"),
    [
        pytest.param(
            ("image", "deployment/web", "web=nginx:1.27"),
            "image updated",
            "image",
            "nginx:1.27",
            id="image",
        ),
        pytest.param(
            (
                "resources",
                "deployment/web",
                "-c",
                "web",
                "--limits=cpu=200m,memory=256Mi",
                "--requests=cpu=100m,memory=128Mi",
            ),
            "resource requirements updated",
            "resources",
            {
                "limits": {"cpu": "200m", "memory": "256Mi"},
                "requests": {"cpu": "100m", "memory": "128Mi"},
            },
            id="resources",
        ),
        pytest.param(
            ("env", "deployment/web", "-c", "web", "MODE=prod", "RETRIES=3"),
            "env updated",
            "env",
            [{"name": "MODE", "value": "prod"}, {"name": "RETRIES", "value": "3"}],
            id="env",
        ),
    ],
)
def test_set_changes_one_container_only(
    shared_kubectl: Kubectl, web: str, args: tuple[str, ...], printed: str, field: str, value: Any
) -> None:
    out = shared_kubectl("set", *args, "-n", web)

    assert out == f"deployment.apps/web {printed}\n"
    after = get(shared_kubectl, web)
    assert _container(after, "web")[field] == value
    sidecar = _container(after, "sidecar")
    assert sidecar["image"] == "busybox:1.36"
    assert "env" not in sidecar and sidecar.get("resources") in (None, {})


def test_set_env_removes_a_variable(shared_kubectl: Kubectl, web: str) -> None:
    shared_kubectl("set", "env", "deployment/web", "-n", web, "-c", "web", "MODE=prod", "KEEP=1")

    out = shared_kubectl("set", "env", "deployment/web", "-n", web, "-c", "web", "MODE-")

    assert out == "deployment.apps/web env updated\n"
    assert _container(get(shared_kubectl, web), "web")["env"] == [{"name": "KEEP", "value": "1"}]
    listed = shared_kubectl("set", "env", "deployment/web", "-n", web, "--list")
    assert "KEEP=1" in listed.splitlines() and "MODE=prod" not in listed
