"""The public images the simulated registries hold: repositories, their real tags, what they run.

`images.yaml` (package data) names each repository as people write it (`nginx`,
`registry.k8s.io/pause`), the `Profile` its containers run (`sandbox/kubelet/profiles.py`),
its compressed size, and its tags written by release series (`series.TagSet`). The shipped
data was compiled by hand from the projects' published release histories, not fetched from the
registries (its header says when and from what); `scripts/refresh_image_catalog.py` regenerates
it from the registries' tag-list APIs (Docker Hub's `/v2/repositories/library/NAME/tags`, or the
OCI distribution `/v2/NAME/tags/list` of registry-1.docker.io, registry.k8s.io, quay.io and
ghcr.io with an anonymous bearer token) on a machine that can reach them.

Loaded once per process (`entries`) and never changed: catalogs built on it keep their own
additions and removals. Knows nothing of pulls, nodes or pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from sandbox.kubelet.catalog.series import Group, Series, TagSet, compact

__all__ = ["DATA", "Entry", "Group", "Series", "TagSet", "compact", "entries", "parse"]

DATA = "images.yaml"


@dataclass(frozen=True)
class Entry:
    repository: str  # as people write it: "nginx", "bitnami/redis", "quay.io/calico/node"
    profile: str  # the Profile its containers run
    size: int  # compressed bytes a pull downloads
    tags: TagSet


@cache
def entries() -> tuple[Entry, ...]:
    text = resources.files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    return parse(text)


def parse(text: str) -> tuple[Entry, ...]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw: Any = yaml.load(text, Loader=loader)  # a safe loader: C when built
    if not isinstance(raw, dict) or not isinstance(raw.get("repositories"), dict):
        raise ValueError(f"{DATA} must map `repositories` to repository entries")
    found = []
    for repository, entry in raw["repositories"].items():
        try:
            found.append(
                Entry(
                    repository=str(repository),
                    profile=str(entry["profile"]),
                    size=int(entry["size"]),
                    tags=TagSet.from_data(entry),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{DATA}: repository {repository}: {exc}") from exc
    return tuple(found)
