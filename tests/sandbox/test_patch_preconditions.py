"""A resourceVersion a patch sets is a precondition, whatever the patch type (the official
client sends a list body as a JSON patch, a dict as a strategic merge patch)."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from sandbox.server import Sandbox


@pytest.mark.parametrize(
    "stale_patch",
    [
        pytest.param(
            lambda rv: [
                {"op": "replace", "path": "/metadata/resourceVersion", "value": rv},
                {"op": "replace", "path": "/data/a", "value": "3"},
            ],
            id="json-patch",
        ),
        pytest.param(
            lambda rv: {"metadata": {"resourceVersion": rv}, "data": {"a": "3"}},
            id="strategic-merge-patch",
        ),
    ],
)
def test_a_patch_with_a_stale_resource_version_is_a_conflict(
    shared_sandbox: Sandbox, stale_patch: Any
) -> None:
    with kubernetes.config.new_client_from_config(str(shared_sandbox.kubeconfig)) as api:
        core = client.CoreV1Api(api)
        name = f"rv-{len(core.list_namespaced_config_map('default').items)}"
        body = {"metadata": {"name": name}, "data": {"a": "1"}}
        first = core.create_namespaced_config_map("default", body)
        core.patch_namespaced_config_map(name, "default", {"data": {"a": "2"}})
        with pytest.raises(ApiException) as refused:
            core.patch_namespaced_config_map(
                name, "default", stale_patch(first.metadata.resource_version)
            )
        assert refused.value.status == 409
        assert core.read_namespaced_config_map(name, "default").data == {"a": "2"}
        current = core.read_namespaced_config_map(name, "default").metadata.resource_version
        done = core.patch_namespaced_config_map(name, "default", stale_patch(current))
        assert done.data == {"a": "3"}
