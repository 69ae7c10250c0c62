"""`python -m mcp_servers.metrics`: the metrics MCP server over stdio.

Without --prometheus-url it answers from metrics.k8s.io through the kubeconfig, and says which
answers are unavailable.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_servers.common import transport
from mcp_servers.metrics.server import build
from mcp_servers.metrics.settings import MetricsSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.metrics", description=__doc__)
    parser.add_argument("--prometheus-url", help="Prometheus HTTP API base URL")
    parser.add_argument("--bearer-token-file", type=Path, help="token sent to Prometheus")
    parser.add_argument("--ca-file", type=Path, help="CA bundle for Prometheus's TLS")
    parser.add_argument("--kubeconfig", type=Path, help="for the metrics.k8s.io fallback")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    transport.add_arguments(parser)
    args = parser.parse_args(argv)
    options = transport.from_arguments(parser, args)
    settings = MetricsSettings(
        prometheus_url=args.prometheus_url,
        bearer_token_file=args.bearer_token_file,
        ca_file=args.ca_file,
        kubeconfig=args.kubeconfig,
        context=args.context,
    )
    transport.serve(build(settings), options, name="metrics")


if __name__ == "__main__":
    main()
