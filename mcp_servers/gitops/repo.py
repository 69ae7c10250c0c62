"""A repository of manifests, read and written through git's object store.

Reads come from a ref (a branch, tag or commit), never from the work tree, so a half-edited
checkout never leaks into what we list, diff or sync. Writes build commits with a private index
file (`GIT_INDEX_FILE`) and move branch refs, so they work in a bare repository and never touch
the files of whoever has the repository checked out. The one exception is `merge` (or a direct
`revert_onto`) into the branch that is checked out: git then carries the work tree along
(`read-tree -m -u`), as `git merge` would. `export` writes a ref's files into a scratch directory
for tools that can only read files (kustomize), never the work tree.

GitPython errors are wrapped into the tool error tree here; nothing above sees them.

Every file read here that holds Secret values (`secret_files`: a Secret manifest, or what a
secretGenerator reads) is touched, so the tool call that read it scrubs those values from what it
answers: the documents listed, a file read whole (and the same file in the commit's parents,
since a diff of that commit shows both sides), and both sides of each file in a history or a
diff. A file that does not parse is reported by `yamltext.problem`, which quotes none of it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any

import git
import yaml
from gitdb.base import IStream  # type: ignore[import-untyped]

from core.errors import Conflict, InvalidArgument, NotFound, ToolError
from mcp_servers.common.secret_values import touch
from mcp_servers.common.yamltext import problem
from mcp_servers.gitops import paths, secret_files
from mcp_servers.gitops.secret_files import KUSTOMIZATION_FILES as KUSTOMIZATION_FILES

_LINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
EMPTY_TREE = (
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree: a root commit's parent
)


@dataclass(frozen=True)
class Entry:
    path: str
    mode: str
    sha: str


@dataclass(frozen=True)
class Document:
    """One Kubernetes object a manifest file defines (document `index` of a multi-doc file), or
    one that `kubectl kustomize` rendered: then `rendered` is set and `path` is the kustomization
    directory ("." for the repository root), since no single file holds the object."""

    path: str
    index: int
    obj: dict[str, Any]
    rendered: bool = False

    @property
    def ref(self) -> dict[str, str]:
        meta = self.obj.get("metadata") or {}
        return {
            "apiVersion": str(self.obj.get("apiVersion", "")),
            "kind": str(self.obj.get("kind", "")),
            "namespace": str(meta.get("namespace") or ""),
            "name": str(meta.get("name") or ""),
        }


class Repository:
    def __init__(self, path: Path, *, author_name: str, author_email: str) -> None:
        try:
            self.git_repo = git.Repo(path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise NotFound(f"{path} is not a git repository; point the server at one") from exc
        self._identity = {
            "GIT_AUTHOR_NAME": author_name,
            "GIT_AUTHOR_EMAIL": author_email,
            "GIT_COMMITTER_NAME": author_name,
            "GIT_COMMITTER_EMAIL": author_email,
        }

    # -- reading ---------------------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        if not ref or ref.startswith("-") or any(c in ref for c in " \n\t:~^\\"):
            raise InvalidArgument(f"ref {ref!r} is not a branch, tag or commit name")
        try:
            return str(self.git_repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}"))
        except git.GitCommandError as exc:
            raise NotFound(f"no branch, tag or commit {ref!r} in the repository") from exc

    def branches(self) -> list[str]:
        return sorted(h.name for h in self.git_repo.heads)

    def status(self, base: str) -> dict[str, Any]:
        repo = self.git_repo
        out: dict[str, Any] = {
            "path": str(repo.working_tree_dir or repo.git_dir),
            "bare": repo.bare,
            "base_branch": base,
            "base_commit": self.resolve(base),
            "branches": self.branches(),
        }
        if not repo.bare:
            out["checked_out"] = None if repo.head.is_detached else repo.active_branch.name
            out["uncommitted"] = [
                line[3:] for line in repo.git.status("--porcelain").splitlines() if line
            ][:100]
        last = repo.commit(out["base_commit"])
        out["last_commit"] = {
            "sha": last.hexsha,
            "message": str(last.message).strip()[:500],
            "author": str(last.author.name),
            "date": last.committed_datetime.isoformat(),
        }
        return out

    def entries(self, ref: str) -> list[Entry]:
        sha = self.resolve(ref)
        listing = self.git_repo.git.ls_tree("-r", "-z", sha)
        found = []
        for record in listing.split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, _kind, blob = meta.split()
            found.append(Entry(path, mode, blob))
        return found

    def exists(self, ref: str, path: str) -> bool:
        wanted = paths.repo_path(path)
        return any(e.path == wanted for e in self.entries(ref))

    def read(self, ref: str, path: str) -> str:
        wanted = paths.repo_path(path)
        by_path = {e.path: e for e in self.entries(ref)}
        for _ in range(8):
            entry = by_path.get(wanted)
            if entry is None:
                raise NotFound(f"no file {wanted!r} at {ref}; list_manifests shows what exists")
            content = self._blob(entry.sha)
            if entry.mode != _LINK_MODE:
                commit = self.git_repo.commit(self.resolve(ref))
                if secret_files.touch(commit, entry.path, content):
                    for parent in commit.parents:
                        secret_files.touch(parent, entry.path)
                return content
            wanted = paths.follow_link(entry.path, content)
        raise InvalidArgument(f"{path!r} is a chain of symlinks too long to follow")

    def _blob(self, sha: str) -> str:
        data: bytes = self.git_repo.odb.stream(bytes.fromhex(sha)).read()
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise InvalidArgument("that file is not text; only manifests can be read") from exc

    def documents(self, ref: str, *, under: str = "") -> Iterator[Document | tuple[str, str]]:
        """Every Kubernetes object of every YAML file, or (path, error) for one that won't parse."""
        for entry in self.entries(ref):
            if not _is_yaml(entry.path) or not entry.path.startswith(under):
                continue
            if entry.mode == _LINK_MODE or entry.path.rsplit("/", 1)[-1] in KUSTOMIZATION_FILES:
                continue
            try:
                loaded = list(yaml.safe_load_all(self._blob(entry.sha)))
            except yaml.YAMLError as exc:
                yield entry.path, f"not valid YAML: {problem(exc)}"
                continue
            except ToolError as exc:
                yield entry.path, exc.message
                continue
            for index, obj in enumerate(loaded):
                touch(obj)
                if isinstance(obj, dict) and obj.get("kind") and obj.get("apiVersion"):
                    yield Document(entry.path, index, obj)

    def kustomize_dirs(self, ref: str) -> list[str]:
        return sorted(
            (e.path.rsplit("/", 1)[0] if "/" in e.path else "")
            for e in self.entries(ref)
            if e.path.rsplit("/", 1)[-1] in KUSTOMIZATION_FILES
        )

    def export(self, ref: str, root: Path, *, under: list[str]) -> None:
        """Write the regular files below the folders `under` ("" is the whole tree) at `ref`
        into the directory `root`, for tools that read files (kustomize). Symlinks are left
        out, so nothing in `root` can point outside it."""
        prefixes = [u.rstrip("/") + "/" if u else "" for u in under]
        for entry in self.entries(ref):
            if entry.mode in (_LINK_MODE, _SUBMODULE_MODE):
                continue
            if any(entry.path.startswith(p) for p in prefixes):
                target = root / paths.repo_path(entry.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(self.git_repo.odb.stream(bytes.fromhex(entry.sha)).read())

    def locations(self) -> list[str]:
        """Where this repository is: its work tree, its git directory and its remotes' URLs
        (what an Argo CD or Flux object may name it by)."""
        repo = self.git_repo
        found = [str(repo.working_tree_dir or ""), str(repo.git_dir)]
        for remote in repo.remotes:
            try:
                found += list(remote.urls)
            except git.GitCommandError:
                continue  # a remote without a URL names nothing
        return [f for f in found if f]

    def history(self, ref: str, path: str, *, limit: int) -> list[dict[str, Any]]:
        """The newest `limit` commits at `ref` that changed `path`, each with its diff of it."""
        wanted = paths.repo_path(path)
        sha = self.resolve(ref)
        found = []
        for commit in self.git_repo.iter_commits(sha, paths=wanted, max_count=limit):
            for side in (commit, *commit.parents[:1]):
                secret_files.touch(side, wanted)
            parent = commit.parents[0].hexsha if commit.parents else EMPTY_TREE
            diff = str(self.git_repo.git.diff(parent, commit.hexsha, "--no-color", "--", wanted))
            found.append(
                {
                    "commit": commit.hexsha[:12],
                    "date": commit.committed_datetime.isoformat(),
                    "author": str(commit.author.name),
                    "subject": str(commit.summary)[:200],
                    "changed": [
                        line
                        for line in diff.splitlines()
                        if line[:1] in "+-" and not line.startswith(("+++", "---"))
                    ][:20],
                }
            )
        return found

    def diff(self, base: str, head: str, *, since_fork: bool = True) -> tuple[str, list[str]]:
        """The unified diff of `head` against where it forked from `base` (or, not
        `since_fork`, against `base` itself: a merge commit against its parent), and the files;
        both sides' Secret files are touched, so neither side's values can be shown."""
        b, h = self.resolve(base), self.resolve(head)
        spec = f"{b}...{h}" if since_fork else f"{b}..{h}"
        text = str(self.git_repo.git.diff(spec, "--no-color"))
        files = str(self.git_repo.git.diff(spec, "--name-only")).splitlines()
        old = self.git_repo.merge_base(b, h) if since_fork else [self.git_repo.commit(b)]
        for side in (*old, self.git_repo.commit(h)):
            for path in files:
                secret_files.touch(side, path)
        return text, files

    def merge_problem(self, base: str, head: str) -> str:
        """Why `head` would not merge cleanly into `base`, or "" when it would."""
        try:
            self.git_repo.git.merge_tree("--write-tree", self.resolve(base), self.resolve(head))
        except git.GitCommandError as exc:
            return str(exc.stdout).strip()[:800] or "conflicts"
        return ""

    # -- writing ---------------------------------------------------------------------------

    def commit(
        self, *, branch: str, start: str, files: Mapping[str, str | None], message: str
    ) -> str:
        """A new branch `branch` from `start` with one commit writing (or, for None, deleting)
        `files`. Refuses an existing branch: a proposal never rewrites someone's work."""
        paths.branch(branch)
        if branch in self.branches():
            raise Conflict(f"branch {branch!r} exists already; choose another branch name")
        parent = self.resolve(start)
        links = {e.path for e in self.entries(parent) if e.mode == _LINK_MODE}
        with self._private_index(parent) as g:
            for path, content in files.items():
                if path in links:
                    raise InvalidArgument(f"{path!r} is a symlink; edit the file it points at")
                if content is None:
                    g.update_index("--force-remove", path)
                    continue
                data = content.encode()
                stored = self.git_repo.odb.store(IStream("blob", len(data), BytesIO(data)))
                g.update_index("--add", "--cacheinfo", f"100644,{stored.hexsha.decode()},{path}")
            tree = g.write_tree()
        if tree == self.git_repo.commit(parent).tree.hexsha:
            raise InvalidArgument("the change leaves every file as it was; nothing to propose")
        sha = self._commit_tree(tree, [parent], message)
        self.git_repo.git.update_ref(f"refs/heads/{branch}", sha, "0" * 40)
        return sha

    def merge(self, *, base: str, head: str, message: str) -> str:
        """A real merge commit of `head` into `base` (no fast-forward), or Conflict."""
        old, theirs = self.resolve(base), self.resolve(head)
        try:
            tree = str(self.git_repo.git.merge_tree("--write-tree", old, theirs)).split()[0]
        except git.GitCommandError as exc:
            raise Conflict(
                f"{head} does not merge cleanly into {base}: {str(exc.stdout).strip()[:800]}; "
                "rebase the change or propose it again from the current base"
            ) from exc
        sha = self._commit_tree(tree, [old, theirs], message)
        self._move_branch(base, old, sha)
        return sha

    def revert(self, *, commit: str, start: str, branch: str, message: str) -> str:
        """A new branch from `start` undoing `commit` (a merge is undone against its first
        parent), as one commit; Conflict when later changes touch the same lines."""
        paths.branch(branch)
        if branch in self.branches():
            raise Conflict(f"branch {branch!r} exists already; choose another branch name")
        sha = self._revert_commit(commit, self.resolve(start), message)
        self.git_repo.git.update_ref(f"refs/heads/{branch}", sha, "0" * 40)
        return sha

    def revert_onto(self, *, commit: str, branch: str, message: str) -> str:
        """One commit on `branch` itself undoing `commit`; the branch (and its checkout, if it
        is the one checked out) moves to it. For emergencies: no review happens."""
        tip = self.resolve(branch)
        sha = self._revert_commit(commit, tip, message)
        self._move_branch(branch, tip, sha)
        return sha

    def _revert_commit(self, commit: str, tip: str, message: str) -> str:
        target = self.resolve(commit)
        parents = self.git_repo.commit(target).parents
        if not parents:
            raise InvalidArgument(f"{commit[:12]} is the first commit; there is nothing to undo")
        parent = parents[0].hexsha
        patch = str(self.git_repo.git.diff(parent, target, "--binary", "--no-color")) + "\n"
        with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as fh:
            fh.write(patch)
        try:
            with self._private_index(tip) as g:
                try:
                    g.apply("--cached", "-R", fh.name)
                except git.GitCommandError as exc:
                    raise Conflict(
                        f"cannot revert {commit[:12]}: later changes touch the same lines "
                        f"({str(exc.stderr).strip()[:400]}); revert it by hand in a new change"
                    ) from exc
                tree = g.write_tree()
        finally:
            os.unlink(fh.name)
        return self._commit_tree(tree, [tip], message)

    def delete_branch(self, branch: str) -> None:
        if branch in self.branches():
            self.git_repo.git.update_ref("-d", f"refs/heads/{branch}")

    @contextmanager
    def _private_index(self, start: str) -> Iterator[git.Git]:
        fd, name = tempfile.mkstemp(prefix="kubecrew-index-")
        os.close(fd)
        os.unlink(name)  # git wants to create the index itself
        g = self.git_repo.git
        try:
            with g.custom_environment(GIT_INDEX_FILE=name):
                g.read_tree(start)
                yield g
        finally:
            if os.path.exists(name):
                os.unlink(name)

    def _commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        args: list[str] = [tree]
        for p in parents:
            args += ["-p", p]
        with self.git_repo.git.custom_environment(**self._identity):
            return str(self.git_repo.git.commit_tree(*args, "-m", message))

    def _move_branch(self, branch: str, old: str, new: str) -> None:
        repo = self.git_repo
        try:
            repo.git.update_ref(f"refs/heads/{branch}", new, old)
        except git.GitCommandError as exc:
            raise Conflict(
                f"{branch} moved while this change was being made ({str(exc.stderr).strip()[:200]})"
                "; read it again and retry"
            ) from exc
        checked_out = not repo.bare and not repo.head.is_detached
        if checked_out and repo.active_branch.name == branch:
            try:
                repo.git.read_tree("-m", "-u", old, new)
            except git.GitCommandError as exc:
                raise Conflict(
                    f"{branch} is now {new[:12]}, but its checkout has local changes in the "
                    f"way ({str(exc.stderr).strip()[:300]}); commit or discard them"
                ) from exc


def _is_yaml(path: str) -> bool:
    return path.endswith((".yaml", ".yml"))


_CLUSTER_SCOPED = {
    "namespace",
    "node",
    "persistentvolume",
    "storageclass",
    "clusterrole",
    "clusterrolebinding",
    "customresourcedefinition",
    "priorityclass",
    "ingressclass",
}


def kind_is_cluster_scoped(kind: str) -> bool:
    return kind.lower() in _CLUSTER_SCOPED


def matching(
    docs: list[Document], *, kind: str, name: str, namespace: str, default_ns: str
) -> list[Document]:
    """The documents defining `kind` `name` (in `namespace`; "" matches any)."""
    hits = []
    for doc in docs:
        r = doc.ref
        if r["kind"].lower() != kind.lower() or r["name"] != name:
            continue
        scoped = "" if kind_is_cluster_scoped(r["kind"]) else default_ns
        if not namespace or (r["namespace"] or scoped) == namespace:
            hits.append(doc)
    return hits
