"""`python -m mcp_servers.kube`: the kube MCP server over stdio, for any MCP host.

    python -m mcp_servers.kube --kubeconfig ~/.kube/config --context prod --read-only \
        --namespaces shop,payments
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_servers.kube.server import build
from mcp_servers.kube.settings import KubeSettings


def settings_from(argv: list[str] | None = None) -> KubeSettings:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.kube", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, help="default: $KUBECONFIG or ~/.kube/config")
    parser.add_argument("--context", help="default context (default: the current one)")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    parser.add_argument("--namespaces", help="comma-separated allow-list of namespaces")
    options = parser.parse_args(argv)
    allowed = tuple(n.strip() for n in options.namespaces.split(",") if n.strip())
    return KubeSettings(
        kubeconfig=options.kubeconfig,
        context=options.context,
        read_only=options.read_only,
        namespaces=allowed if options.namespaces else None,
    )


def main(argv: list[str] | None = None) -> None:
    build(settings_from(argv)).run("stdio")


if __name__ == "__main__":
    main()
