"""The sandbox's image catalog served through the OCI distribution API, over real HTTPS and with
no Kubernetes credentials: v2 roots per registry host, tag lists and catalogs paged as the spec
says, manifests by tag or digest (the digest the kubelet reports as imageID), the spec's error
bodies, images a fault removed gone, and Docker Hub's anonymous bearer-token handshake."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandbox.server import Sandbox
from tests.support.diagnosis import deployment, rollout
from tests.support.kubectl import Kubectl
from tests.support.registries import registry_client

GHCR = "/registries/ghcr.io/v2"
K8S = "/registries/registry.k8s.io/v2"
HUB = "/registries/docker.io"


@pytest.fixture
def registry(sandbox: Sandbox) -> Iterator[httpx.Client]:
    with registry_client(sandbox) as client:
        yield client


def errors(response: httpx.Response, status: int) -> list[dict[str, Any]]:
    assert response.status_code == status, response.text
    found: list[dict[str, Any]] = response.json()["errors"]
    return found


def token(registry: httpx.Client, scope: str) -> str:
    answer = registry.get(f"{HUB}/token", params={"service": "docker.io", "scope": scope})
    assert answer.status_code == 200, answer.text
    assert answer.json()["expires_in"] == 300
    value: str = answer.json()["token"]
    return value


def test_each_registry_host_has_a_v2_root_and_unknown_hosts_have_none(
    registry: httpx.Client,
) -> None:
    for root in (f"{GHCR}/", f"{K8S}/"):
        answer = registry.get(root)
        assert (answer.status_code, answer.json()) == (200, {})
        assert answer.headers["docker-distribution-api-version"] == "registry/2.0"
    [error] = errors(registry.get("/registries/nowhere.example/v2/"), 404)
    assert error["code"] == "NAME_UNKNOWN"
    assert "docker.io, ghcr.io, quay.io, registry.k8s.io" in error["message"]


def test_tags_are_listed_in_lexical_pages_linked_as_the_spec_says(registry: httpx.Client) -> None:
    whole = registry.get(f"{GHCR}/kubecrew/shop-api/tags/list")
    assert whole.json() == {
        "name": "kubecrew/shop-api",
        "tags": ["1.0.0", "1.1.0", "1.2.0", "latest"],
    }
    assert "link" not in whole.headers

    first = registry.get(f"{GHCR}/kubecrew/shop-api/tags/list", params={"n": 3})
    assert first.json()["tags"] == ["1.0.0", "1.1.0", "1.2.0"]
    assert first.headers["link"] == (
        f'<{GHCR}/kubecrew/shop-api/tags/list?n=3&last=1.2.0>; rel="next"'
    )
    second = registry.get(first.headers["link"].split(">")[0].lstrip("<"))
    assert second.json()["tags"] == ["latest"] and "link" not in second.headers

    [bad] = errors(registry.get(f"{GHCR}/kubecrew/shop-api/tags/list", params={"n": "x"}), 400)
    assert bad["code"] == "PAGINATION_NUMBER_INVALID"


def test_the_catalog_lists_a_registrys_repositories_in_pages(registry: httpx.Client) -> None:
    page = registry.get(f"{K8S}/_catalog", params={"n": 1})
    assert page.json() == {"repositories": ["busybox"]}
    assert page.headers["link"] == f'<{K8S}/_catalog?n=1&last=busybox>; rel="next"'
    rest = registry.get(f"{K8S}/_catalog", params={"n": 2, "last": "busybox"})
    assert rest.json() == {"repositories": ["coredns/coredns", "e2e-test-images/agnhost"]}
    last = registry.get(f"{K8S}/_catalog", params={"n": 2, "last": "metrics-server/metrics-server"})
    assert last.json() == {"repositories": ["pause"]} and "link" not in last.headers


def test_a_manifest_answers_with_the_digest_pods_report_as_their_image_id(
    registry: httpx.Client, kubectl: Kubectl
) -> None:
    kubectl("create", "namespace", "shop")
    kubectl("apply", "-f", "-", input=deployment("pause", {"image": "registry.k8s.io/pause:3.9"}))
    rollout(kubectl, "pause", "shop")
    [pod] = kubectl.json("get", "pods", "-n", "shop", "-l", "app=pause")["items"]
    image_id = pod["status"]["containerStatuses"][0]["imageID"]

    head = registry.head(f"{K8S}/pause/manifests/3.9")
    assert head.status_code == 200 and head.content == b""
    digest = head.headers["docker-content-digest"]
    assert image_id == f"registry.k8s.io/pause@{digest}"
    got = registry.get(f"{K8S}/pause/manifests/3.9")
    assert got.headers["content-type"] == "application/vnd.oci.image.manifest.v1+json"
    assert got.json()["schemaVersion"] == 2 and got.headers["docker-content-digest"] == digest
    by_digest = registry.head(f"{K8S}/pause/manifests/{digest}")
    assert by_digest.status_code == 200


def test_unknown_repositories_tags_and_names_get_the_specs_error_codes(
    registry: httpx.Client,
) -> None:
    [unknown] = errors(registry.get(f"{GHCR}/kubecrew/shop-apl/tags/list"), 404)
    assert unknown == {
        "code": "NAME_UNKNOWN",
        "message": "repository name not known to registry",
        "detail": {"name": "kubecrew/shop-apl"},
    }
    [missing] = errors(registry.get(f"{K8S}/pause/manifests/3.99"), 404)
    assert missing["code"] == "MANIFEST_UNKNOWN"
    assert registry.head(f"{K8S}/pause/manifests/3.99").status_code == 404
    [no_repo] = errors(registry.get(f"{K8S}/pauze/manifests/3.9"), 404)
    assert no_repo["code"] == "NAME_UNKNOWN"  # the repository is judged before the tag
    [invalid] = errors(registry.get(f"{GHCR}/Kubecrew/App/tags/list"), 400)
    assert invalid["code"] == "NAME_INVALID"
    [read_only] = errors(registry.put(f"{K8S}/pause/manifests/4.0", content=b"{}"), 405)
    assert read_only["code"] == "UNSUPPORTED"


def test_images_a_fault_removed_are_gone_from_the_registry_until_restored(
    registry: httpx.Client, sandbox: Sandbox
) -> None:
    tags = f"{GHCR}/kubecrew/shop-api/tags/list"
    fault = sandbox.call(
        lambda c: c.faults.add(
            {"kind": "image-missing", "image": "ghcr.io/kubecrew/shop-api:1.1.0"}
        )
    )
    assert registry.get(tags).json()["tags"] == ["1.0.0", "1.2.0", "latest"]
    assert registry.head(f"{GHCR}/kubecrew/shop-api/manifests/1.1.0").status_code == 404

    gone = sandbox.call(
        lambda c: c.faults.add({"kind": "image-missing", "image": "ghcr.io/kubecrew/sleeper"})
    )
    [error] = errors(registry.get(f"{GHCR}/kubecrew/sleeper/tags/list"), 404)
    assert error["code"] == "NAME_UNKNOWN"
    assert "kubecrew/sleeper" not in registry.get(f"{GHCR}/_catalog").json()["repositories"]

    sandbox.call(lambda c: (c.faults.clear(fault.id), c.faults.clear(gone.id)))
    assert registry.get(tags).json()["tags"] == ["1.0.0", "1.1.0", "1.2.0", "latest"]


def test_docker_hub_asks_for_an_anonymous_token_and_accepts_it_for_its_scope(
    registry: httpx.Client,
) -> None:
    tags = f"{HUB}/v2/library/nginx/tags/list"
    refused = registry.get(tags)
    [error] = errors(refused, 401)
    assert error["code"] == "UNAUTHORIZED"
    assert refused.headers["www-authenticate"] == (
        f'Bearer realm="{registry.base_url.scheme}://{registry.base_url.netloc.decode()}'
        f'{HUB}/token",service="docker.io",scope="repository:library/nginx:pull"'
    )

    granted = token(registry, "repository:library/nginx:pull")
    bearer = {"Authorization": f"Bearer {granted}"}
    answer = registry.get(tags, headers=bearer)
    assert answer.status_code == 200 and "1.27" in answer.json()["tags"]
    assert (
        registry.head(f"{HUB}/v2/library/nginx/manifests/1.27", headers=bearer).status_code == 200
    )

    other = registry.get(f"{HUB}/v2/library/redis/tags/list", headers=bearer)
    assert other.status_code == 401  # a token covers its own scope only
    assert 'scope="repository:library/redis:pull"' in other.headers["www-authenticate"]
    forged = {"Authorization": f"Bearer {granted[:-2]}xx"}
    assert registry.get(tags, headers=forged).status_code == 401
    catalog = token(registry, "registry:catalog:*")
    listed = registry.get(f"{HUB}/v2/_catalog", headers={"Authorization": f"Bearer {catalog}"})
    assert "library/nginx" in listed.json()["repositories"]


def test_registry_paths_ignore_kubernetes_credentials_and_api_faults(
    registry: httpx.Client, sandbox: Sandbox
) -> None:
    sandbox.call(lambda c: c.faults.add({"kind": "api", "error_rate": 1.0}))
    answer = registry.get(
        f"{K8S}/pause/tags/list", headers={"Authorization": "Bearer not-a-kube-token"}
    )
    assert answer.status_code == 200 and {"3.9", "3.10", "latest"} <= set(answer.json()["tags"])
