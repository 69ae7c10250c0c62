"""`python -m mcp_servers.policy [--store SPEC] [--as NAME --group G | --agent NAME]`: the policy
server over stdio (or streamable HTTP). Unusable policies, store or identity end the start with
a one-line usage error, not a traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.errors import ToolError
from core.policy.settings import PolicySettings
from mcp_servers.common import transport
from mcp_servers.policy.server import build


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.policy")
    parser.add_argument(
        "--policies",
        type=Path,
        action="append",
        default=[],
        help="policy file or directory, repeatable (default: ./policies, else the shipped "
        "defaults, plus each path in $KUBECREW_POLICIES)",
    )
    parser.add_argument(
        "--store",
        help="the policy store: a SQLite file, or kubernetes[:CONTEXT] (default: "
        "$KUBECREW_POLICY_STORE, else policy/store.sqlite in $KUBECREW_STATE, else in "
        "$KUBECREW_HOME)",
    )
    parser.add_argument(
        "--as",
        dest="person",
        help="the person this server acts as (default: $KUBECREW_USER, else the login name)",
    )
    parser.add_argument(
        "--group",
        dest="groups",
        action="append",
        default=[],
        help="a group of that person, repeatable (default: $KUBECREW_GROUPS, comma-separated)",
    )
    parser.add_argument("--agent", help="act as this agent: propose and evaluate, never approve")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    transport.add_arguments(parser)
    args = parser.parse_args(argv)
    options = transport.from_arguments(parser, args)
    settings = PolicySettings(
        policies=tuple(args.policies),
        store=args.store,
        person=args.person,
        groups=tuple(args.groups),
        agent=args.agent,
        read_only=args.read_only,
    )
    try:
        server = build(settings)
    except ToolError as exc:
        parser.error(exc.message)
    transport.serve(server, options, name="policy")


if __name__ == "__main__":
    main()
