"""The image registries the simulated nodes pull from: which repositories and tags exist.

A container runtime turns `nginx` into `docker.io/library/nginx:latest` before pulling; this
module does the same normalization (`normalize`), so `nginx:1.27`, `library/nginx:1.27` and
`docker.io/library/nginx:1.27` are one image with one digest. Digests are derived from the
reference, so every run of the sandbox reports the same `imageID`. Each image names the
application `Profile` it runs by default (see `profiles.py`); the catalog knows nothing of how
that profile behaves, of nodes, or of pods: it only answers "does this image exist, and what is
it", which is all a registry can tell. Faults remove and restore images ("the tag was deleted").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_REGISTRY = "docker.io"
DEFAULT_SIZE = 50_000_000
PULL_BYTES_PER_SECOND = 40_000_000.0  # a decent node link to a registry
PULL_OVERHEAD_SECONDS = 0.6  # manifest and config round trips


@dataclass(frozen=True)
class Reference:
    """A parsed image reference: repository normalized, tag or digest as written."""

    repository: str
    tag: str
    digest: str = ""

    def __str__(self) -> str:
        return (
            f"{self.repository}@{self.digest}" if self.digest else f"{self.repository}:{self.tag}"
        )


@dataclass(frozen=True)
class Image:
    repository: str  # "docker.io/library/nginx" (normalized like a container runtime does)
    tag: str  # "1.27"
    digest: str  # "sha256:<64 hex>", deterministic from repository:tag
    size: int  # bytes (pull time derives from it)
    profile: str  # name of the Profile the image runs by default

    @property
    def image_id(self) -> str:
        """What `containerStatuses[].imageID` shows: `docker.io/library/nginx@sha256:...`."""
        return f"{self.repository}@{self.digest}"

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"

    def pull_seconds(self) -> float:
        return PULL_OVERHEAD_SECONDS + self.size / PULL_BYTES_PER_SECOND


@lru_cache(maxsize=4096)
def normalize(reference: str) -> Reference:
    """Parse `reference` as containerd does: default registry, `library/` and `latest`."""
    name, _, digest = reference.strip().partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    first, sep, _ = name.partition("/")
    if not sep or ("." not in first and ":" not in first and first != "localhost"):
        name = f"{DEFAULT_REGISTRY}/{name}"
        if not sep:
            name = f"{DEFAULT_REGISTRY}/library/{first}"
    return Reference(
        repository=name.lower(), tag=tag or ("" if digest else "latest"), digest=digest
    )


def digest_of(repository: str, tag: str) -> str:
    return "sha256:" + hashlib.sha256(f"{repository}:{tag}".encode()).hexdigest()


class ImageCatalog:
    """Repositories and tags that registries hold; what a pull can find."""

    def __init__(self) -> None:
        self._images: dict[tuple[str, str], Image] = {}  # (repository, tag) -> image
        self._by_digest: dict[str, Image] = {}
        self._removed: dict[tuple[str, str], Image] = {}

    @classmethod
    def default(cls) -> ImageCatalog:
        catalog = cls()
        for repository, tags, profile, size in _DEFAULTS:
            catalog.add(repository, tags, profile=profile, size=size)
        return catalog

    def resolve(self, reference: str) -> Image | None:
        """The image `reference` names, or None when a pull would fail (no such repo or tag)."""
        if not reference or not reference.strip():
            return None
        ref = normalize(reference)
        if ref.digest:
            image = self._by_digest.get(ref.digest)
            if image is None or image.repository != ref.repository:
                return None
            if (image.repository, image.tag) not in self._images:
                return None
            return image
        return self._images.get((ref.repository, ref.tag))

    def add(
        self, repository: str, tags: Iterable[str], *, profile: str, size: int = DEFAULT_SIZE
    ) -> None:
        repo = normalize(repository).repository
        for tag in tags:
            image = Image(repo, tag, digest_of(repo, tag), size, profile)
            self._images[(repo, tag)] = image
            self._by_digest[image.digest] = image
            self._removed.pop((repo, tag), None)

    def remove(self, reference: str) -> None:
        """Make pulls of `repo` (all tags) or `repo:tag` fail, as if deleted upstream."""
        for key in self._matching(self._images, reference):
            self._removed[key] = self._images.pop(key)

    def restore(self, reference: str) -> None:
        for key in self._matching(self._removed, reference):
            self._images[key] = self._removed.pop(key)

    def repositories(self) -> list[str]:
        return sorted({repo for repo, _ in self._images})

    def tags(self, repository: str) -> list[str]:
        repo = normalize(repository).repository
        return sorted(tag for r, tag in self._images if r == repo)

    @staticmethod
    def _matching(images: dict[tuple[str, str], Image], reference: str) -> list[tuple[str, str]]:
        name = reference.strip()
        slash, colon = name.rfind("/"), name.rfind(":")
        if colon > slash or "@" in name:
            ref = normalize(name)
            if ref.digest:
                return [k for k, image in images.items() if image.digest == ref.digest]
            return [k for k in images if k == (ref.repository, ref.tag)]
        repo = normalize(name).repository
        return [k for k in images if k[0] == repo]


_NGINX_TAGS: tuple[str, ...] = (
    "1.25",
    "1.25.5",
    "1.26",
    "1.26.2",
    "1.27",
    "1.27.3",
    "1.27.4",
    "1.28",
)
_NGINX_TAGS += ("latest", "alpine", "stable", "stable-alpine", "mainline", "1.27-alpine")
_DEMO_TAGS = ("1.0.0", "1.1.0", "1.2.0", "latest")

# (repository, tags, profile, size in bytes)
_DEFAULTS: tuple[tuple[str, tuple[str, ...], str, int], ...] = (
    ("nginx", _NGINX_TAGS, "nginx", 72_000_000),
    ("nginxinc/nginx-unprivileged", ("1.27", "latest", "stable"), "nginx-unprivileged", 73_000_000),
    ("httpd", ("2.4", "2.4.62", "2.4-alpine", "latest", "alpine"), "httpd", 58_000_000),
    ("busybox", ("1.36", "1.36.1", "1.37", "1.37.0", "latest", "stable"), "busybox", 2_200_000),
    ("alpine", ("3.19", "3.20", "3.21", "latest", "edge"), "busybox", 3_600_000),
    ("ubuntu", ("22.04", "24.04", "latest", "noble", "jammy"), "busybox", 29_000_000),
    ("debian", ("12", "bookworm", "bookworm-slim", "latest"), "busybox", 49_000_000),
    ("curlimages/curl", ("8.10.1", "8.11.0", "latest"), "busybox", 12_000_000),
    ("redis", ("6", "7", "7.2", "7.4", "7-alpine", "latest", "alpine"), "redis", 45_000_000),
    ("postgres", ("14", "15", "16", "16.4", "17", "17-alpine", "latest"), "postgres", 150_000_000),
    ("mysql", ("8.0", "8.4", "9.0", "latest"), "mysql", 170_000_000),
    ("mariadb", ("10.11", "11.4", "latest"), "mysql", 120_000_000),
    ("memcached", ("1.6", "1.6.31", "alpine", "latest"), "memcached", 30_000_000),
    ("rabbitmq", ("3.13", "3.13-management", "4.0", "latest"), "rabbitmq", 110_000_000),
    ("python", ("3.11", "3.12", "3.13", "3.12-slim", "3.13-slim", "latest"), "repl", 48_000_000),
    ("node", ("18", "20", "22", "20-alpine", "22-alpine", "lts", "latest"), "repl", 60_000_000),
    ("golang", ("1.22", "1.23", "latest"), "repl", 280_000_000),
    ("registry.k8s.io/pause", ("3.9", "3.10", "latest"), "pause", 320_000),
    ("registry.k8s.io/e2e-test-images/agnhost", ("2.52", "2.53"), "agnhost", 51_000_000),
    ("hashicorp/http-echo", ("1.0", "latest"), "http-echo", 7_000_000),
    ("ghcr.io/kubecrew/shop-frontend", _DEMO_TAGS, "shop-frontend", 38_000_000),
    ("ghcr.io/kubecrew/shop-api", _DEMO_TAGS, "shop-api", 64_000_000),
    ("ghcr.io/kubecrew/shop-worker", _DEMO_TAGS, "shop-worker", 52_000_000),
    ("ghcr.io/kubecrew/leaky-app", _DEMO_TAGS, "leaky", 40_000_000),
    ("ghcr.io/kubecrew/batch-job", _DEMO_TAGS, "batch", 20_000_000),
    ("ghcr.io/kubecrew/sleeper", _DEMO_TAGS, "idle", 5_000_000),
)
