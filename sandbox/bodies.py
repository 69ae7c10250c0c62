"""Request bodies read the way kube-apiserver reads them: JSON or YAML into plain JSON values.

Everything after decoding (merges, managed fields, copies) walks values recursively, so a body
is bounded here, before anything else sees it:

- nesting: orjson stops at 1,024 levels by itself; `limits.check_depth` then holds every body
  to `MAX_DEPTH` without recursion;
- YAML is first read event by event (PyYAML's composer recurses, and an alias repeats a whole
  subtree), refusing nesting past `MAX_DEPTH` and aliases that would expand the document to
  more nodes than the body has bytes (a "billion laughs" body), then loaded with JSON's types
  only: timestamps stay strings, `.inf`, `.nan` and binary are refused, keys become strings
  as sigs.k8s.io/yaml makes them.

Duplicate keys keep their last value, as Go's decoder does; strict decoding reports them, so
`duplicate_fields` names them, worded as kube-apiserver words them: `duplicate field "data.a"`
for JSON, `line 7: key "a" already set in map` for YAML. It parses the JSON a second time, so
callers ask only when the answer is used.

Knows JSON, YAML and Status errors; nothing of HTTP, kinds or storage.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from sandbox.errors import BadRequest
from sandbox.limits import MAX_DEPTH, check_depth, depth_message

MIN_YAML_NODES = 10_000  # what aliases may always expand to, however short the body
# libyaml's parser when PyYAML has it: Python's looks far ahead in deep flow collections
# (half a second for "[[[[...") before the first event the depth check could refuse, and
# loads a large manifest four times slower.
_EVENTS = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def from_json(raw: bytes) -> Any:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(_json_problem(exc)) from None
    check_depth(value)
    return value


def from_json_or_yaml(raw: bytes) -> tuple[Any, list[str] | None]:
    """A body that may be either (apply configurations, `application/yaml`): JSON when it
    parses as JSON, as kubectl sends it, else YAML with its duplicate keys (None for JSON)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if _too_deep(exc):
            raise BadRequest(_json_problem(exc)) from None
        return from_yaml(raw)
    check_depth(value)
    return value, None


def _too_deep(exc: orjson.JSONDecodeError) -> bool:
    return "depth limit" in str(exc)


def _json_problem(exc: orjson.JSONDecodeError) -> str:
    if _too_deep(exc):
        return depth_message("the request body")
    return f"the request body is not valid JSON: {exc}"


def from_yaml(raw: bytes) -> tuple[Any, list[str]]:
    """The document, and the duplicate keys found in it as strict decoding words them."""
    scan = _scan(raw)
    try:
        value = yaml.load(raw, Loader=_LOADER)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        raise BadRequest(f"the request body is not valid YAML: {exc}") from None
    check_depth(value)  # aliases may have nested one subtree inside another
    try:
        plain = orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise BadRequest(f"the YAML body holds a value JSON cannot carry: {exc}") from None
    return plain, scan.duplicates


def duplicate_fields(raw: bytes, *, json_patch: bool = False) -> list[str]:
    """The keys a JSON body repeats, in document order. For a JSON patch only the operations'
    own keys count (`json patch duplicate field "[1].path"`): values are taken as they come."""
    repeated: dict[int, list[str]] = {}
    holding: list[dict[str, Any]] = []  # so no id is reused for an object a repeat dropped

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                repeated.setdefault(id(obj), []).append(key)
            obj[key] = value
        holding.append(obj)
        return obj

    try:
        document = json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []  # the body was checked with orjson first; nothing more to say
    if not repeated:
        return []
    paths = _paths_of_repeats(document, repeated)
    if json_patch:
        return [f'json patch duplicate field "{p}"' for p in paths if _operation_key(p)]
    return [f'duplicate field "{p}"' for p in paths]


def _paths_of_repeats(document: Any, repeated: dict[int, list[str]]) -> list[str]:
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, path = stack.pop()
        children: list[tuple[Any, str]] = []
        if isinstance(node, dict):
            for key in repeated.get(id(node), ()):
                found.append(f"{path}.{key}" if path else key)
            children = [(v, f"{path}.{k}" if path else k) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        stack.extend(c for c in reversed(children) if isinstance(c[0], dict | list))
    return found


def _operation_key(path: str) -> bool:
    return path.startswith("[") and path.count(".") == 1 and "[" not in path.split(".", 1)[1]


# -- YAML ------------------------------------------------------------------------------------


@dataclass
class _Open:
    """A collection being read: its node count so far (itself included), and for a mapping
    the keys seen and whether the next node is a key."""

    anchor: str | None
    mapping: bool
    nodes: int = 1
    keys: set[str] = field(default_factory=set)
    expects_key: bool = True


@dataclass
class _Scan:
    duplicates: list[str] = field(default_factory=list)


def _scan(raw: bytes) -> _Scan:
    budget = max(len(raw), MIN_YAML_NODES)
    scan = _Scan()
    open_: list[_Open] = []
    anchored: dict[str, int] = {}
    expanded = 0
    try:
        for event in yaml.parse(raw, Loader=_EVENTS):
            if isinstance(event, yaml.CollectionEndEvent):
                done = open_.pop()
                if done.anchor:
                    anchored[done.anchor] = done.nodes
                if open_:
                    open_[-1].nodes += done.nodes
                continue
            if not isinstance(event, yaml.NodeEvent):
                continue
            _key_or_value(open_, event, scan)
            size = anchored.get(event.anchor or "", 1) if isinstance(event, yaml.AliasEvent) else 1
            expanded += size
            if expanded > budget:
                raise BadRequest(
                    f"the YAML body's aliases expand it to more than {budget} nodes; "
                    "write the repeated parts out, or send JSON"
                )
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_) >= MAX_DEPTH:
                    raise BadRequest(depth_message("the request body"))
                mapping = isinstance(event, yaml.MappingStartEvent)
                open_.append(_Open(anchor=event.anchor, mapping=mapping))
            elif open_:
                open_[-1].nodes += size
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's own limit, which reads ahead
            raise BadRequest(depth_message("the request body")) from None
        raise BadRequest(f"the request body is not valid YAML: {exc}") from None
    return scan


def _key_or_value(open_: list[_Open], event: yaml.NodeEvent, scan: _Scan) -> None:
    if not open_ or not open_[-1].mapping:
        return
    parent = open_[-1]
    parent.expects_key = not parent.expects_key
    if parent.expects_key:
        return  # this node was the value
    if not isinstance(event, yaml.ScalarEvent):
        raise BadRequest("a YAML mapping key must be a plain value, not a collection or alias")
    if event.value in parent.keys and event.value != "<<":
        line = event.start_mark.line + 1 if event.start_mark else 0
        scan.duplicates.append(f'line {line}: key "{event.value}" already set in map')
    parent.keys.add(event.value)


class _JsonTypesLoader(yaml.SafeLoader):
    """SafeLoader that builds only what JSON can carry: timestamps stay strings, and `.inf`
    or `.nan` are refused (orjson would write them as null, which a patch reads as delete)."""


class _FastJsonTypesLoader(yaml.CSafeLoader):
    """The same on libyaml's parser, four times faster on a large manifest (when PyYAML was
    built with libyaml; the request's event loop waits while a body loads)."""


def _finite_float(loader: yaml.SafeLoader | yaml.CSafeLoader, node: yaml.ScalarNode) -> float:
    value = loader.construct_yaml_float(node)
    if math.isinf(value) or math.isnan(value):
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a number JSON can carry", node.start_mark
        )
    return value


for _loader in (_JsonTypesLoader, _FastJsonTypesLoader):
    _loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _loader.add_constructor("tag:yaml.org,2002:float", _finite_float)

_LOADER = _FastJsonTypesLoader if yaml.__with_libyaml__ else _JsonTypesLoader
