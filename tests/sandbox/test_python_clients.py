"""The official Python clients (`kubernetes`, `kubernetes_asyncio`) against the sandbox over HTTPS:
CRUD, selectors, pagination, watch with resume and 410, every patch type, the dynamic client."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import kubernetes
import kubernetes_asyncio
import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

from sandbox.server import Options, Sandbox


@pytest.fixture(scope="module")
def api(shared_sandbox: Sandbox) -> Iterator[client.ApiClient]:
    with kubernetes.config.new_client_from_config(str(shared_sandbox.kubeconfig)) as api_client:
        yield api_client


@pytest.fixture
def ns(api: client.ApiClient, request: pytest.FixtureRequest) -> str:
    name = "py-" + request.node.name.lower().replace("_", "-").replace("[", "-").strip("]")[:40]
    name = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in name).strip("-")
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    return name


def _deployment(name: str, replicas: int = 1, image: str = "nginx:1.27") -> dict[str, object]:
    return {
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": image, "ports": [{"containerPort": 80}]}
                    ]
                },
            },
        },
    }


def test_configmap_crud_round_trip(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    created = core.create_namespaced_config_map(
        ns, {"metadata": {"name": "cm1"}, "data": {"k": "v"}}
    )
    assert created.metadata.uid and created.metadata.resource_version
    created.data["k"] = "v2"
    replaced = core.replace_namespaced_config_map("cm1", ns, created)
    assert replaced.data == {"k": "v2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    core.delete_namespaced_config_map("cm1", ns)
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("cm1", ns)
    assert missing.value.status == 404


def test_stale_resource_version_conflicts(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    first = core.create_namespaced_config_map(ns, {"metadata": {"name": "c"}, "data": {"a": "1"}})
    core.patch_namespaced_config_map("c", ns, {"data": {"a": "2"}})
    first.data["a"] = "3"
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("c", ns, first)
    assert conflict.value.status == 409
    assert "the object has been modified" in conflict.value.body


def test_create_twice_is_already_exists(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, {"metadata": {"name": "dup"}})
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "dup"}})
    assert exists.value.status == 409
    status = json.loads(exists.value.body)
    assert (status["reason"], status["message"]) == (
        "AlreadyExists",
        'configmaps "dup" already exists',
    )


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tier=web", ["a", "b"]),
        ("tier!=web", ["c", "d"]),
        ("tier in (db,cache)", ["c"]),
        ("tier notin (web)", ["c", "d"]),
        ("tier", ["a", "b", "c"]),
        ("!tier", ["d"]),
        ("tier=web,zone=east", ["a"]),
    ],
    ids=["equals", "not-equals", "in", "notin", "exists", "not-exists", "and"],
)
def test_list_with_label_selectors(
    api: client.ApiClient, ns: str, selector: str, expected: list[str]
) -> None:
    core = client.CoreV1Api(api)
    labels = {
        "a": {"tier": "web", "zone": "east"},
        "b": {"tier": "web"},
        "c": {"tier": "db"},
        "d": {},
    }
    for name, lbls in labels.items():
        core.create_namespaced_config_map(ns, {"metadata": {"name": name, "labels": lbls}})
    found = core.list_namespaced_config_map(ns, label_selector=selector)
    assert [i.metadata.name for i in found.items] == expected


def test_list_with_field_selector(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    for name in ("x", "y"):
        core.create_namespaced_config_map(ns, {"metadata": {"name": name}})
    found = core.list_namespaced_config_map(ns, field_selector="metadata.name!=x")
    assert [i.metadata.name for i in found.items] == ["y"]


def test_pagination_walks_every_item_once(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    names = [f"cm-{i:02d}" for i in range(23)]
    for name in names:
        core.create_namespaced_config_map(ns, {"metadata": {"name": name}})
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map(ns, limit=10, _continue=token)
        pages += 1
        seen += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 23 - len(seen)
    assert seen == names
    assert pages == 3


def test_watch_streams_changes_and_resumes(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    start = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespace({"metadata": {"name": f"{ns}-next-door"}})
    core.create_namespaced_config_map(f"{ns}-next-door", {"metadata": {"name": "elsewhere"}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "w"}, "data": {"n": "1"}})
    core.patch_namespaced_config_map("w", ns, {"data": {"n": "2"}})
    core.delete_namespaced_config_map("w", ns)
    events = [
        (e["type"], e["object"].metadata.name, (e["object"].data or {}).get("n"))
        for e in watch.Watch().stream(
            core.list_namespaced_config_map, ns, resource_version=start, timeout_seconds=1
        )
    ]
    assert events == [("ADDED", "w", "1"), ("MODIFIED", "w", "2"), ("DELETED", "w", "2")]  # only ns


def test_watch_sees_live_changes(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)

    def later() -> None:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "live"}})

    timer = threading.Timer(0.3, later)
    timer.start()
    stream = watch.Watch()
    for event in stream.stream(core.list_namespaced_config_map, ns, timeout_seconds=5):
        if event["object"].metadata.name == "live":
            assert event["type"] == "ADDED"
            stream.stop()
    timer.join()


def test_watch_from_expired_resource_version_is_gone(tmp_path: Path) -> None:
    with (
        Sandbox(Options(home=tmp_path, history=5)) as small,
        kubernetes.config.new_client_from_config(str(small.kubeconfig)) as api_client,
    ):
        core = client.CoreV1Api(api_client)
        old = core.list_namespaced_config_map("default").metadata.resource_version
        for i in range(10):
            core.create_namespaced_config_map("default", {"metadata": {"name": f"c{i}"}})
        with pytest.raises(ApiException) as gone:
            list(
                watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "default",
                    resource_version=old,
                    timeout_seconds=2,
                )
            )
        assert gone.value.status == 410


@pytest.mark.parametrize(
    ("patch", "content_type"),
    [
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}},
            None,
        ),
        (
            [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/image",
                    "value": "nginx:2",
                }
            ],
            None,
        ),
        (
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "web",
                                    "image": "nginx:2",
                                    "ports": [{"containerPort": 80}],
                                }
                            ]
                        }
                    }
                }
            },
            "application/merge-patch+json",
        ),
    ],
    ids=["strategic-merge", "json-patch", "merge-patch"],
)
def test_patch_types_change_the_image(
    api: client.ApiClient, ns: str, patch: object, content_type: str | None
) -> None:
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment(ns, _deployment("web"))
    kwargs = {"_content_type": content_type} if content_type else {}
    patched = apps.patch_namespaced_deployment("web", ns, patch, **kwargs)
    containers = patched.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [("web", "nginx:2")]
    assert containers[0].ports[0].container_port == 80
    assert patched.metadata.generation == 2


def test_strategic_merge_keeps_other_containers(api: client.ApiClient, ns: str) -> None:
    apps = client.AppsV1Api(api)
    body = _deployment("two")
    body["spec"]["template"]["spec"]["containers"].append(  # type: ignore[index]
        {"name": "sidecar", "image": "busybox"}
    )
    apps.create_namespaced_deployment(ns, body)
    patched = apps.patch_namespaced_deployment(
        "two",
        ns,
        {
            "spec": {
                "template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox:2"}]}}
            }
        },
    )
    images = {c.name: c.image for c in patched.spec.template.spec.containers}
    assert images == {"web": "nginx:1.27", "sidecar": "busybox:2"}


def test_scale_subresource(api: client.ApiClient, ns: str) -> None:
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment(ns, _deployment("sc", replicas=2))
    scale = apps.patch_namespaced_deployment_scale("sc", ns, {"spec": {"replicas": 5}})
    assert scale.spec.replicas == 5
    assert apps.read_namespaced_deployment("sc", ns).spec.replicas == 5


def test_dynamic_client_server_side_apply(api: client.ApiClient, ns: str) -> None:
    dyn = dynamic.DynamicClient(api)
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    body = {"apiVersion": "apps/v1", "kind": "Deployment", **_deployment("ssa", replicas=2)}
    body["metadata"]["namespace"] = ns  # type: ignore[index]
    applied = deployments.server_side_apply(body=body, field_manager="py-test", namespace=ns)
    assert applied.spec.replicas == 2
    managers = [m["manager"] for m in applied.metadata.managedFields]
    assert managers == ["py-test"]
    listed = deployments.get(namespace=ns, label_selector="app=ssa")
    assert [i.metadata.name for i in listed.items] == ["ssa"]


def test_errors_are_kubernetes_status_objects(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as invalid:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "Not_Valid"}})
    assert invalid.value.status == 422
    status = json.loads(invalid.value.body)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "metadata.name"


def test_asyncio_client_crud_and_watch(shared_sandbox: Sandbox) -> None:
    async def scenario() -> list[tuple[str, str]]:
        api_client = await kubernetes_asyncio.config.new_client_from_config(
            str(shared_sandbox.kubeconfig)
        )
        async with api_client:
            core = kubernetes_asyncio.client.CoreV1Api(api_client)
            await core.create_namespace({"metadata": {"name": "py-asyncio"}})
            start = (await core.list_namespaced_config_map("py-asyncio")).metadata.resource_version
            await core.create_namespaced_config_map("py-asyncio", {"metadata": {"name": "a"}})
            await core.delete_namespaced_config_map("a", "py-asyncio")
            seen = []
            stream = kubernetes_asyncio.watch.Watch()
            async for event in stream.stream(
                core.list_namespaced_config_map,
                "py-asyncio",
                resource_version=start,
                timeout_seconds=1,
            ):
                seen.append((event["type"], event["object"].metadata.name))
            return seen

    assert asyncio.run(scenario()) == [("ADDED", "a"), ("DELETED", "a")]


def test_dry_run_all_changes_nothing_on_any_write_verb(api: client.ApiClient, ns: str) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map(ns, {"metadata": {"name": "kept"}, "data": {"a": "1"}})
    before = core.read_namespaced_config_map("kept", ns).metadata.resource_version

    made = core.create_namespaced_config_map(ns, {"metadata": {"name": "ghost"}}, dry_run="All")
    patched = core.patch_namespaced_config_map("kept", ns, {"data": {"a": "2"}}, dry_run="All")
    current = core.read_namespaced_config_map("kept", ns)
    current.data["a"] = "3"
    replaced = core.replace_namespaced_config_map("kept", ns, current, dry_run="All")
    core.delete_namespaced_config_map("kept", ns, dry_run="All")

    assert made.metadata.name == "ghost" and patched.data == {"a": "2"}
    assert replaced.data == {"a": "3"}
    after = core.read_namespaced_config_map("kept", ns)
    assert (after.data, after.metadata.resource_version) == ({"a": "1"}, before)
    names = [i.metadata.name for i in core.list_namespaced_config_map(ns).items]
    assert "ghost" not in names
