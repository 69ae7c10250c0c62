"""Edits of YAML manifests that a reviewer can read: one field changes, nothing else does.

A file is cut into its documents at the `---` lines, and only the document being edited is
loaded and dumped again (ruamel.yaml round-trip: comments, key order, quoting, block style and
the file's own indentation kept); the other documents stay byte for byte as they were.

Field paths are dotted keys with list steps: `spec.replicas`,
`spec.template.spec.containers[0].image`, `spec.template.spec.containers[name=web].image`,
`metadata.labels["app.kubernetes.io/name"]`. Missing mappings on the way are created.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from io import StringIO
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.util import load_yaml_guess_indent

from core.errors import InvalidArgument, NotFound

_SEPARATOR = re.compile(r"^---(\s.*)?$")
_STEP = re.compile(
    r'\.?(?:([A-Za-z0-9_\-/]+)|\[(\d+)\]|\[([A-Za-z0-9_.\-]+)=([^\]]*)\]|\["([^"]+)"\])'
)

Step = str | int | tuple[str, str]


@dataclass(frozen=True)
class Edit:
    path: str
    value: Any = None
    delete: bool = False


def parse_path(path: str) -> list[Step]:
    steps: list[Step] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if not m or m.end() == pos or (pos == 0 and path.startswith(".")):
            raise InvalidArgument(
                f"field path {path!r} cannot be read at {path[pos:]!r}; use e.g. "
                "'spec.template.spec.containers[name=web].image' or 'metadata.labels[\"a/b\"]'"
            )
        key, index, sel_key, sel_value, quoted = m.groups()
        if key is not None:
            steps.append(key)
        elif index is not None:
            steps.append(int(index))
        elif sel_key is not None:
            steps.append((sel_key, sel_value))
        else:
            steps.append(quoted)
        pos = m.end()
    if not steps:
        raise InvalidArgument("the field path is empty")
    return steps


def _chunks(text: str) -> list[tuple[str, str]]:
    """(separator line or "", body) per document, in order; concatenated they give `text`."""
    out: list[tuple[str, str]] = []
    sep = ""
    body: list[str] = []
    for line in text.splitlines(keepends=True):
        if _SEPARATOR.match(line.rstrip("\n")):
            out.append((sep, "".join(body)))
            sep, body = line, []
        else:
            body.append(line)
    out.append((sep, "".join(body)))
    return out


def _yaml(body: str) -> tuple[YAML, Any]:
    try:
        _data, indent, block_seq_indent = load_yaml_guess_indent(body)
    except YAMLError as exc:
        raise InvalidArgument(f"the manifest is not valid YAML: {exc}") from exc
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    # ruamel guesses the sequence indent; the mapping indent is the smallest one in use.
    mapping = _mapping_indent(body)
    y.indent(mapping=mapping, sequence=indent or mapping, offset=block_seq_indent or 0)
    return y, y.load(body)


def _mapping_indent(body: str) -> int:
    found = [
        len(line) - len(line.lstrip(" "))
        for line in body.splitlines()
        if line.startswith(" ") and not line.lstrip().startswith(("-", "#"))
    ]
    return min(found, default=2) or 2


def _matches(data: Any, kind: str, name: str) -> bool:
    if not isinstance(data, dict):
        return False
    meta = data.get("metadata") or {}
    return (not kind or str(data.get("kind", "")).lower() == kind.lower()) and (
        not name or meta.get("name") == name
    )


def edit(text: str, edits: list[Edit], *, kind: str = "", name: str = "", index: int = -1) -> str:
    """`text` with `edits` applied to one document: the one of `kind`/`name`, or number `index`
    (counting documents that hold something), or the only one."""
    chunks = _chunks(text)
    candidates: list[int] = []
    seen = 0
    for at, (_sep, body) in enumerate(chunks):
        if not body.strip() or _is_comment_only(body):
            continue
        _y, data = _yaml(body)
        if data is None:
            continue
        if (index >= 0 and seen == index) or (index < 0 and _matches(data, kind, name)):
            candidates.append(at)
        seen += 1
    if len(candidates) != 1:
        what = f"document {index}" if index >= 0 else f"{kind or 'object'} {name}".strip()
        if not candidates:
            raise NotFound(f"no {what} in this file; read_manifest shows its documents")
        raise InvalidArgument(f"{len(candidates)} documents match {what}; name kind and name")
    at = candidates[0]
    sep, body = chunks[at]
    y, data = _yaml(body)
    for e in edits:
        _apply(data, parse_path(e.path), e)
    out = StringIO()
    y.dump(data, out)
    new_body = out.getvalue()
    if body.endswith("\n\n"):
        new_body = new_body.rstrip("\n") + "\n" + body[len(body.rstrip("\n")) :][1:]
    chunks[at] = (sep, new_body)
    return "".join(s + b for s, b in chunks)


def _is_comment_only(body: str) -> bool:
    return all(not ln.strip() or ln.lstrip().startswith("#") for ln in body.splitlines())


def _apply(data: Any, steps: list[Step], e: Edit) -> None:
    node = data
    for depth, step in enumerate(steps[:-1]):
        node = _descend(node, step, steps[depth + 1], e.path, create=not e.delete)
    last = steps[-1]
    if isinstance(last, tuple):
        raise InvalidArgument(f"{e.path!r} must end in a key or an index, not a selector")
    if e.delete:
        try:
            del node[last]
        except (KeyError, IndexError, TypeError) as exc:
            raise NotFound(f"{e.path!r} is not set; nothing to delete") from exc
        return
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise NotFound(f"{e.path!r}: no list item {last}")
    elif not isinstance(node, dict):
        raise InvalidArgument(f"{e.path!r}: the parent of {last!r} is not a mapping")
    node[last] = e.value


def _descend(node: Any, step: Step, following: Step, path: str, *, create: bool) -> Any:
    if isinstance(step, str):
        if not isinstance(node, dict):
            raise InvalidArgument(f"{path!r}: {step!r} is under something that is not a mapping")
        if step not in node or node[step] is None:
            if not create:
                raise NotFound(f"{path!r} is not set")
            node[step] = CommentedSeq() if isinstance(following, int) else CommentedMap()
        return node[step]
    if not isinstance(node, list):
        raise InvalidArgument(f"{path!r}: {step!r} applies to a list, found something else")
    if isinstance(step, int):
        if step >= len(node):
            raise NotFound(f"{path!r}: the list has {len(node)} items, no item {step}")
        return node[step]
    key, value = step
    for item in node:
        if isinstance(item, dict) and str(item.get(key)) == value:
            return item
    raise NotFound(f"{path!r}: no list item with {key}={value}")
