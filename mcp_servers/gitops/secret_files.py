"""Which files of the repository hold Secret values, and telling the tool call about them.

A file holds Secret values when it is a Secret manifest (its `data`, `stringData`), a
kustomization (its secretGenerators' `literals`), or a file a kustomization's secretGenerator
reads: whole (`files`) or line by line (`envs`, `env`: KEY=value). kustomize reads a generator's
files only from below its kustomization's directory, so only the kustomizations above a file can
name it. `touch` tells `secret_values` what a file read at a commit holds, so the call that read
it scrubs those values from its answer (`repo` calls it for every file it reads or diffs).

Knows git commits and kustomization fields; nothing of tools or of rendering.
"""

from __future__ import annotations

import posixpath
from typing import Any

import git
import yaml

from mcp_servers.common.secret_values import touch as touch_object
from mcp_servers.common.secret_values import touch_text

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def touch(commit: git.Commit, path: str, text: str | None = None) -> bool:
    """Touch the Secret values of the file `path` at `commit` (its `text`, if read already);
    whether it holds any."""
    text = text_at(commit, path) if text is None else text
    if text is None:
        return False
    if "secret" in text.lower() and _manifest_values(text):
        return True
    named = _generated(commit, path)
    if named == "file":
        touch_text(text)
        touch_text(text.strip())
    elif named == "env":
        for line in text.splitlines():
            touch_text(line.partition("=")[2].strip())
    return named is not None


def text_at(commit: git.Commit, path: str) -> str | None:
    """The text of the file `path` at `commit`; None when it is not there or not text."""
    try:
        blob = commit.tree / path
        data: bytes = blob.data_stream.read()
        return data.decode()
    except (KeyError, ValueError, AttributeError):
        return None


def _manifest_values(text: str) -> bool:
    """Touch the Secrets and secretGenerator literals of a manifest's text; whether it has any
    (an unreadable one is taken to: its history is touched, in case)."""
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return True
    found = False
    for document in documents:
        if not isinstance(document, dict):
            continue
        if document.get("kind") == "Secret":
            touch_object(document)
            found = True
        for generator in _generators(document):
            for literal in generator.get("literals") or []:
                touch_text(str(literal).partition("=")[2])
                found = True
    return found


def _generators(kustomization: dict[str, Any]) -> list[dict[str, Any]]:
    listed = kustomization.get("secretGenerator")
    return [g for g in listed if isinstance(g, dict)] if isinstance(listed, list) else []


def _generated(commit: git.Commit, path: str) -> str | None:
    """How a kustomization above `path` generates a Secret from it: from the whole "file", from
    an "env" file's lines, or not at all (None)."""
    folder = posixpath.dirname(path)
    while True:
        for name in KUSTOMIZATION_FILES:
            text = text_at(commit, posixpath.join(folder, name))
            try:
                kustomization = yaml.safe_load(text) if text else None
            except yaml.YAMLError:
                continue
            for generator in _generators(kustomization if isinstance(kustomization, dict) else {}):
                if _names(folder, generator.get("files"), path, keyed=True):
                    return "file"
                envs = [*(generator.get("envs") or []), generator.get("env")]
                if _names(folder, envs, path, keyed=False):
                    return "env"
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _names(folder: str, entries: object, path: str, *, keyed: bool) -> bool:
    """Whether a generator's `entries` (paths relative to `folder`; `key=path` when keyed)
    name `path`."""
    if not isinstance(entries, list):
        return False
    for entry in entries:
        if not isinstance(entry, str):
            continue
        relative = (entry.partition("=")[2] or entry) if keyed else entry
        if posixpath.normpath(posixpath.join(folder, relative)) == path:
            return True
    return False
