"""What one kube MCP server is started with: which kubeconfig, which context, how much it may do.

The settings travel as one frozen object into the engine and the tool registrations; nothing reads
environment variables or globals after start-up. `namespaces` is an allow-list: when set, every
namespaced call outside it is refused and every all-namespaces list is narrowed to it.

`policies` turns the policy gate on (`gate`): every write tool is then judged by those policy
documents and recorded in the policy store's audit log as `agent`. Empty (the default), the
server writes as it always did, so hosts that never heard of policies keep working.

`registries` is the mirror map the registry client reads (`registries.py`): registry host ->
base URL whose `/v2/` is that registry (`*` for every other host, `{host}` in it; `direct` for
the registry's own API). Empty (the default), no registry is ever asked: diagnosis proposes
only images the cluster has pulled, as offline clusters need.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import InvalidArgument, PermissionDenied
from core.policy.settings import POLICIES_ENV

AGENT = "kube-mcp"


@dataclass(frozen=True)
class KubeSettings:
    kubeconfig: Path | None = None  # None: $KUBECONFIG or ~/.kube/config, as kubectl does
    context: str | None = None  # None: the kubeconfig's current context
    read_only: bool = False  # True: no write tool is registered at all
    namespaces: tuple[str, ...] | None = None  # None: every namespace the identity may see
    policies: tuple[Path, ...] = ()  # policy files or directories; empty: no policy gate
    policy_store: str | None = None  # open_store's spec; None: $KUBECREW_POLICY_STORE, else home
    agent: str = AGENT  # who the audit log says wrote, and whom the policies judge
    # registry host -> base URL of its /v2/ (see the module docstring); empty: ask none
    registries: Mapping[str, str] = field(default_factory=dict, hash=False)
    # the kubeconfig contexts a fleet's tools may name (`context=`); empty: any of the file's
    fleet: tuple[str, ...] = ()
    # Answer stale-ok reads from watch-backed caches (common.cache): on for a host's server (both
    # entry points); off for the crew's in-process servers, whose gitops server's syncs would not
    # reach one kube server's cache until the crew's servers share a cache.
    cache: bool = False

    @staticmethod
    def policy_list(
        given: Sequence[Path] = (), environ: Mapping[str, str] = os.environ
    ) -> tuple[Path, ...]:
        """`--policies` paths, plus each path in $KUBECREW_POLICIES (os.pathsep-separated)."""
        named = environ.get(POLICIES_ENV, "").split(os.pathsep)
        return (*given, *(Path(p) for p in named if p))

    @staticmethod
    def namespace_list(text: str | None) -> tuple[str, ...] | None:
        """`--namespaces a,b` as an allow-list; None (no limit) when not given or empty."""
        if not text:
            return None
        return tuple(n.strip() for n in text.split(",") if n.strip())

    @staticmethod
    def registry_map(given: Sequence[str]) -> dict[str, str]:
        """`--registry HOST=URL` (repeatable) as the mirror map; InvalidArgument when one has no
        `=`."""
        mirrors: dict[str, str] = {}
        for entry in given:
            host, sep, url = entry.partition("=")
            if not sep or not host.strip() or not url.strip():
                raise InvalidArgument(
                    f"--registry {entry!r}: give HOST=URL, e.g. docker.io=https://mirror.example "
                    "or '*=https://mirror.example/{host}'"
                )
            mirrors[host.strip()] = url.strip()
        return mirrors

    def allows(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def check_context(self, context: str | None) -> str | None:
        """The context a call acts in (its own, else the server's), refused outside the fleet."""
        chosen = context or self.context
        if context and self.fleet and context not in self.fleet and context != self.context:
            raise PermissionDenied(
                f"context {context!r} is not a cluster of this crew's fleet "
                f"({', '.join(self.fleet)}); name one of those"
            )
        return chosen

    def check_namespace(self, namespace: str) -> str:
        if not self.allows(namespace):
            allowed = ", ".join(self.namespaces or ())
            raise PermissionDenied(
                f"namespace {namespace!r} is outside this server's allow-list ({allowed}); "
                "use one of those namespaces"
            )
        return namespace
