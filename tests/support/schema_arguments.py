"""Hypothesis strategies for a tool's arguments, drawn from the JSON input schema it lists.

`arguments(tool, targeted=..., calls=..., fixed=...)` draws every required property (one time in
ten leaving one out, so the refusal of a bad call is exercised too), each optional property that
`targeted` names half of the time and any other a quarter of the time. A property named in
`targeted` draws from that strategy four times in five (values that aim somewhere, such as a
Secret's name), else from its schema: `enum`, `const`, `anyOf`, the JSON types, arrays and
objects, with small sizes. A tool named in `calls` takes, half of the time, a whole call from
there instead (arguments that only together reach deep: a JSON patch with patch_type json).
`fixed` values always win (dry_run=True).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st
from mcp.types import Tool

Json = dict[str, Any]

WORDS = st.sampled_from(["", "a", "db", "web", "default", "x" * 70, "-", "../x", "$(id)", "\n"])
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(-1, 1e3, allow_nan=False),
    st.text(max_size=16),
    WORDS,
)
ANY_JSON = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def from_schema(schema: Json) -> st.SearchStrategy[Any]:
    """Values of the JSON schema `schema` (the subset FastMCP writes), valid or nearly."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    if "anyOf" in schema:
        return st.one_of([from_schema(s) for s in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(st.text(max_size=24), WORDS)
    if kind == "integer":
        return st.integers(-2, 300)
    if kind == "number":
        return st.floats(-1, 1e4, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items") or {}), max_size=3)
    if kind == "object":
        values = schema.get("additionalProperties")
        inner = from_schema(values) if isinstance(values, dict) else ANY_JSON
        return st.dictionaries(st.text(max_size=12), inner, max_size=3)
    return ANY_JSON


@st.composite
def arguments(
    draw: st.DrawFn,
    tool: Tool,
    *,
    targeted: Mapping[str, st.SearchStrategy[Any]],
    calls: Mapping[str, st.SearchStrategy[Json]],
    fixed: Mapping[str, Any],
) -> Json:
    schema = tool.inputSchema
    properties: dict[str, Json] = schema.get("properties") or {}
    whole = calls.get(tool.name)
    if whole is not None and draw(st.booleans()):
        chosen = draw(whole)
    else:
        chosen = draw(_each(properties, set(schema.get("required") or []), schema, targeted))
    return chosen | {k: v for k, v in fixed.items() if k in properties}


@st.composite
def _each(
    draw: st.DrawFn,
    properties: dict[str, Json],
    required: set[str],
    schema: Json,
    targeted: Mapping[str, st.SearchStrategy[Any]],
) -> Json:
    drop = draw(st.sampled_from(sorted(required))) if required and draw(_one_in(10)) else None
    chosen: Json = {}
    for name, prop in properties.items():
        aimed = targeted.get(name)
        optional_odds = 2 if aimed is not None else 4
        if name == drop or (name not in required and not draw(_one_in(optional_odds))):
            continue
        if aimed is not None and not draw(_one_in(5)):
            chosen[name] = draw(aimed)
        else:
            chosen[name] = draw(from_schema(_resolved(prop, schema)))
    return chosen


def _one_in(n: int) -> st.SearchStrategy[bool]:
    return st.integers(1, n).map(lambda i: i == 1)


def _resolved(prop: Json, schema: Json) -> Json:
    """`prop` with a `$ref` to the schema's `$defs` followed (FastMCP writes them for Literal
    and model types)."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict((schema.get("$defs") or {}).get(ref.removeprefix("#/$defs/"), {}))
    return prop
