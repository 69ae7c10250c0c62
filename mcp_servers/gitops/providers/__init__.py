"""Pull-request providers behind one interface (`base.Provider`): `local` (PR records kept beside
the repository, merges done by git itself) and `github` (pull requests on GitHub, over its REST
API, with the repository a clone of the GitHub one).

`provider_for` is the one place that chooses between them, and the one place that reads the
GitHub token from the environment, so a misconfiguration stops the server at start with a
message saying what to set, rather than failing on the first tool call.
"""

from __future__ import annotations

import os

from core.errors import InvalidArgument
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.providers.github import GitHubProvider
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import GitopsSettings


def provider_for(settings: GitopsSettings, repo: Repository) -> Provider:
    if settings.provider == "local":
        return LocalProvider(repo, settings.state_dir)
    if not settings.github_repo:
        raise InvalidArgument(
            "the github provider needs the repository: pass --github-repo owner/name"
        )
    token = os.environ.get(settings.github_token_env, "").strip()
    if not token:
        raise InvalidArgument(
            f"the github provider needs a token in ${settings.github_token_env}: set it to a "
            f"token that may open, review and merge pull requests of {settings.github_repo}"
        )
    return GitHubProvider(
        repo,
        slug=settings.github_repo,
        token=token,
        token_env=settings.github_token_env,
        api_url=settings.github_api_url,
        remote=settings.remote,
    )
