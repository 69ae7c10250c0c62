"""`python -m mcp_servers.kube`: the kube MCP server over stdio, for any MCP host.

    python -m mcp_servers.kube --kubeconfig ~/.kube/config --context prod --read-only \
        --namespaces shop,payments
    python -m mcp_servers.kube --policies policies --policy-store kubernetes --as-agent dev-team
    python -m mcp_servers.kube --registry '*=https://mirror.example/{host}' --registry gcr.io=direct

Unusable policies or store end the start with a one-line usage error, not a traceback.

A stdio start with plain options (`quick`) that was made before answers the host's `initialize`
and `tools/list` from what that start recorded (mcp_servers/common/prelude.py), importing
nothing else until then; `kubecrew mcp kube` takes the same path for the same options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mcp_servers.common import prelude

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

    from mcp_servers.common.transport import TransportOptions
    from mcp_servers.kube.settings import KubeSettings

# What a start may say and still be answered from a manifest: the tools it lists depend on
# nothing else. Policies (the gate), HTTP, health ports and telemetry take the full start.
QUICK_FLAGS = {"--read-only", "--no-cache", "--cache"}
QUICK_OPTIONS = {"--kubeconfig", "--context", "--namespaces", "--as-agent", "--registry"}
FULL_ENV = ("KUBECREW_POLICIES", "OTEL_EXPORTER_OTLP_ENDPOINT")


def quick(argv: list[str], environ: Mapping[str, str] = os.environ) -> bool:
    """Serve this start from its manifest, if it is a plain stdio one that has one; False
    when it takes the full start (nothing was read or answered)."""
    if not plain(argv, environ):
        return False
    path = prelude.manifest_for("kube", argv, environ)
    taken = prelude.take_over(path, lambda: _built(argv))
    if taken is None:
        return False
    server, handover = taken
    if server is not None:
        from mcp_servers.common import stdio

        stdio.serve(server, handover=handover)
    return True


def plain(argv: list[str], environ: Mapping[str, str] = os.environ) -> bool:
    """Whether `argv` starts a stdio server whose tool list depends on nothing but the code."""
    if any(environ.get(name) for name in FULL_ENV):
        return False
    words = iter(argv)
    for word in words:
        option, equals, value = word.partition("=")
        if option == "--transport":
            if (value if equals else next(words, "")) != "stdio":
                return False
        elif option in QUICK_OPTIONS:
            if not equals and next(words, None) is None:
                return False
        elif word not in QUICK_FLAGS:
            return False
    return True


def _built(argv: list[str]) -> FastMCP:
    from mcp_servers.kube.server import build

    return build(settings_from([word for word in argv if word != "--cache"]))


def settings_from(argv: list[str] | None = None) -> KubeSettings:
    return _parse(argv)[0]


def _parse(argv: list[str] | None) -> tuple[KubeSettings, TransportOptions]:
    import argparse
    from pathlib import Path

    from core.errors import ToolError
    from mcp_servers.common import transport
    from mcp_servers.kube.settings import AGENT, KubeSettings

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
    argv = sys.argv[1:] if argv is None else argv
    if quick(argv):
        return
    from core.errors import ToolError
    from mcp_servers.common import transport

    settings, options = _parse([word for word in argv if word != "--cache"])  # kubecrew's flag

    def build() -> FastMCP:
        from mcp_servers.kube.server import build

        try:
            return build(settings)
        except ToolError as exc:
            raise SystemExit(f"python -m mcp_servers.kube: error: {exc.message}") from None

    manifest = prelude.manifest_for("kube", argv) if plain(argv) else None
    transport.serve_recording(build, manifest, options, name="kube")


if __name__ == "__main__":
    main()
