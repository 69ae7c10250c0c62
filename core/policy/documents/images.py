"""ImagePolicy: which registries the containers of some namespaces may pull from (security).

    spec:
      namespaceSelector: {matchLabels: {kubecrew.io/class: team}}   # and/or namespaces: [shop];
                                                                    # neither: every namespace
      allowedRegistries: [registry.example.com, ghcr.io/acme]       # a host, or host/path prefix
      requireDigest: true       # an image not pinned by digest is a finding of medium severity

The Platform agent's audit reads it (an image outside every allowed registry is a finding), and
the policy gate judges by it every action that brings an image into a namespace
(`checks.images`). Image references are read as the container runtime reads them (`nginx` is
`docker.io/library/nginx`; a first part with a dot or a port, or `localhost`, is a registry), so
an allow-list entry means the registry a node would really pull from.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from core.policy.documents.common import API_VERSION, DnsLabel, Metadata, Strict
from core.policy.documents.selectors import LabelSelector

_HOST = r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?"
_PATH = r"[a-z0-9]+([._-][a-z0-9]+)*"
_PREFIX = re.compile(rf"{_HOST}(/{_PATH})*")
DOCKER_HUB = "docker.io"


def _registry_prefix(value: str) -> str:
    if len(value) > 255 or not _PREFIX.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a registry (a lower-case host such as registry.example.com, "
            "optionally with :port and a /path prefix such as ghcr.io/acme)"
        )
    return value


RegistryPrefix = Annotated[str, AfterValidator(_registry_prefix)]


def repository(image: str) -> str:
    """`registry/path/name` of an image reference, without tag or digest, as a runtime pulls."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:  # a tag, not a registry port (ports live in the first part only)
        name = name[: name.rfind(":")]
    first, slash, _ = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return name
    return f"{DOCKER_HUB}/{name}" if slash else f"{DOCKER_HUB}/library/{name}"


def pinned(image: str) -> bool:
    """Pinned by content digest (`@sha256:...`), so every pull gets the same bytes."""
    return bool(re.search(r"@sha256:[0-9a-f]{64}$", image))


class ImageSpec(Strict):
    namespaces: list[DnsLabel] | None = None
    namespaceSelector: LabelSelector | None = None
    allowedRegistries: Annotated[list[RegistryPrefix], Field(min_length=1)]
    requireDigest: bool = False

    def selects(self, namespace: str, namespace_labels: dict[str, str]) -> bool:
        """Names OR class; with neither given, every namespace."""
        if self.namespaces is None and self.namespaceSelector is None:
            return True
        by_name = self.namespaces is not None and namespace in self.namespaces
        by_class = self.namespaceSelector is not None and self.namespaceSelector.matches(
            namespace_labels
        )
        return by_name or by_class

    def allows(self, image: str) -> bool:
        found = repository(image)
        return any(found == p or found.startswith(p + "/") for p in self.allowedRegistries)


class ImagePolicy(Strict):
    apiVersion: Literal["kubecrew.io/v1alpha1"] = API_VERSION
    kind: Literal["ImagePolicy"] = "ImagePolicy"
    metadata: Metadata
    spec: ImageSpec
