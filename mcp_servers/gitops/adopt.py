"""Taking a live change back into git: the manifest edit that makes git say what the cluster has.

This is drift reconciled the other way round (sync makes the cluster what git says). The live
object is compared with its manifest (`drift.compare`), and each drifted field becomes one
`yamledit` edit of the manifest file, so comments, key order and formatting stay and a reviewer
sees exactly the fields that drifted. A field git sets and the live object no longer has becomes a
delete. A field git never set is not drift, so it is not adopted either.

When a difference is a whole structure (a list that changed length), the live value is taken
without the fields the API server fills in by default: for an item at the same position as one in
git, only the keys that git's item sets are kept. Items the cluster added are taken whole.

Only objects that a plain manifest file defines can be adopted: a rendered kustomize object has no
single file to edit (a patch in an overlay is a person's choice), and an object no manifest
defines is not managed from the repository at all. Secrets are never adopted: their live values
would be written into git and shown in the pull request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import Conflict, InvalidArgument, NotFound
from mcp_servers.gitops.drift import FieldDiff, compare
from mcp_servers.gitops.repo import Document, matching
from mcp_servers.gitops.resources import Resources
from mcp_servers.gitops.yamledit import Edit, Step, edit, parse_path


@dataclass(frozen=True)
class Adoption:
    doc: Document
    namespace: str
    diffs: list[FieldDiff]
    text: str  # the manifest file with the live values written in

    def describe(self) -> str:
        """A PR body listing each adopted field, git value -> live value."""
        lines = [
            f"Adopts the live state of {self.doc.ref['kind']} {self.doc.ref['name']}"
            + (f" in {self.namespace}" if self.namespace else "")
            + " into git (changed on the cluster, not through a pull request):",
            "",
        ]
        for d in self.diffs[:50]:
            after = "(removed)" if d.live is None else _short(d.live)
            lines.append(f"- `{d.path}`: {_short(d.git)} -> {after}")
        return "\n".join(lines) + "\n"


def choose(
    docs: list[Document], *, kind: str, name: str, namespace: str, default_ns: str
) -> Document:
    """The one plain manifest document that defines the object, or why there is none."""
    hits = matching(docs, kind=kind, name=name, namespace=namespace, default_ns=default_ns)
    where = f"{kind} {name}" + (f" in {namespace}" if namespace else "")
    if not hits:
        raise NotFound(
            f"no manifest sync manages defines {where}; it is not managed from this repository "
            "(add it with propose_change and content, if it should be)"
        )
    if len(hits) > 1:
        raise InvalidArgument(f"{len(hits)} manifests define {where}; name the namespace")
    doc = hits[0]
    if doc.ref["kind"] == "Secret":
        raise InvalidArgument(
            f"{where} is a Secret: its live values would land in git and in the pull request; "
            "change its manifest (or its sealed or external source) by hand"
        )
    if doc.rendered:
        raise InvalidArgument(
            f"{where} is rendered by the kustomization in {doc.path}; edit that overlay by hand "
            f"with propose_change (a patch in {doc.path}), since no single file holds the object"
        )
    return doc


def adopt(doc: Document, text: str, resources: Resources) -> Adoption:
    """The file `text` (holding `doc`) edited so that git matches the live object."""
    resource, namespace, name = resources.locate(doc.obj)
    live = resources.api.get(resource.path(namespace, name), what=f"{resource.kind} {name}")
    diffs = compare(doc.obj, live)
    if not diffs:
        raise Conflict(
            f"{resource.kind} {name} matches git already; nothing to adopt (drift lists what "
            "differs)"
        )
    edits = [_edit(doc.obj, d) for d in diffs]
    deletes = _collapse(doc.obj, [e for e in edits if e.delete])
    # Deletes of list items go by index: the highest first, so the others keep their positions.
    ordered = [e for e in edits if not e.delete] + sorted(
        deletes, key=lambda e: _indices(e.path), reverse=True
    )
    new_text = edit(text, ordered, kind=doc.ref["kind"], name=doc.ref["name"])
    return Adoption(doc, namespace, diffs, new_text)


def _edit(manifest: dict[str, Any], diff: FieldDiff) -> Edit:
    if diff.live is None:
        return Edit(path=_final_index(manifest, diff.path), delete=True)
    return Edit(path=diff.path, value=_trim(diff.live, diff.git))


def _collapse(manifest: dict[str, Any], deletes: list[Edit]) -> list[Edit]:
    """Deletes that would empty a mapping below the top level delete the mapping instead:
    `labels: {}` left behind is noise in a review, and means the same as no labels."""
    gone = {tuple(parse_path(e.path)) for e in deletes}
    while True:
        parents: dict[tuple[Step, ...], set[Step]] = {}
        for steps in gone:
            parents.setdefault(steps[:-1], set()).add(steps[-1])
        emptied = next(
            (
                parent
                for parent, keys in parents.items()
                if len(parent) >= 2 and _keys(manifest, parent) == keys
            ),
            None,
        )
        if emptied is None:
            return [Edit(path=_format(list(steps)), delete=True) for steps in sorted(gone, key=str)]
        gone = {steps for steps in gone if steps[:-1] != emptied} | {emptied}


def _keys(manifest: dict[str, Any], steps: tuple[Step, ...]) -> set[Step] | None:
    node: Any = manifest
    for step in steps:
        node = _step(node, step)
    return set(node) if isinstance(node, dict) else None


def _final_index(manifest: dict[str, Any], path: str) -> str:
    """`path` with a last `[key=value]` step made an index: yamledit deletes by key or index."""
    steps = parse_path(path)
    last = steps[-1]
    if not isinstance(last, tuple):
        return path
    parent: Any = manifest
    for step in steps[:-1]:
        parent = _step(parent, step)
    key, value = last
    at = next(i for i, item in enumerate(parent) if str(item.get(key)) == value)
    return _format([*steps[:-1], at])


def _step(node: Any, step: Step) -> Any:
    if isinstance(step, tuple):
        return next(i for i in node if isinstance(i, dict) and str(i.get(step[0])) == step[1])
    return node[step]


def _format(steps: list[Step]) -> str:
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, tuple):
            out += f"[{step[0]}={step[1]}]"
        elif "." in step or "/" in step:
            out += f'["{step}"]'
        else:
            out += f".{step}" if out else step
    return out


def _indices(path: str) -> list[int]:
    return [s for s in parse_path(path) if isinstance(s, int)]


def _trim(live: Any, git: Any) -> Any:
    """`live` without keys git's counterpart leaves to the API server's defaults."""
    if isinstance(live, dict) and isinstance(git, dict):
        return {k: _trim(v, git[k]) for k, v in live.items() if k in git}
    if isinstance(live, list) and isinstance(git, list):
        return [_trim(v, git[i]) if i < len(git) else v for i, v in enumerate(live)]
    return live


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."
