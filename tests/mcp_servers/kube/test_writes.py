"""The kube server's write tools through the real MCP client, read back with real kubectl: each
does what it says, every one dry-runs first and shows the diff, and the guards hold (read-only,
delete confirmation, namespace allow-list, RBAC, Secret values)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

WRITE_TOOLS = {
    "apply", "patch", "scale", "set_image", "rollout_restart", "rollout_undo",
    "cordon", "uncordon", "taint", "delete",
}  # fmt: skip


def deployment(name: str, image: str = "nginx:1.27", replicas: int = 1) -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: web, image: "{image}"}}]
"""


def change(answer: dict[str, Any], path: str) -> dict[str, Any]:
    found = [c for c in answer["changes"] if c["path"] == path]
    assert found, f"no change at {path}: {answer['changes']}"
    return found[0]


def field(kubectl: Kubectl, namespace: str, what: str, jsonpath: str) -> str:
    return kubectl("get", what, "-n", namespace, "-o", f"jsonpath={jsonpath}")


@pytest.fixture
def web(kube: KubeTools, namespace: str) -> str:
    kube.ok("apply", manifest=deployment("web"), namespace=namespace)
    return "web"


@pytest.fixture
def node(shared_kubectl: Kubectl) -> Iterator[str]:
    name = shared_kubectl("get", "nodes", "-o", "jsonpath={.items[0].metadata.name}")
    yield name
    shared_kubectl("uncordon", name)
    shared_kubectl.run("taint", "node", name, "kubecrew-test-", check=False)


def test_apply_creates_then_updates_as_field_manager_kubecrew(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str
) -> None:
    created = kube.ok("apply", manifest=deployment("web"), namespace=namespace)
    [web] = created["objects"]
    assert web["created"] and web["applied"] and not web["dry_run"]
    assert change(web, "spec.replicas")["new"] == 1
    managers = field(
        shared_kubectl, namespace, "deploy/web", "{.metadata.managedFields[*].manager}"
    )
    assert "kubecrew" in managers.split()

    updated = kube.ok("apply", manifest=deployment("web", replicas=3), namespace=namespace)
    [web] = updated["objects"]
    assert not web["created"]
    assert change(web, "spec.replicas") == {"path": "spec.replicas", "old": 1, "new": 3}
    assert field(shared_kubectl, namespace, "deploy/web", "{.spec.replicas}") == "3"


def test_apply_refuses_the_whole_manifest_when_one_object_is_invalid(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str
) -> None:
    bad = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n"
    text = kube.fails("apply", manifest=deployment("web") + bad, namespace=namespace)
    assert "Bad_Name" in text or "not a valid" in text
    assert shared_kubectl.run("get", "deploy/web", "-n", namespace, check=False).returncode != 0


def test_apply_creates_a_namespace_and_what_lives_in_it_in_one_manifest(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str
) -> None:
    fresh = f"{namespace}-fresh"
    manifest = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: {fresh}}}\n"
        "data: {k: v}\n---\n"
        f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {fresh}}}\n"
    )
    preview = kube.ok("apply", manifest=manifest, dry_run=True)
    assert [o["object"]["kind"] for o in preview["objects"]] == ["ConfigMap", "Namespace"]
    assert "created by this manifest" in preview["objects"][0]["note"]
    assert shared_kubectl.run("get", "namespace", fresh, check=False).returncode != 0
    done = kube.ok("apply", manifest=manifest)
    assert all(o["applied"] and o["created"] for o in done["objects"])
    assert field(shared_kubectl, fresh, "configmap/c", "{.data.k}") == "v"


def test_dry_run_changes_nothing_but_returns_the_diff(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str
) -> None:
    preview = kube.ok("scale", name=web, replicas=5, namespace=namespace, dry_run=True)
    assert preview["dry_run"] and not preview["applied"]
    assert change(preview, "spec.replicas") == {"path": "spec.replicas", "old": 1, "new": 5}
    assert field(shared_kubectl, namespace, "deploy/web", "{.spec.replicas}") == "1"

    new = kube.ok("apply", manifest=deployment("api"), namespace=namespace, dry_run=True)
    assert new["objects"][0]["created"]
    assert shared_kubectl.run("get", "deploy/api", "-n", namespace, check=False).returncode != 0

    image = kube.ok(
        "set_image", name=web, container="web", image="nginx:1.28", namespace=namespace,
        dry_run=True,
    )  # fmt: skip
    path = "spec.template.spec.containers[0].image"
    assert change(image, path) == {"path": path, "old": "nginx:1.27", "new": "nginx:1.28"}
    images = field(shared_kubectl, namespace, "deploy/web", "{..image}")
    assert images == "nginx:1.27"


def test_scale_sets_the_replicas(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str
) -> None:
    kube.ok("scale", name=web, replicas=2, namespace=namespace)
    assert field(shared_kubectl, namespace, "deploy/web", "{.spec.replicas}") == "2"
    again = kube.ok("scale", name=web, replicas=2, namespace=namespace)
    assert again["changes"] == [] and "nothing to change" in again["note"]
    assert "cannot scale" in kube.fails("scale", kind="service", name="x", replicas=1,
                                         namespace=namespace)  # fmt: skip


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        ("strategic", {"metadata": {"labels": {"tier": "front"}}}),
        ("merge", '{"metadata": {"labels": {"tier": "front"}}}'),
        ("json", [{"op": "add", "path": "/metadata/labels/tier", "value": "front"}]),
    ],
    ids=["strategic", "merge-as-string", "json"],
)
def test_patch_applies_each_patch_type(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str, patch_type: str,
    patch: Any,
) -> None:  # fmt: skip
    done = kube.ok(
        "patch", kind="deploy", name=web, patch=patch, patch_type=patch_type, namespace=namespace
    )
    assert change(done, "metadata.labels.tier") == {
        "path": "metadata.labels.tier", "old": None, "new": "front",
    }  # fmt: skip
    assert field(shared_kubectl, namespace, "deploy/web", "{.metadata.labels.tier}") == "front"


def test_set_image_changes_one_container_and_names_the_real_ones_when_wrong(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str
) -> None:
    kube.ok("set_image", name=web, container="web", image="nginx:1.28", namespace=namespace)
    assert field(shared_kubectl, namespace, "deploy/web", "{..image}") == "nginx:1.28"
    text = kube.fails("set_image", name=web, container="app", image="x:1", namespace=namespace)
    assert "no container 'app'" in text and "web" in text
    assert "not a container image" in kube.fails(
        "set_image", name=web, container="web", image="x; rm -rf /", namespace=namespace
    )


def test_rollout_restart_stamps_the_pod_template(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str
) -> None:
    done = kube.ok("rollout_restart", name=web, namespace=namespace)
    [stamp] = [c for c in done["changes"] if "restartedAt" in c["path"]]
    annotation = "{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}"
    assert field(shared_kubectl, namespace, "deploy/web", annotation) == stamp["new"]


def test_rollout_undo_returns_to_the_previous_revision_and_to_a_named_one(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, web: str
) -> None:
    def revisions() -> int:
        names = shared_kubectl("get", "rs", "-n", namespace, "-o", "name").split()
        return len(names)

    eventually(lambda: revisions() == 1, what="the first ReplicaSet")
    kube.ok("set_image", name=web, container="web", image="nginx:1.28", namespace=namespace)
    eventually(lambda: revisions() == 2, what="the second ReplicaSet")

    preview = kube.ok("rollout_undo", name=web, namespace=namespace, dry_run=True)
    path = "spec.template.spec.containers[0].image"
    assert change(preview, path) == {"path": path, "old": "nginx:1.28", "new": "nginx:1.27"}
    assert field(shared_kubectl, namespace, "deploy/web", "{..image}") == "nginx:1.28"

    kube.ok("rollout_undo", name=web, namespace=namespace)
    assert field(shared_kubectl, namespace, "deploy/web", "{..image}") == "nginx:1.27"
    eventually(
        lambda: field(shared_kubectl, namespace, "deploy/web",
                      "{.metadata.annotations.deployment\\.kubernetes\\.io/revision}") == "3",
        what="revision 3",
    )  # fmt: skip
    kube.ok("rollout_undo", name=web, to_revision=2, namespace=namespace)
    assert field(shared_kubectl, namespace, "deploy/web", "{..image}") == "nginx:1.28"
    assert "unable to find revision 9" in kube.fails(
        "rollout_undo", name=web, to_revision=9, namespace=namespace
    )


def test_cordon_uncordon_and_taint_change_the_node(
    kube: KubeTools, shared_kubectl: Kubectl, node: str
) -> None:
    spec = lambda path: shared_kubectl("get", "node", node, "-o", f"jsonpath={path}")  # noqa: E731
    preview = kube.ok("cordon", node=node, dry_run=True)
    assert change(preview, "spec.unschedulable") == {
        "path": "spec.unschedulable", "old": None, "new": True,
    }  # fmt: skip
    assert spec("{.spec.unschedulable}") == ""
    kube.ok("cordon", node=node)
    assert spec("{.spec.unschedulable}") == "true"
    kube.ok("uncordon", node=node)
    assert spec("{.spec.unschedulable}") == ""

    kube.ok("taint", node=node, key="kubecrew-test", value="a", effect="NoSchedule")
    assert "kubecrew-test=a:NoSchedule" in shared_kubectl("describe", "node", node)
    again = kube.ok("taint", node=node, key="kubecrew-test", value="a", effect="NoSchedule")
    assert again["changes"] == []
    assert "overwrite=True" in kube.fails(
        "taint", node=node, key="kubecrew-test", value="b", effect="NoSchedule"
    )
    kube.ok("taint", node=node, key="kubecrew-test", remove=True)
    assert "kubecrew-test" not in spec("{.spec.taints}")
    assert "not found" in kube.fails("taint", node=node, key="kubecrew-test", remove=True)
    assert "not a qualified name" in kube.fails(
        "taint", node=node, key="bad key$(x)", effect="NoSchedule"
    )


def test_delete_removes_one_object_and_dry_run_keeps_it(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "configmap", "settings", "-n", namespace, "--from-literal=a=b")
    preview = kube.ok("delete", kind="configmap", name="settings", namespace=namespace,
                      dry_run=True)  # fmt: skip
    assert preview["changes"] == [{"path": ".", "old": "exists", "new": "deleted"}]
    assert shared_kubectl.run("get", "cm/settings", "-n", namespace, check=False).returncode == 0
    kube.ok("delete", kind="configmap", name="settings", namespace=namespace)
    assert shared_kubectl.run("get", "cm/settings", "-n", namespace, check=False).returncode != 0
    assert "not found" in kube.fails("delete", kind="cm", name="settings", namespace=namespace)


def test_delete_guard_refuses_namespaces_and_nodes_without_exact_confirm(
    kube: KubeTools, shared_kubectl: Kubectl, namespace: str, node: str
) -> None:
    for confirm in ("", namespace, f"namespaces/{namespace}", "yes"):
        text = kube.fails("delete", kind="namespace", name=namespace, confirm=confirm)
        assert f"confirm='namespace/{namespace}'" in text
    assert f"confirm='node/{node}'" in kube.fails("delete", kind="node", name=node)
    assert shared_kubectl.run("get", "namespace", namespace, check=False).returncode == 0
    done = kube.ok("delete", kind="namespace", name=namespace, confirm=f"namespace/{namespace}")
    assert done["applied"]
    eventually(
        lambda: (
            shared_kubectl.run("get", "ns", namespace, check=False).returncode != 0
            or "Terminating" in shared_kubectl("get", "ns", namespace)
        ),
        what="the namespace going away",
    )


def test_read_only_server_has_no_write_tools(shared_sandbox: Sandbox, kube: KubeTools) -> None:
    read_only = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig, read_only=True))
    assert WRITE_TOOLS.isdisjoint(t.name for t in read_only.tools())
    writable = {t.name: t for t in kube.tools()}
    assert set(writable) >= WRITE_TOOLS
    for name in WRITE_TOOLS:
        hints = writable[name].annotations
        assert hints is not None and hints.readOnlyHint is False, name
    assert writable["delete"].annotations.destructiveHint is True  # type: ignore[union-attr]
    assert writable["cordon"].annotations.destructiveHint is False  # type: ignore[union-attr]
    assert writable["apply"].annotations.idempotentHint is True  # type: ignore[union-attr]


def test_namespace_allow_list_refuses_writes_elsewhere(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str, web: str, node: str
) -> None:
    confined = KubeTools(
        KubeSettings(kubeconfig=shared_sandbox.kubeconfig, namespaces=("somewhere-else",))
    )
    assert "allow-list" in confined.fails("scale", name=web, replicas=4, namespace=namespace)
    manifest = deployment("api").replace("name: api,", f"name: api, namespace: {namespace},")
    assert "allow-list" in confined.fails("apply", manifest=manifest)
    assert "cluster-scoped" in confined.fails("cordon", node=node)
    assert field(shared_kubectl, namespace, "deploy/web", "{.spec.replicas}") == "1"
    assert shared_kubectl.run("get", "deploy/api", "-n", namespace, check=False).returncode != 0


def test_secret_values_never_appear_in_write_diffs(kube: KubeTools, namespace: str) -> None:
    value = "Very-Secret-Value-42"
    secret = f"""
apiVersion: v1
kind: Secret
metadata: {{name: db}}
stringData: {{password: "{value}"}}
"""
    encoded = base64.b64encode(value.encode()).decode()
    created = kube.call("apply", manifest=secret, namespace=namespace)
    rotated = kube.call(
        "patch", kind="secret", name="db", namespace=namespace, patch_type="merge",
        patch={"stringData": {"password": value.upper()}},
    )  # fmt: skip
    for answer in (created, rotated):
        assert not answer.error, answer.text
        for form in (value, value.upper(), encoded):
            assert form not in answer.everything
    [password] = [c for c in rotated.data["changes"] if c["path"] == "data.password"]
    assert "redacted" in password["new"]


def test_an_identity_without_rbac_gets_a_permission_error(
    nobody: KubeTools, namespace: str, web: str
) -> None:
    text = nobody.fails("scale", name=web, replicas=3, namespace=namespace)
    assert "permission denied" in text.lower()
