"""Checking a path a caller names inside the repository before git ever sees it.

A repo path is relative, POSIX, and stays inside the repository: no absolute paths, no `..`, no
backslashes or control characters, no `.git` component. Symlinks are followed only while their
target stays inside the repository (`follow_link`); one that points out is refused.
"""

from __future__ import annotations

import posixpath
import re

from core.errors import InvalidArgument

_BAD = re.compile(r"[\x00-\x1f\\]")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")


def repo_path(value: str, *, argument: str = "path", allow_root: bool = False) -> str:
    text = value.strip()
    if allow_root and text in ("", ".", "/"):
        return ""
    if not text or _BAD.search(text) or text.startswith("/") or len(text) > 1024:
        raise InvalidArgument(
            f"{argument} {value!r} is not a path inside the repository; give a relative path "
            "such as 'apps/web/deployment.yaml'"
        )
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts) or any(p == ".git" for p in parts) or not parts:
        raise InvalidArgument(
            f"{argument} {value!r} leaves the repository or names git's own files; "
            "give a path inside the repository without '..'"
        )
    return "/".join(parts)


def follow_link(link_path: str, target: str) -> str:
    """The repo path a symlink at `link_path` pointing at `target` resolves to, if inside."""
    if target.startswith("/"):
        raise InvalidArgument(f"{link_path} is a symlink out of the repository; refusing it")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), target))
    if joined == ".." or joined.startswith("../") or joined == ".":
        raise InvalidArgument(f"{link_path} is a symlink out of the repository; refusing it")
    return joined


def branch(value: str, *, argument: str = "branch") -> str:
    if not _BRANCH.match(value) or ".." in value or value.endswith((".lock", "/", ".")):
        raise InvalidArgument(
            f"{argument} {value!r} is not a usable branch name (letters, digits, '.', '_', '-', "
            "'/'; no '..')"
        )
    return value
