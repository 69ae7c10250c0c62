"""What the gitops server's tool modules share: the engine parts one server works with (and the
audit trail its merges and syncs are recorded in), the annotations of its write tools, and the
check every free-text argument passes."""

from __future__ import annotations

from dataclasses import dataclass

from mcp.types import ToolAnnotations

from core.connection import Clusters
from core.errors import InvalidArgument
from mcp_servers.gitops.audit import AuditTrail
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.resources import Resources
from mcp_servers.gitops.settings import GitopsSettings

CLUSTER_READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
)


def write_hints(*, destructive: bool, idempotent: bool, cluster: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        readOnlyHint=False,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=cluster,
    )


def text_arg(value: str, argument: str, limit: int = 20_000) -> str:
    if len(value) > limit or "\x00" in value:
        raise InvalidArgument(f"{argument} is too long or holds a NUL character")
    return value


@dataclass
class Deps:
    settings: GitopsSettings
    repo: Repository
    provider: Provider
    clusters: Clusters
    trail: AuditTrail

    @property
    def base(self) -> str:
        return self.settings.base_branch

    def ref(self, ref: str) -> str:
        return ref or self.settings.base_branch

    def resources(self, context: str | None) -> Resources:
        return Resources(self.clusters.api(context), self.settings.default_namespace)
