"""Deprecated API versions the sandbox serves beside the current ones, and what serving one means.

A real API server serves a kind in several versions of its group at once and converts between
them: an object is stored once, in one version, and read or written in any served one, the
`apiVersion` of each answer following the request's path. Each `DeprecatedVersion` below is such
a version, served as a pure alias of the group's current version for some of its resources: the
same schema (so no field is converted, only `apiVersion`: `to_storage` for a request's body,
`to_served` for an answer). It is served, in discovery, OpenAPI and routing (sandbox.registry),
while the control plane's minor is below its `removed` minor, so an upgrade that reaches it makes
its paths 404 as a real server's unserved version does. From its `deprecated` minor on, every
request to it carries the API server's warning (`warning`, worded as k8s.io/apiserver's
endpoints/deprecation words it, printed by kubectl as `Warning: ...`) and is recorded for the
`apiserver_requested_deprecated_apis` gauge (`DeprecatedRequests`, with the labels of
k8s.io/apiserver's endpoints/metrics).

The versions and their releases are the sandbox's own. Kubernetes' deprecation guide lists no
removal after 1.32, so these are betas Kubernetes never shipped, of kinds the sandbox serves, with
removal minors chosen so that an upgrade from 1.37 to 1.38 meets one (batch/v1beta2 CronJob) and
the next upgrade, to 1.39, the other (policy/v1beta2 PodDisruptionBudget). The Cluster Operator
keeps the same facts as data in agents/cluster_operator/removed_apis.py (agents never import the
sandbox): change both together. Adding a version is adding one entry to `DEPRECATED`.

Knows no HTTP and no storage: bodies arrive decoded or as the JSON bytes the server wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from sandbox.version import release

MAJOR = 1  # every release below is Kubernetes 1.x

Release = tuple[int, int]  # (major, minor) of a control plane


@dataclass(frozen=True)
class DeprecatedVersion:
    """One deprecated group/version, served as an alias of its group's current version."""

    group: str
    version: str
    replacement: str  # the group's current version: objects are stored and served in it too
    resources: tuple[tuple[str, str], ...]  # (resource, Kind) pairs it serves
    deprecated: int  # the minor from which its requests are warned and recorded
    removed: int  # the first minor that no longer serves it

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def replacement_api_version(self) -> str:
        return f"{self.group}/{self.replacement}" if self.group else self.replacement

    @property
    def removed_release(self) -> str:
        """The `removed_release` label: "1.38"."""
        return f"{MAJOR}.{self.removed}"

    def served_at(self, at: Release) -> bool:
        return at < (MAJOR, self.removed)

    def warned_at(self, at: Release) -> bool:
        return at >= (MAJOR, self.deprecated)

    def warning(self, kind: str) -> str:
        return (
            f"{self.api_version} {kind} is deprecated in v{MAJOR}.{self.deprecated}+, "
            f"unavailable in v{MAJOR}.{self.removed}+; use {self.replacement_api_version} {kind}"
        )


DEPRECATED: tuple[DeprecatedVersion, ...] = (
    DeprecatedVersion(
        group="batch",
        version="v1beta2",
        replacement="v1",
        resources=(("cronjobs", "CronJob"),),
        deprecated=35,
        removed=38,
    ),
    DeprecatedVersion(
        group="policy",
        version="v1beta2",
        replacement="v1",
        resources=(("poddisruptionbudgets", "PodDisruptionBudget"),),
        deprecated=36,
        removed=39,
    ),
)


def release_of(git_version: str) -> Release:
    """(major, minor) of a control plane version `sandbox.version.parse_version` accepted."""
    major, minor, _ = release(git_version)
    return major, minor


# -- conversion: only apiVersion differs between an alias and its current version --------------


def to_storage(value: Any, served: DeprecatedVersion) -> Any:
    """A decoded request body: an object written in the deprecated version, as the current one."""
    if isinstance(value, dict) and value.get("apiVersion") == served.api_version:
        return {**value, "apiVersion": served.replacement_api_version}
    return value


def to_served(body: bytes, served: DeprecatedVersion) -> bytes:
    """A JSON answer as the server wrote it (an object, a list, a Table, or newline-delimited
    watch events) with the `apiVersion` of each object of the alias's kinds in the served one."""
    kinds = {kind for _, kind in served.resources}
    kinds |= {f"{kind}List" for kind in kinds}
    if served.replacement_api_version.encode() not in body:
        return body
    try:  # the server writes each document on one line, a watch one per event
        lines = [
            orjson.dumps(_served(orjson.loads(line), served, kinds)) if line.strip() else line
            for line in body.split(b"\n")
        ]
    except orjson.JSONDecodeError:
        return body  # not JSON after all (a log, a protobuf): nothing to convert
    return b"\n".join(lines)


def _served(value: Any, served: DeprecatedVersion, kinds: set[str]) -> Any:
    # Only where objects sit in an answer: the body, a list's items, a watch event's object and
    # a Table's rows; never inside an object (managedFields and owner references name the
    # version their writer used).
    if isinstance(value, dict):
        if value.get("apiVersion") == served.replacement_api_version and value.get("kind") in kinds:
            value["apiVersion"] = served.api_version
        for key in ("items", "rows"):
            if isinstance(value.get(key), list):
                value[key] = [_served(item, served, kinds) for item in value[key]]
        if isinstance(value.get("object"), dict):
            value["object"] = _served(value["object"], served, kinds)
    return value


# -- the record behind apiserver_requested_deprecated_apis -------------------------------------


@dataclass(frozen=True, order=True)
class DeprecatedRequest:
    """One series of the gauge; its fields are the real metric's labels."""

    group: str
    version: str
    resource: str
    subresource: str
    removed_release: str


@dataclass
class DeprecatedRequests:
    """Each deprecated group/version/resource requested since the API server started: a real
    server sets its gauge to 1 on the first such request and forgets it only on restart."""

    _seen: set[DeprecatedRequest] = field(default_factory=set)

    def record(self, served: DeprecatedVersion, resource: str, subresource: str) -> None:
        self._seen.add(
            DeprecatedRequest(
                served.group, served.version, resource, subresource, served.removed_release
            )
        )

    def __iter__(self) -> Iterator[DeprecatedRequest]:
        return iter(sorted(self._seen))
