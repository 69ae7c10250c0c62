"""The crew's registry client (`mcp_servers.kube.registries`) and the kube server's `image_tags`
tool, against the sandbox's registries over HTTPS: references read as a container runtime reads
them, tags listed through Docker Hub's token handshake and followed page by page, mirrors on the
cluster's own server trusted with the kubeconfig's CA and others with the system's, and every
failure one line saying what to do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.connection import Clusters
from core.errors import InvalidArgument, NotFound, PermissionDenied, Unavailable
from mcp_servers.kube.registries import ImageName, Registries, parse
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.registries import ON_THE_CLUSTER, kube_settings, mirrors

NGINX = "docker.io/library/nginx"


@pytest.fixture
def clusters(shared_sandbox: Sandbox) -> Iterator[Clusters]:
    made = Clusters(shared_sandbox.kubeconfig)
    yield made
    made.close()


def catalog_tags(sandbox: Sandbox, repository: str) -> list[str]:
    return sandbox.call(lambda c: c.world.images.tags(repository))


@pytest.mark.parametrize(
    ("reference", "repository", "written", "key"),
    [
        ("nginx", NGINX, "nginx:latest", f"{NGINX}:latest"),
        ("nginx:1.27", NGINX, "nginx:1.27", f"{NGINX}:1.27"),
        ("bitnami/redis:7", "docker.io/bitnami/redis", None, "docker.io/bitnami/redis:7"),
        ("docker.io/nginx:1.27", NGINX, f"{NGINX}:1.27", f"{NGINX}:1.27"),
        ("localhost:5000/app", "localhost:5000/app", "localhost:5000/app:latest", None),
        ("ghcr.io/kubecrew/shop-api:1.0.0", "ghcr.io/kubecrew/shop-api", None, None),
        (f"registry.k8s.io/pause@sha256:{'a' * 64}", "registry.k8s.io/pause", None, None),
    ],
)
def test_references_are_read_as_a_container_runtime_reads_them(
    reference: str, repository: str, written: str | None, key: str | None
) -> None:
    name = parse(reference)
    assert name.repository == repository
    assert str(name) == (written or reference)
    assert name.key == (key or str(name))  # None: the key is the reference as shown


@pytest.mark.parametrize("reference", ["NGINX:1.27", "nginx:", "", "nginx@sha256:zz", "a b"])
def test_what_is_no_reference_is_an_invalid_argument(reference: str) -> None:
    with pytest.raises(InvalidArgument, match="is not an image reference: "):
        parse(reference)


def test_image_tags_lists_what_the_registry_holds_through_the_token_handshake(
    shared_sandbox: Sandbox,
) -> None:
    tools = KubeTools(kube_settings(shared_sandbox))

    answer = tools.ok("image_tags", image="nginx:1.277", limit=10_000)

    assert answer["repository"] == NGINX
    assert answer["tags"] == catalog_tags(shared_sandbox, "nginx")
    assert (
        answer["source"] == f"{shared_sandbox.url}/registries/docker.io/v2/library/nginx/tags/list"
    )
    cut = tools.ok("image_tags", image="ghcr.io/kubecrew/shop-api", limit=3)
    assert cut["tags"] == ["1.0.0", "1.1.0", "1.2.0"]
    assert cut["note"] == "the first 3 tags; more exist: ask with a larger limit"
    [tool] = [t for t in tools.tools() if t.name == "image_tags"]
    assert tool.annotations is not None and tool.annotations.readOnlyHint


def test_a_mirror_on_the_clusters_own_server_follows_the_kubeconfig(
    shared_sandbox: Sandbox,
) -> None:
    tools = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig, registries=ON_THE_CLUSTER))
    answer = tools.ok("image_tags", image="registry.k8s.io/pause")
    assert (answer["repository"], answer["tags"]) == (
        "registry.k8s.io/pause",
        catalog_tags(shared_sandbox, "registry.k8s.io/pause"),
    )
    assert {"3.9", "3.10", "latest"} <= set(answer["tags"])
    assert answer["source"].startswith(shared_sandbox.url + "/registries/registry.k8s.io/v2/")


def test_image_tags_failures_say_what_to_do_in_one_line(shared_sandbox: Sandbox) -> None:
    unknown = KubeTools(kube_settings(shared_sandbox)).fails("image_tags", image="ngnix:1.27")
    assert "the registry has no repository docker.io/library/ngnix (asked https://" in unknown
    offline = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig))
    assert "no registry is configured for docker.io (configured: none)" in offline.fails(
        "image_tags", image="nginx"
    )
    only_ghcr = KubeSettings(
        kubeconfig=shared_sandbox.kubeconfig, registries={"ghcr.io": ON_THE_CLUSTER["*"]}
    )
    assert "no registry is configured for quay.io (configured: ghcr.io)" in KubeTools(
        only_ghcr
    ).fails("image_tags", image="quay.io/org/app")
    closed = KubeSettings(
        kubeconfig=shared_sandbox.kubeconfig, registries={"*": "https://127.0.0.1:9/{host}"}
    )
    down = KubeTools(closed).fails("image_tags", image="nginx")
    assert "the registry at https://127.0.0.1:9 did not answer (" in down
    assert "\n" not in down and "Traceback" not in down
    bad = KubeTools(kube_settings(shared_sandbox)).fails("image_tags", image="nginx", limit=0)
    assert "limit must be between 1 and 10000" in bad


def test_tags_and_catalogs_are_followed_page_by_page(
    shared_sandbox: Sandbox, clusters: Clusters
) -> None:
    registries = Registries(mirrors(shared_sandbox), clusters, page=100)

    listed = registries.tags("nginx")

    assert listed.tags == tuple(catalog_tags(shared_sandbox, "nginx")) and listed.complete
    assert len(listed.tags) > 100 * 3  # more than three pages
    k8s = shared_sandbox.call(lambda c: c.world.images.repositories())
    assert registries.repositories("registry.k8s.io") == [
        name.removeprefix("registry.k8s.io/") for name in k8s if name.startswith("registry.k8s.io/")
    ]
    cut = registries.tags(ImageName("docker.io", "library/nginx"), limit=5)
    assert (len(cut.tags), cut.complete) == (5, False)
    gone = registries.tags("ghcr.io/kubecrew/shop-apl")
    assert (gone.found, gone.tags) == (False, ())


def test_a_manifest_is_known_by_tag_or_digest(shared_sandbox: Sandbox, clusters: Clusters) -> None:
    registries = Registries(ON_THE_CLUSTER, clusters)
    image = shared_sandbox.call(lambda c: c.world.images.resolve("nginx:1.27"))
    assert image is not None
    digest = image.digest

    assert registries.exists("nginx:1.27") and registries.exists(f"nginx@{digest}")
    assert not registries.exists("nginx:1.277")
    assert not registries.exists(f"registry.k8s.io/pause@{digest}")  # nginx's, not pause's


def test_a_mirror_elsewhere_is_verified_with_the_system_trust_store(
    shared_sandbox: Sandbox, clusters: Clusters
) -> None:
    """Without a kubeconfig to vouch for it, the sandbox's self-signed certificate fails."""
    registries = Registries(mirrors(shared_sandbox))
    with pytest.raises(Unavailable, match="certificate verify failed"):
        registries.tags("nginx")
    with pytest.raises(InvalidArgument, match="needs the kubeconfig"):
        Registries(ON_THE_CLUSTER).tags("nginx")
    with pytest.raises(PermissionDenied, match=r"no registry is configured for docker\.io"):
        Registries({}).tags("nginx")
    with pytest.raises(NotFound, match="serves no catalog"):
        Registries(mirrors(shared_sandbox), clusters).repositories("gcr.io")
