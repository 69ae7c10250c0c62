"""`python -m mcp_servers.gitops --repo PATH --state-dir PATH`: the gitops server over stdio."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp_servers.common import transport
from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import GitopsSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.gitops")
    parser.add_argument("--repo", type=Path, required=True, help="git repository of manifests")
    parser.add_argument("--state-dir", type=Path, help="PR records (default: <repo>.kubecrew)")
    parser.add_argument("--base-branch", default="main")
    parser.add_argument("--kubeconfig", type=Path)
    parser.add_argument("--context")
    parser.add_argument("--namespace", default="default", help="for manifests that name none")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    transport.add_arguments(parser)
    args = parser.parse_args(argv)
    options = transport.from_arguments(parser, args)
    repo = args.repo.resolve()
    settings = GitopsSettings(
        repo=repo,
        state_dir=args.state_dir or GitopsSettings.default_state_dir(repo),
        base_branch=args.base_branch,
        kubeconfig=args.kubeconfig,
        context=args.context,
        default_namespace=args.namespace,
        read_only=args.read_only,
    )
    transport.serve(build(settings), options, name="gitops")


if __name__ == "__main__":
    main()
