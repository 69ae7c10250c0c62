"""`python -m mcp_servers.kube`: the kube MCP server over stdio, for any MCP host.

    python -m mcp_servers.kube --kubeconfig ~/.kube/config --context prod --read-only \
        --namespaces shop,payments
    python -m mcp_servers.kube --policies policies --policy-store kubernetes --as-agent dev-team
    python -m mcp_servers.kube --registry '*=https://mirror.example/{host}' --registry gcr.io=direct

Unusable policies or store end the start with a one-line usage error, not a traceback.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ToolError
from mcp_servers.common import transport
from mcp_servers.kube.settings import AGENT, KubeSettings

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP


def settings_from(argv: list[str] | None = None) -> KubeSettings:
    return _parse(argv)[0]


def _parse(argv: list[str] | None) -> tuple[KubeSettings, transport.TransportOptions]:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.kube", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, help="default: $KUBECONFIG or ~/.kube/config")
    parser.add_argument("--context", help="default context (default: the current one)")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    parser.add_argument("--namespaces", help="comma-separated allow-list of namespaces")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="ask the API server on every read (default: inventory reads, overviews and "
        "diagnoses come from watch-backed caches once a kind was read)",
    )
    parser.add_argument(
        "--policies",
        type=Path,
        action="append",
        default=[],
        help="policy file or directory, repeatable, plus each path in $KUBECREW_POLICIES; "
        "given, every write is judged by them and audited (default: no policy gate)",
    )
    parser.add_argument(
        "--policy-store",
        help="the policy store for approved proposals and the audit log: a SQLite file or "
        "kubernetes[:CONTEXT] (default: $KUBECREW_POLICY_STORE, else the kubecrew home's)",
    )
    parser.add_argument(
        "--as-agent",
        default=AGENT,
        help=f"the agent the gate judges and records (default: {AGENT})",
    )
    parser.add_argument(
        "--registry",
        action="append",
        default=[],
        metavar="HOST=URL",
        help="a registry the image tools may ask, repeatable: HOST (or *) = the base URL of its "
        "/v2/ ({host} allowed; `direct`: the registry itself) (default: none, offline)",
    )
    transport.add_arguments(parser)
    options = parser.parse_args(argv)
    try:
        registries = KubeSettings.registry_map(options.registry)
    except ToolError as exc:
        parser.error(exc.message)
    settings = KubeSettings(
        kubeconfig=options.kubeconfig,
        context=options.context,
        read_only=options.read_only,
        namespaces=KubeSettings.namespace_list(options.namespaces),
        policies=KubeSettings.policy_list(options.policies),
        policy_store=options.policy_store,
        agent=options.as_agent,
        registries=registries,
        cache=not options.no_cache,
    )
    return settings, transport.from_arguments(parser, options)


def main(argv: list[str] | None = None) -> None:
    settings, options = _parse(argv)

    def build() -> FastMCP:
        from mcp_servers.kube.server import build

        try:
            return build(settings)
        except ToolError as exc:
            raise SystemExit(f"python -m mcp_servers.kube: error: {exc.message}") from None

    transport.serve_lazily(build, settings, options, name="kube", eager=bool(settings.policies))


if __name__ == "__main__":
    main()
