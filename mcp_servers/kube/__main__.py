"""`python -m mcp_servers.kube`: the kube MCP server over stdio, for any MCP host.

    python -m mcp_servers.kube --kubeconfig ~/.kube/config --context prod --read-only \
        --namespaces shop,payments
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_servers.common import transport
from mcp_servers.kube.server import build
from mcp_servers.kube.settings import KubeSettings


def settings_from(argv: list[str] | None = None) -> KubeSettings:
    return _parse(argv)[0]


def _parse(argv: list[str] | None) -> tuple[KubeSettings, transport.TransportOptions]:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.kube", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, help="default: $KUBECONFIG or ~/.kube/config")
    parser.add_argument("--context", help="default context (default: the current one)")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    parser.add_argument("--namespaces", help="comma-separated allow-list of namespaces")
    transport.add_arguments(parser)
    options = parser.parse_args(argv)
    settings = KubeSettings(
        kubeconfig=options.kubeconfig,
        context=options.context,
        read_only=options.read_only,
        namespaces=KubeSettings.namespace_list(options.namespaces),
    )
    return settings, transport.from_arguments(parser, options)


def main(argv: list[str] | None = None) -> None:
    settings, options = _parse(argv)
    transport.serve(build(settings), options, name="kube")


if __name__ == "__main__":
    main()
