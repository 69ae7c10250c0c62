"""The local clone's side of the GitHub PR provider: git push and fetch against its remote.

Branches are pushed before a PR is opened; after a merge on GitHub the base branch is fetched and
the local one fast-forwarded (`catch_up`), so the next read, diff or sync sees the merge commit.
git runs with `GIT_TERMINAL_PROMPT=0`, so a remote that wants a password fails instead of asking
on our stdin, and whatever git says is scrubbed of credentials before it goes into a message.
"""

from __future__ import annotations

import re

import git

from core.errors import Conflict, Unavailable
from mcp_servers.gitops.repo import Repository

_CREDENTIALS_IN_URL = re.compile(r"(\w+://)[^/@\s]+@")


class GitRemote:
    """Pushes to and fetches from one remote of the local clone."""

    def __init__(self, repo: Repository, *, remote: str, token: str) -> None:
        self.repo, self.remote = repo, remote
        self._token = token

    def push(self, branch: str) -> None:
        try:
            self._git("push", self.remote, f"refs/heads/{branch}:refs/heads/{branch}")
        except git.GitCommandError as exc:
            detail = self._scrub(f"{exc.stderr} {exc.stdout}")
            if "rejected" in detail:
                raise Conflict(
                    f"{self.remote} refused the push of branch {branch} ({detail}); if the "
                    "branch exists there with other commits, propose under another branch name"
                ) from exc
            raise Unavailable(
                f"could not push branch {branch} to {self.remote} ({detail}); check that git "
                "can reach it and has credentials for it (an SSH key or a credential helper)"
            ) from exc

    def fetch(self, branch: str) -> str:
        """Fetch `branch` from the remote; its remote-tracking ref."""
        tracking = f"refs/remotes/{self.remote}/{branch}"
        try:
            self._git("fetch", "--quiet", self.remote, f"+refs/heads/{branch}:{tracking}")
        except git.GitCommandError as exc:
            detail = self._scrub(str(exc.stderr))
            raise Unavailable(f"could not fetch {branch} from {self.remote} ({detail})") from exc
        return tracking

    def catch_up(self, base: str, *, merged: str) -> None:
        """Fast-forward the local `base` to GitHub's, carrying a checkout along like git pull."""
        new = self._sha(self.fetch(base)) or merged
        old = self._sha(f"refs/heads/{base}")
        if old == new:
            return
        why = ""
        if old is None:
            self._git("update-ref", f"refs/heads/{base}", new, "0" * 40)
        elif (g := self.repo.git_repo).is_ancestor(g.commit(old), g.commit(new)):
            try:
                if self._checked_out() == base:
                    self._git("merge", "--ff-only", "--quiet", new)
                else:
                    self._git("update-ref", f"refs/heads/{base}", new, old)
            except git.GitCommandError as exc:
                why = f"the checkout has local changes in the way ({str(exc.stderr).strip()[:300]})"
        else:
            why = f"the local {base} has commits GitHub's lacks"
        if why:
            raise Conflict(
                f"merged on GitHub as {merged[:12]}, but the local {base} was not brought up to "
                f"date: {why}; reconcile it with {self.remote}/{base} by hand"
            )

    def _git(self, *args: str) -> str:
        """A git command that fails instead of asking for a password on our stdin (which, over
        the stdio transport, is the MCP stream)."""
        g = self.repo.git_repo.git
        with g.custom_environment(GIT_TERMINAL_PROMPT="0"):
            return str(g.execute(["git", *args]))

    def _sha(self, ref: str) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except git.GitCommandError:
            return None

    def _checked_out(self) -> str | None:
        repo = self.repo.git_repo
        if repo.bare or repo.head.is_detached:
            return None
        return repo.active_branch.name

    def _scrub(self, text: str) -> str:
        text = _CREDENTIALS_IN_URL.sub(r"\1***@", text.strip())
        return text.replace(self._token, "***")[:500] if self._token else text[:500]
