"""`python -m mcp_servers.gitops --repo PATH [--provider github --github-repo OWNER/NAME]`: the
gitops server over stdio (or streamable HTTP). A configuration the server cannot start with
(no token for GitHub, no such remote, an unusable policy store) ends with a one-line usage
error, not a traceback."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.errors import ToolError
from mcp_servers.common import transport
from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import AGENT, CREW_AUTHOR, GitopsSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.gitops")
    parser.add_argument("--repo", type=Path, required=True, help="git repository of manifests")
    parser.add_argument("--state-dir", type=Path, help="PR records (default: <repo>.kubecrew)")
    parser.add_argument("--base-branch", default="main")
    parser.add_argument("--kubeconfig", type=Path)
    parser.add_argument("--context")
    parser.add_argument("--namespace", default="default", help="for manifests that name none")
    parser.add_argument("--read-only", action="store_true", help="register no write tool")
    parser.add_argument(
        "--provider",
        choices=["local", "github"],
        default="local",
        help="where pull requests live: 'local' keeps them beside the repository (no forge "
        "needed); 'github' opens them on GitHub, with --repo a clone of the GitHub repository "
        "(remote 'origin') and a token in $GITHUB_TOKEN",
    )
    parser.add_argument("--github-repo", default="", help="github: the repository, owner/name")
    parser.add_argument(
        "--github-api-url",
        default="https://api.github.com",
        help="github: REST API base; GitHub Enterprise Server is https://HOST/api/v3",
    )
    parser.add_argument(
        "--allow-direct-revert",
        action="store_true",
        help="let revert_pr(direct=true) commit the revert straight onto the base branch",
    )
    parser.add_argument(
        "--repo-url", default="", help="another URL of this repository (finds Argo CD / Flux)"
    )
    parser.add_argument(
        "--author",
        default=CREW_AUTHOR,
        help="who this server opens PRs, reviews and comments as (local provider; GitHub uses "
        f"the token's account); no tool can say otherwise (default: {CREW_AUTHOR}, the crew)",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="record each merge and each sync that writes to the cluster in the policy "
        "store's audit log (default: no audit, no store)",
    )
    parser.add_argument(
        "--policy-store",
        help="the policy store --audit writes to: a SQLite file or kubernetes[:CONTEXT] "
        "(default: $KUBECREW_POLICY_STORE, else the kubecrew home's); given, implies --audit",
    )
    parser.add_argument(
        "--as-agent", default=AGENT, help=f"who the audit log says acted (default: {AGENT})"
    )
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
        provider=args.provider,
        github_repo=args.github_repo,
        github_api_url=args.github_api_url,
        allow_direct_revert=args.allow_direct_revert,
        repo_url=args.repo_url,
        author_name=args.author,
        audit=args.audit or args.policy_store is not None,
        policy_store=args.policy_store,
        agent=args.as_agent,
    )
    try:
        server = build(settings)
    except ToolError as exc:
        parser.error(exc.message)
    transport.serve(server, options, name="gitops")


if __name__ == "__main__":
    main()
