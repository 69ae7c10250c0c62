"""Finding 4: the policy gate judged the patch document, not the change it makes.

Each call here got a verdict of allow before: the document names no replica count, or names it
in a way a reader of documents does not count, yet the Deployment ends below the shop's minimum
of 3; an owner reference hands the Deployment to a Job's garbage collection; a namespace delete
takes every workload in it; an image comes from a registry the ImagePolicy does not allow. The
gate (the kube server's, over the real MCP client, on a sandbox) must refuse each of them and
leave the cluster as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import PolicySettings
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.policy.server import build
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer
from tests.support.policies import POLICIES
from tests.support.shop import WEB

MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
REGISTRIES = "ImagePolicy org-registries / rule allowed-registries"
WEB_SPEC = {
    "replicas": 1,
    "selector": {"matchLabels": {"app": "web"}},
    "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    },
}

# (patch_type, patch): every one of them leaves web with fewer than 3 replicas.
DOWNSCALES: dict[str, tuple[str, Any]] = {
    "json-remove": ("json", [{"op": "remove", "path": "/spec/replicas"}]),
    "merge-null": ("merge", {"spec": {"replicas": None}}),
    "json-replace-spec": ("json", [{"op": "replace", "path": "/spec", "value": WEB_SPEC}]),
    "json-copy-generation": (
        "json",
        [{"op": "copy", "from": "/metadata/generation", "path": "/spec/replicas"}],
    ),
    "merge-float": ("merge", {"spec": {"replicas": 1.0}}),
    "merge-string": ("merge", {"spec": {"replicas": "1"}}),
    "strategic-string": ("strategic", {"spec": {"replicas": "1"}}),
}


def propose(store: Path, **arguments: Any) -> dict[str, Any]:
    """`propose` on the policy server sharing the gate's store, as the dev-team agent."""
    settings = PolicySettings(policies=(POLICIES,), store=str(store), agent="dev-team")

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            found: dict[str, Any] = answer(await session.call_tool("propose", arguments))
            return found

    return anyio.run(go)


@pytest.fixture
def shop(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> KubeTools:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    settings = KubeSettings(
        kubeconfig=sandbox.kubeconfig,
        policies=(POLICIES,),
        policy_store=str(tmp_path / "store.sqlite"),
        agent="dev-team",
    )
    return KubeTools(settings)


def web(kubectl: Kubectl) -> dict[str, Any]:
    found: dict[str, Any] = kubectl.json("get", "deploy/web", "-n", "shop")
    return found


@pytest.mark.parametrize("patch_type, patch", DOWNSCALES.values(), ids=DOWNSCALES.keys())
def test_a_patch_that_scales_below_the_minimum_is_refused_however_it_is_written(
    shop: KubeTools, kubectl: Kubectl, patch_type: str, patch: Any
) -> None:
    refused = shop.fails(
        "patch", kind="deployment", name="web", namespace="shop",
        patch=json.dumps(patch), patch_type=patch_type,
    )  # fmt: skip
    assert MIN_REPLICAS in refused, refused
    assert web(kubectl)["spec"]["replicas"] == 5


def test_handing_a_deployment_to_a_jobs_garbage_collection_is_judged_as_its_delete(
    shop: KubeTools, kubectl: Kubectl
) -> None:
    kubectl("create", "job", "short", "-n", "shop", "--image=busybox", "--", "true")
    job = kubectl.json("get", "job/short", "-n", "shop")["metadata"]
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "short", "uid": job["uid"]}
    patch = {"metadata": {"ownerReferences": [owner]}}
    refused = shop.fails(
        "patch", kind="deployment", name="web", namespace="shop", patch=json.dumps(patch),
        patch_type="merge",
    )  # fmt: skip
    assert "delete Deployment shop/web" in refused and MIN_REPLICAS in refused, refused
    assert "ChangePolicy shop-changes / rule deletes" in refused
    assert "ownerReferences" not in web(kubectl)["metadata"]


def test_deleting_a_namespace_is_judged_by_the_rules_for_what_it_holds(
    shop: KubeTools, kubectl: Kubectl
) -> None:
    refused = shop.fails("delete", kind="namespace", name="shop")
    assert "delete Deployment shop/web" in refused and MIN_REPLICAS in refused, refused
    assert kubectl.json("get", "namespace/shop")["metadata"].get("deletionTimestamp") is None


def test_an_image_from_a_registry_the_image_policy_does_not_allow_is_refused(
    shop: KubeTools, kubectl: Kubectl
) -> None:
    refused = shop.fails(
        "set_image", name="web", container="web", image="evil.example.com/miner:latest",
        namespace="shop",
    )  # fmt: skip
    assert REGISTRIES in refused and "evil.example.com/miner" in refused, refused
    sneaked = {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.27"},
        {"name": "side", "image": "evil.example.com/miner:latest"},
    ]}}}}  # fmt: skip
    patched = shop.fails(
        "patch", kind="deployment", name="web", namespace="shop", patch=json.dumps(sneaked),
    )  # fmt: skip
    assert REGISTRIES in patched, patched
    containers = web(kubectl)["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["nginx:1.27"]

    allowed = shop.ok("set_image", name="web", container="web", image="nginx:1.28",
                      namespace="shop")  # fmt: skip
    assert allowed["policy"]["verdict"] == "allow", allowed
    containers = web(kubectl)["spec"]["template"]["spec"]["containers"]
    assert [c["image"] for c in containers] == ["nginx:1.28"]


def test_a_proposal_judged_on_labels_the_object_does_not_have_carries_nothing(
    shop: KubeTools, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("label", "deploy/web", "-n", "shop", "kubecrew.io/tier=critical")
    proposed = propose(
        tmp_path / "store.sqlite", action="scale", target="deployment/web", namespace="shop",
        from_replicas=5, replicas=3, labels={}, rationale="quiet hours",
    )  # fmt: skip
    assert proposed["decision"]["outcome"] == "approved", proposed  # judged on no labels
    refused = shop.fails(
        "scale", name="web", namespace="shop", replicas=3, proposal=proposed["proposal"]
    )
    assert "CapacityPolicy shop-min-capacity / rule critical-headroom" in refused, refused
    assert "kubecrew.io/tier" in refused and "Propose it again" in refused
    assert web(kubectl)["spec"]["replicas"] == 5
