"""What the gitops server is pointed at: one repository, one cluster, one PR provider.

One frozen object travels into every engine part, so nothing reads the environment or keeps a
module-level client. The PR records of the local provider live in `state_dir`, outside the work
tree, so they never show up as changes of the repository they describe. For the GitHub provider
the settings name the environment variable holding the token, never the token itself, so the
settings can be logged or shown without leaking it; `providers.provider_for` reads it once.

Who writes is configuration too: `author_name` is the identity the server opens pull requests,
reviews and comments as (on GitHub, the token's account is), whatever a tool's caller says, so
an agent cannot review in a person's name. The crew's agents all write as `CREW_AUTHOR`, and the
PR channel never counts a review or comment by it as a person's answer.

`audit` turns on the audit trail (`audit`): each merge and each sync that writes to the cluster
is recorded in the policy store's audit log (`policy_store`, as the kube server names it) as
`agent`. Off (the default), no store is opened, so hosts that never heard of policies keep
working.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MANAGED_BY_LABEL = "kubecrew.io/gitops-repo"  # set on every object sync applies; prune uses it
FIELD_MANAGER = "kubecrew"
CREW_AUTHOR = "kubecrew"  # who the crew's own gitops servers write to the forge as
AGENT = "gitops-mcp"  # who the audit log says merged or synced, when no agent is named


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
    author_name: str = CREW_AUTHOR  # PR author, reviewer and commenter (local provider)
    author_email: str = "kubecrew@localhost"
    read_only: bool = False
    allow_direct_revert: bool = False  # revert_pr(direct=True) commits straight onto the base
    repo_url: str = ""  # another URL this repository is known by (to find Argo CD / Flux apps)
    audit: bool = False  # record merges and syncs in the policy store's audit log
    policy_store: str | None = None  # open_store's spec; None: $KUBECREW_POLICY_STORE, else home
    agent: str = AGENT  # who the audit log says acted

    @staticmethod
    def default_state_dir(repo: Path) -> Path:
        """`<repo>.kubecrew` beside the repository: outside its work tree, easy to find."""
        return repo.with_name(repo.name + ".kubecrew")

    @property
    def label_value(self) -> str:
        return self.repo_id or self.repo.resolve().name.removesuffix(".git")
