"""Image pulls: unknown images back off like a kubelet's, a fixed image pulls on the next try."""

from __future__ import annotations

import itertools

import pytest

from sandbox.kubelet.images import ImageCatalog, normalize
from tests.sandbox.kubelet.podspecs import event_count, messages, pod, status, waiting_reason
from tests.support.simulation import Simulation, ready


def test_unknown_image_goes_from_err_image_pull_to_image_pull_backoff() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("typo", {"name": "web", "image": "ngin:1.27"}))
    sim.run_for(1)
    assert waiting_reason(sim, "typo") == "ErrImagePull"
    failed = messages(sim, "typo", "Failed")
    assert any(
        m.startswith(
            'Failed to pull image "ngin:1.27": rpc error: code = NotFound desc = failed to '
            'pull and unpack image "docker.io/library/ngin:1.27"'
        )
        and m.endswith("not found")
        for m in failed
    )
    sim.run_for(2)
    assert waiting_reason(sim, "typo") == "ImagePullBackOff"
    assert messages(sim, "typo", "BackOff") == ['Back-off pulling image "ngin:1.27"']
    assert status(sim, "typo")["phase"] == "Pending"


def test_image_pull_backoff_doubles_between_attempts() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("typo", {"image": "ngin:1.27"}))
    pulls: list[int] = []
    for second in range(100):
        sim.run_for(1)
        count = event_count(sim, "typo", "Pulling")
        if not pulls or count > len(pulls):
            pulls.append(second)
    gaps = [b - a for a, b in itertools.pairwise(pulls)]
    assert len(pulls) == 4, pulls  # at 0, ~10, ~30, ~70 s
    assert gaps[1] > gaps[0] * 1.5 and gaps[2] > gaps[1] * 1.5


def test_fixing_the_image_of_a_bare_pod_pulls_it_and_runs() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("typo", {"name": "web", "image": "ngin:1.27"}))
    sim.run_for(5)
    assert waiting_reason(sim, "typo") == "ImagePullBackOff"
    # what `kubectl set image` sends
    sim.patch(
        "pods",
        "default",
        "typo",
        {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
    )
    sim.run_until(lambda: ready(sim.get("pods", "default", "typo")), timeout=10)
    assert status(sim, "typo")["containerStatuses"][0]["image"] == "docker.io/library/nginx:1.27"


def test_pull_policy_never_without_the_image_on_the_node() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("never", {"image": "redis:7", "imagePullPolicy": "Never"}))
    sim.run_for(1)
    assert waiting_reason(sim, "never") == "ErrImageNeverPull"
    assert messages(sim, "never", "ErrImageNeverPull") == [
        'Container image "redis:7" is not present with pull policy of Never'
    ]


def test_removed_image_fails_to_pull_until_restored() -> None:
    sim = Simulation(nodes=1)
    sim.world.images.remove("docker.io/library/redis:7")
    sim.apply(pod("cache", {"image": "redis:7"}))
    sim.run_for(3)
    assert waiting_reason(sim, "cache") == "ImagePullBackOff"
    sim.world.images.restore("redis:7")
    sim.run_until(lambda: ready(sim.get("pods", "default", "cache")), timeout=30)


@pytest.mark.parametrize(
    ("reference", "normalized"),
    [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.27", "docker.io/library/nginx:1.27"),
        ("library/nginx:1.27", "docker.io/library/nginx:1.27"),
        ("bitnami/redis:7", "docker.io/bitnami/redis:7"),
        ("ghcr.io/kubecrew/shop-api:1.0.0", "ghcr.io/kubecrew/shop-api:1.0.0"),
        ("localhost:5000/app:v1", "localhost:5000/app:v1"),
    ],
    ids=["bare", "tag", "library", "user", "registry", "port"],
)
def test_references_normalize_like_containerd(reference: str, normalized: str) -> None:
    assert str(normalize(reference)) == normalized


def test_catalog_resolves_defaults_and_digests_deterministically() -> None:
    catalog = ImageCatalog.default()
    image = catalog.resolve("nginx:1.27")
    assert image is not None and image.profile == "nginx" and image.digest.startswith("sha256:")
    assert catalog.resolve(image.image_id) == image
    assert ImageCatalog.default().resolve("docker.io/library/nginx:1.27") == image
    assert catalog.resolve("nginx:0.0.1") is None and catalog.resolve("ngin:1.27") is None
    for demo in ("shop-frontend", "shop-api", "shop-worker"):
        assert catalog.resolve(f"ghcr.io/kubecrew/{demo}:1.2.0") is not None
    catalog.add("example.com/team/app", ["v1"], profile="web")
    assert catalog.resolve("example.com/team/app:v1") is not None
    catalog.remove("example.com/team/app")
    assert catalog.resolve("example.com/team/app:v1") is None


def test_a_retried_pull_keeps_showing_the_last_pull_failure() -> None:
    """Between two attempts and during the next one the kubelet reports the last failure (its
    reason cache), never ContainerCreating again: a snapshot always shows why the pod waits."""
    sim = Simulation(nodes=1)
    sim.apply(pod("typo", {"image": "ngin:1.27"}))
    sim.run_for(2)
    seen = set()
    for _ in range(400):  # 40 s: the retries at about 10 and 30 s
        sim.run_for(0.1)
        seen.add(waiting_reason(sim, "typo"))
    assert event_count(sim, "typo", "Pulling") >= 3
    assert seen == {"ErrImagePull", "ImagePullBackOff"}
