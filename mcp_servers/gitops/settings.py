"""What the gitops server is pointed at: one repository, one cluster, one PR provider.

One frozen object travels into every engine part, so nothing reads the environment or keeps a
module-level client. The PR records of the local provider live in `state_dir`, outside the work
tree, so they never show up as changes of the repository they describe. For the GitHub provider
the settings name the environment variable holding the token, never the token itself, so the
settings can be logged or shown without leaking it; `providers.provider_for` reads it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MANAGED_BY_LABEL = "kubecrew.io/gitops-repo"  # set on every object sync applies; prune uses it
FIELD_MANAGER = "kubecrew"


@dataclass(frozen=True)
class GitopsSettings:
    repo: Path  # a git repository (bare or with a work tree) holding the manifests
    state_dir: Path  # where the local provider keeps its PR records; never inside the work tree
    base_branch: str = "main"
    provider: Literal["local", "github"] = "local"
    github_repo: str = ""  # "owner/name" of the GitHub repository (provider "github")
    github_api_url: str = "https://api.github.com"  # GitHub Enterprise: https://HOST/api/v3
    github_token_env: str = "GITHUB_TOKEN"  # the variable holding the token, not the token
    remote: str = "origin"  # the git remote of `repo` that is the GitHub repository
    kubeconfig: Path | None = None  # None: $KUBECONFIG or ~/.kube/config
    context: str | None = None  # None: the kubeconfig's current context
    default_namespace: str = "default"  # for namespaced manifests that name none
    repo_id: str = ""  # value of MANAGED_BY_LABEL; empty: the repository directory's name
    author_name: str = "kubecrew"
    author_email: str = "kubecrew@localhost"
    read_only: bool = False
    allow_direct_revert: bool = False  # revert_pr(direct=True) commits straight onto the base
    repo_url: str = ""  # another URL this repository is known by (to find Argo CD / Flux apps)

    @staticmethod
    def default_state_dir(repo: Path) -> Path:
        """`<repo>.kubecrew` beside the repository: outside its work tree, easy to find."""
        return repo.with_name(repo.name + ".kubecrew")

    @property
    def label_value(self) -> str:
        return self.repo_id or self.repo.resolve().name.removesuffix(".git")
