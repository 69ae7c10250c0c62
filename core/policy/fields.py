"""Validation errors as a person reads a policy file: YAML field paths, lines, short reasons.

Pydantic locates an error by model fields, with union-member tags mixed in (`int`,
`function-after[...]`); walking the model classes along the location keeps only what is in the
YAML, so the path reads `spec.minAvailable`, and the YAML node graph gives its line. An unknown
field gets a "did you mean" from the fields the model has at that place. `Located` errors from
the documents' own validators point below the model that raised them.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from core.policy.documents.common import Located

Part = str | int
Detail = tuple[str, str | None, int | None]  # reason, field path, line
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def problems_of(exc: ValidationError, model: type[BaseModel], node: yaml.Node) -> list[Detail]:
    details: list[Detail] = []
    for error in exc.errors():
        path, container = _clean(error["loc"], model, unknown=error["type"] == "extra_forbidden")
        located = error.get("ctx", {}).get("error")
        if isinstance(located, Located):
            path = [*path, *located.path]
        details.append((_reason(error, container), format_path(path), line_of(node, path)))
    return details


def format_path(path: Sequence[Part]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text


def line_of(node: yaml.Node, path: Sequence[Part]) -> int:
    """The line of the deepest node along `path` (a key's own line for mapping entries)."""
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            entry = next((kv for kv in node.value if kv[0].value == part), None)
            if entry is None:
                break
            line, node = entry[0].start_mark.line + 1, entry[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def duplicate_keys(node: yaml.Node, path: tuple[Part, ...] = ()) -> list[Detail]:
    """Keys written twice in one mapping: YAML loaders keep the last silently; we refuse."""
    found: list[Detail] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[object] = set()
        for key, value in node.value:
            if key.value in seen:
                reason = f"the key {key.value!r} is written twice here"
                found.append((reason, format_path(path) or None, key.start_mark.line + 1))
            seen.add(key.value)
            found += duplicate_keys(value, (*path, str(key.value)))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found += duplicate_keys(item, (*path, index))
    return found


def _reason(error: ErrorDetails, container: type[BaseModel] | None) -> str:
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        return _unknown_field(str(error["loc"][-1]), container)
    if kind == "missing":
        return "required field is missing"
    if kind == "value_error":
        return message.removeprefix("Value error, ")
    text = message[0].lower() + message[1:]
    return f"{text} (got {error['input']!r})"


def _unknown_field(name: str, container: type[BaseModel] | None) -> str:
    known = list(container.model_fields) if container is not None else []
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"unknown field {name!r}; did you mean {close[0]!r}?"
    return f"unknown field {name!r}; the fields here are {', '.join(known) or 'none'}"


def _clean(
    loc: tuple[Part, ...], model: type[BaseModel], *, unknown: bool
) -> tuple[list[Part], type[BaseModel] | None]:
    """The YAML path of `loc` (union tags dropped) and the model holding its last field."""
    walk, last = (loc[:-1], [loc[-1]]) if unknown and loc else (loc, [])
    current: Any = model
    container: type[BaseModel] | None = model
    path: list[Part] = []
    for part in walk:
        target = _unwrap(current)
        if isinstance(part, int) and typing.get_origin(target) is list:
            path.append(part)
            current = typing.get_args(target)[0]
        elif isinstance(target, type) and issubclass(target, BaseModel):
            field = target.model_fields.get(str(part))
            if field is not None:
                path.append(part)
                current = field.annotation
        elif typing.get_origin(target) is dict and part != "[key]":
            path.append(part)
            current = typing.get_args(target)[1]
        container = _model(current)
    return path + last, container


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated and Optional; for a union of a model and others, the model."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            structured = [m for m in members if _model(m) or typing.get_origin(_strip(m))]
            annotation = (structured or members)[0]
        else:
            return annotation


def _strip(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _model(annotation: Any) -> type[BaseModel] | None:
    target = _strip(annotation)
    if typing.get_origin(target) in (typing.Union, types.UnionType):
        target = _unwrap(target)
    return target if isinstance(target, type) and issubclass(target, BaseModel) else None
