"""The shipped image catalog holds the real registries' tags: every series' first and last
release in each of its forms and variants resolves, the tags people write every day resolve,
near misses fail as a registry's would, pulls by digest find the tag, and the compact data
round-trips through `compact` (what the refresh script writes)."""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import pytest

from sandbox.kubelet.catalog import Entry, TagSet, compact, entries, parse
from sandbox.kubelet.catalog.series import Group, Series
from sandbox.kubelet.images import ImageCatalog
from sandbox.kubelet.profiles import ProfileBook

TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")  # the distribution spec's tag grammar
CATALOG = ImageCatalog.default()


def edges(group: Group) -> list[str]:
    """The first and last release of each series, in every form and variant of the group."""
    found = []
    for series in group.series:
        releases = list(series.releases())
        edge = Group(
            (Series(series.stem, series.first, series.first),),
            group.forms,
            group.variants,
            group.prefix,
        )
        found.extend(edge.tags())
        if len(releases) > 1:
            found.extend(f"{group.prefix}{releases[-1]}{v}" for v in group.variants)
    return found


def sample() -> list[str]:
    references = []
    for entry in entries():
        references += [f"{entry.repository}:{tag}" for tag in entry.tags.literal]
        for group in entry.tags.groups:
            references += [f"{entry.repository}:{tag}" for tag in edges(group)]
    return references


def test_every_series_edge_form_and_variant_resolves_to_its_repository() -> None:
    references = sample()
    assert len(references) > 3000
    for reference in references:
        image = CATALOG.resolve(reference)
        assert image is not None, reference
        assert TAG.match(image.tag), reference


def test_a_seeded_random_sample_of_listed_tags_resolves_with_the_repositorys_profile() -> None:
    rng = random.Random(20)
    for entry in rng.sample(entries(), 60):
        listed = CATALOG.tags(entry.repository)
        for tag in rng.sample(listed, min(8, len(listed))):
            image = CATALOG.resolve(f"{entry.repository}:{tag}")
            assert image is not None and image.profile == entry.profile, (entry.repository, tag)


@pytest.mark.parametrize(
    "reference",
    [
        "nginx:1.21",
        "nginx:1.22",
        "nginx:1.29",
        "mysql:8.0.36",
        "python:3.9-slim-buster",
        "nginx:1.27",
        "nginx:1.28",
        "nginx:1.27-alpine",
        "nginx:1.21.6-alpine",
        "busybox:1.36",
        "curlimages/curl:8.11.0",
        "postgres:16-alpine",
        "redis:7.2-bookworm",
        "node:20-alpine",
        "golang:1.23-alpine",
        "eclipse-temurin:21-jre",
        "traefik:v3.1",
        "registry.k8s.io/pause:3.9",
        "registry.k8s.io/kube-apiserver:v1.31.2",
        "registry.k8s.io/coredns/coredns:v1.11.3",
        "registry.k8s.io/etcd:3.5.15-0",
        "quay.io/jetstack/cert-manager-controller:v1.15.3",
        "ghcr.io/kubecrew/shop-api:1.2.0",
        "docker.io/library/nginx:latest",
        "nginx",
    ],
)
def test_tags_people_write_resolve(reference: str) -> None:
    assert CATALOG.resolve(reference) is not None


@pytest.mark.parametrize(
    "reference",
    [
        "nginx:1.277",
        "nginx:1.27.99",
        "nginx:1.21-alpinee",
        "nginx:1.27-slim",
        "mysql:8.0.99",
        "pyhton:3.12",
        "python:3.13-slim-buster",
        "python:3.9.0-bookworm",
        "node:21.99.0",
        "elasticsearch:latest",
        "registry.k8s.io/kube-apiserver:1.31.2",
        "registry.k8s.io/pause:3.99",
        "nginx:v1.27",
        "nginx:01.27",
    ],
)
def test_near_misses_fail_as_a_registry_would(reference: str) -> None:
    assert CATALOG.resolve(reference) is None


def test_a_pull_by_digest_finds_the_tag_it_was_resolved_from() -> None:
    catalog = ImageCatalog.default()
    image = catalog.resolve("nginx:1.21")
    assert image is not None and image.profile == "nginx"
    assert catalog.resolve(image.image_id) == image
    assert catalog.resolve(f"nginx@{image.digest}") == image
    assert catalog.resolve(f"redis@{image.digest}") is None  # nginx's digest, not redis's
    catalog.remove(image.image_id)
    assert catalog.resolve("nginx:1.21") is None and catalog.resolve("nginx:1.22") is not None
    catalog.restore(image.image_id)
    assert catalog.resolve("nginx:1.21") == image


def test_removing_a_repository_hides_it_until_a_tag_or_it_is_restored() -> None:
    catalog = ImageCatalog.default()
    catalog.remove("python")
    assert catalog.resolve("python:3.12") is None and catalog.tags("python") == []
    assert "docker.io/library/python" not in catalog.repositories()
    catalog.restore("python:3.12")
    assert catalog.tags("python") == ["3.12"]
    catalog.restore("python")
    assert catalog.resolve("python:3.12-slim") is not None
    assert len(catalog.tags("python")) == len(ImageCatalog.default().tags("python"))


def test_added_images_lay_over_the_shipped_ones() -> None:
    catalog = ImageCatalog.default()
    catalog.add("nginx", ["1.27", "9.9"], profile="leaky", size=1)
    assert (catalog.resolve("nginx:1.27") or pytest.fail()).profile == "leaky"
    assert (catalog.resolve("nginx:1.26") or pytest.fail()).profile == "nginx"
    assert "9.9" in catalog.tags("nginx") and catalog.resolve("nginx:9.9") is not None


def test_every_repository_runs_a_profile_that_exists() -> None:
    known = set(ProfileBook(CATALOG).names())
    assert {entry.profile for entry in entries()} <= known
    official = [e for e in entries() if "/" not in e.repository]
    assert len(official) >= 100
    hosts = {e.repository.split("/")[0] for e in entries() if "." in e.repository.split("/")[0]}
    assert {"registry.k8s.io", "quay.io", "ghcr.io"} <= hosts


def test_listed_tags_are_sorted_valid_and_each_resolves() -> None:
    for repository in ("nginx", "python", "registry.k8s.io/pause", "quay.io/calico/node"):
        listed = CATALOG.tags(repository)
        assert listed == sorted(set(listed))
        assert all(TAG.match(tag) and CATALOG.resolve(f"{repository}:{tag}") for tag in listed)


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.repository)
def test_compact_writes_each_repository_back_to_the_same_tags(entry: Entry) -> None:
    tags = entry.tags.tags()
    again = TagSet.from_data(compact(tags).to_data())
    assert again.tags() == tags
    assert all(again.contains(tag) for tag in tags)


def test_series_that_are_no_series_are_refused_with_the_forms_to_write() -> None:
    for text in ("1.27.5-0", "1.x.0", "latest", "1.27.a-3"):
        with pytest.raises(ValueError, match="no series"):
            Series.parse(text)
    with pytest.raises(ValueError, match="quoted string"):
        TagSet.from_data({"groups": [{"series": 3.10}]})


def test_the_refresh_script_writes_the_format_the_catalog_reads() -> None:
    path = Path(__file__).resolve().parents[3] / "scripts" / "refresh_image_catalog.py"
    spec = importlib.util.spec_from_file_location("refresh_image_catalog", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shipped = list(entries())
    compacted = [Entry(e.repository, e.profile, e.size, compact(e.tags.tags())) for e in shipped]
    again = parse(script.render(compacted, date="2025-05-01"))
    assert [(e.repository, e.profile, e.size) for e in again] == [
        (e.repository, e.profile, e.size) for e in shipped
    ]
    assert [e.tags.tags() for e in again] == [e.tags.tags() for e in shipped]
    assert script.split("nginx") == ("docker.io", "library/nginx")
    assert script.split("quay.io/calico/node") == ("quay.io", "calico/node")
    assert script.SKIP.search("jammy-20240911") and script.SKIP.search("ltsc2022")
    assert not script.SKIP.search("1.27.3-alpine3.20")
