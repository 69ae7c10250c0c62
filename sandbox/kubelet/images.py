"""The image registries the simulated nodes pull from: which repositories and tags exist.

The repositories and tags are those of the real registries (`catalog/images.yaml`: the most
pulled Docker Hub official images and the common registry.k8s.io, quay.io and ghcr.io ones,
with their release series, variants and aliases). That data was compiled from the projects'
published release histories, not fetched from the registries; `scripts/refresh_image_catalog.py`
regenerates it from the registries' tag-list APIs on a machine that can reach them. A tag the
real registry lacks is absent here too (`nginx:1.277`, `mysql:8.0.99`), so a typo still fails
to pull. Tags are resolved by parsing them against their repository's series, never by
expanding every tag at start-up; `tags` expands one repository, on demand, for a tag list.

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

from sandbox.kubelet import catalog

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


RESOLVED_KEPT = 4096  # references resolved and kept (a kubelet asks for each pod every round)


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
    """Repositories and tags that registries hold; what a pull can find.

    The shipped repositories (`catalog.entries()`, shared and read-only) answer by parsing;
    `add` lays images over them (a scenario's own, or another profile for a tag), and
    `remove`/`restore` hide and show tags or whole repositories, as a registry deleting them
    would."""

    def __init__(self, entries: Iterable[catalog.Entry] = ()) -> None:
        self._shipped: dict[str, catalog.Entry] = {}
        for entry in entries:
            self._shipped[normalize(entry.repository).repository] = entry
        self._added: dict[str, dict[str, Image]] = {}  # repository -> tag -> image
        self._removed_repositories: set[str] = set()
        self._removed: set[tuple[str, str]] = set()  # (repository, tag) pulls fail for
        self._kept: set[tuple[str, str]] = set()  # restored tags of a removed repository
        self._listed: dict[str, list[str]] = {}  # repository -> its tags, until a change
        self._digests: dict[str, dict[str, str]] = {}  # repository -> digest -> tag
        self._resolved: dict[str, Image | None] = {}  # reference -> image, until a change

    @classmethod
    def default(cls) -> ImageCatalog:
        return cls(catalog.entries())

    def resolve(self, reference: str) -> Image | None:
        """The image `reference` names, or None when a pull would fail (no such repo or tag)."""
        if reference not in self._resolved:
            if len(self._resolved) >= RESOLVED_KEPT:
                self._resolved.clear()
            self._resolved[reference] = self._resolve(reference)
        return self._resolved[reference]

    def _resolve(self, reference: str) -> Image | None:
        if not reference or not reference.strip():
            return None
        ref = normalize(reference)
        if ref.digest:
            tag = self._by_digest(ref.repository).get(ref.digest)
            return None if tag is None else self._image(ref.repository, tag)
        return self._image(ref.repository, ref.tag)

    def add(
        self, repository: str, tags: Iterable[str], *, profile: str, size: int = DEFAULT_SIZE
    ) -> None:
        repo = normalize(repository).repository
        added = self._added.setdefault(repo, {})
        for tag in tags:
            added[tag] = Image(repo, tag, digest_of(repo, tag), size, profile)
            self._removed.discard((repo, tag))
            if repo in self._removed_repositories:
                self._kept.add((repo, tag))
        self._changed()

    def remove(self, reference: str) -> None:
        """Make pulls of `repo` (all tags) or `repo:tag` fail, as if deleted upstream."""
        repo, tag = self._target(reference)
        if tag is None:
            self._removed_repositories.add(repo)
            self._kept = {key for key in self._kept if key[0] != repo}
        else:
            self._removed.add((repo, tag))
            self._kept.discard((repo, tag))
        self._changed()

    def restore(self, reference: str) -> None:
        repo, tag = self._target(reference)
        if tag is None:
            self._removed_repositories.discard(repo)
            self._removed = {key for key in self._removed if key[0] != repo}
            self._kept = {key for key in self._kept if key[0] != repo}
        else:
            self._removed.discard((repo, tag))
            if repo in self._removed_repositories:
                self._kept.add((repo, tag))
        self._changed()

    def repositories(self) -> list[str]:
        known = sorted({*self._shipped, *self._added})
        return [repo for repo in known if self._visible(repo)]

    def tags(self, repository: str) -> list[str]:
        repo = normalize(repository).repository
        listed = self._listed.get(repo)
        if listed is None:
            listed = sorted(tag for tag in self._held(repo) if self._present(repo, tag))
            self._listed[repo] = listed
        return list(listed)

    # -- one repository and tag ----------------------------------------------------------------

    def _image(self, repo: str, tag: str) -> Image | None:
        if not self._present(repo, tag):
            return None
        added = self._added.get(repo, {}).get(tag)
        if added is not None:
            return added
        entry = self._shipped.get(repo)
        if entry is None or not entry.tags.contains(tag):
            return None
        return Image(repo, tag, digest_of(repo, tag), entry.size, entry.profile)

    def _present(self, repo: str, tag: str) -> bool:
        """Whether no removal hides `repo:tag` (not whether the registry holds it)."""
        if (repo, tag) in self._removed:
            return False
        return repo not in self._removed_repositories or (repo, tag) in self._kept

    def _visible(self, repo: str) -> bool:
        quiet = repo not in self._removed_repositories and not any(
            key[0] == repo for key in self._removed
        )
        return quiet or bool(self.tags(repo))

    def _held(self, repo: str) -> set[str]:
        """Every tag of `repo`, removed or not: the shipped ones expanded, and those added."""
        held = set(self._added.get(repo, ()))
        entry = self._shipped.get(repo)
        return held | entry.tags.tags() if entry is not None else held

    def _by_digest(self, repo: str) -> dict[str, str]:
        """Digest -> tag of every tag `repo` holds, removed or not (a removal by digest is
        restored by digest): digests derive from tags, so the map is built once per change."""
        found = self._digests.get(repo)
        if found is None:
            found = {digest_of(repo, tag): tag for tag in self._held(repo)}
            self._digests[repo] = found
        return found

    def _target(self, reference: str) -> tuple[str, str | None]:
        """`reference` as a repository and tag (None: the whole repository); a digest names
        the tag it was derived from."""
        name = reference.strip()
        slash, colon = name.rfind("/"), name.rfind(":")
        ref = normalize(name)
        if ref.digest:
            return ref.repository, self._by_digest(ref.repository).get(ref.digest, ref.digest)
        if colon > slash:
            return ref.repository, ref.tag
        return ref.repository, None

    def _changed(self) -> None:
        self._listed.clear()
        self._digests.clear()
        self._resolved.clear()
