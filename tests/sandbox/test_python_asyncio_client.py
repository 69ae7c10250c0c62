"""kubernetes_asyncio against the sandbox: selectors, pagination, every patch type, watch resume
and 410. (It sends `watch=True` with a capital T, which the sandbox parses like Go's ParseBool.)"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.rest import ApiException
from kubernetes_asyncio.dynamic import DynamicClient

from sandbox.server import Options, Sandbox

Scenario = Callable[[client.ApiClient], Awaitable[Any]]


def run(kubeconfig: Path, scenario: Scenario) -> Any:
    async def main() -> Any:
        api = await config.new_client_from_config(str(kubeconfig))
        async with api:
            return await scenario(api)

    return asyncio.run(main())


def _deployment(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def test_selectors_and_pagination(shared_sandbox: Sandbox) -> None:
    async def scenario(api: client.ApiClient) -> tuple[list[str], list[str]]:
        core = client.CoreV1Api(api)
        await core.create_namespace({"metadata": {"name": "aio-list"}})
        for i in range(7):
            labels = {"tier": "web" if i % 2 else "db"}
            await core.create_namespaced_config_map(
                "aio-list", {"metadata": {"name": f"c{i}", "labels": labels}}
            )
        web = await core.list_namespaced_config_map("aio-list", label_selector="tier in (web)")
        pages: list[str] = []
        token = None
        while True:
            page = await core.list_namespaced_config_map(
                "aio-list", label_selector="tier", limit=3, _continue=token
            )
            pages += [i.metadata.name for i in page.items]
            token = page.metadata._continue
            if not token:
                return [i.metadata.name for i in web.items], pages

    web, paged = run(shared_sandbox.kubeconfig, scenario)
    assert web == ["c1", "c3", "c5"]
    assert paged == [f"c{i}" for i in range(7)]


@pytest.mark.parametrize(
    ("patch", "content_type"),
    [
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}},
            "application/strategic-merge-patch+json",
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}},
            "application/merge-patch+json",
        ),
        (
            [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/image",
                    "value": "nginx:2",
                }
            ],
            "application/json-patch+json",
        ),
    ],
    ids=["strategic-merge", "merge", "json-patch"],
)
def test_every_patch_type(shared_sandbox: Sandbox, patch: Any, content_type: str) -> None:
    name = "aio-" + content_type.split("/")[1].split("+")[0]

    async def scenario(api: client.ApiClient) -> str:
        apps = client.AppsV1Api(api)
        await apps.create_namespaced_deployment("default", _deployment(name))
        patched = await apps.patch_namespaced_deployment(
            name, "default", patch, _content_type=content_type
        )
        return str(patched.spec.template.spec.containers[0].image)

    assert run(shared_sandbox.kubeconfig, scenario) == "nginx:2"


def test_watch_resumes_and_expired_versions_are_gone(tmp_path: Path) -> None:
    async def scenario(api: client.ApiClient) -> tuple[list[str], int]:
        core = client.CoreV1Api(api)
        start = (await core.list_namespaced_config_map("default")).metadata.resource_version
        await core.create_namespaced_config_map("default", {"metadata": {"name": "w"}})
        await core.delete_namespaced_config_map("w", "default")
        seen = []
        async for event in watch.Watch().stream(
            core.list_namespaced_config_map, "default", resource_version=start, timeout_seconds=1
        ):
            seen.append(event["type"])
        for i in range(40):  # twice the history kept: `start` falls out of it
            await core.create_namespaced_config_map("default", {"metadata": {"name": f"x{i}"}})
        try:
            _ = [
                event
                async for event in watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "default",
                    resource_version=start,
                    timeout_seconds=1,
                )
            ]
        except ApiException as gone:
            return seen, gone.status
        return seen, 200

    with Sandbox(Options(home=tmp_path, history=20)) as small:
        # The nodes' first heartbeats write at start; after them, only a Lease renewal per node
        # every 10 s writes on its own, far fewer than 20 changes while the scenario runs.
        small.call(lambda cluster: cluster.control.settle())
        seen, status = run(small.kubeconfig, scenario)
    assert seen == ["ADDED", "DELETED"]
    assert status == 410


def test_dynamic_client_discovers_and_lists(shared_sandbox: Sandbox) -> None:
    async def scenario(api: client.ApiClient) -> tuple[list[str], str]:
        dyn = await DynamicClient(api)
        nodes = await dyn.resources.get(api_version="v1", kind="Node")
        listed = await dyn.get(nodes)
        deployments = await dyn.resources.get(api_version="apps/v1", kind="Deployment")
        made = await dyn.create(deployments, body=_deployment("aio-dynamic"), namespace="default")
        return [n.metadata.name for n in listed.items], str(made.metadata.uid)

    names, uid = run(shared_sandbox.kubeconfig, scenario)
    assert names == ["node-1", "node-2", "node-3"]
    assert uid
