"""OpenAPI v2 (Swagger 2.0) for kubectl, served as the gnostic protobuf message it asks for.

kubectl 1.37 reads v3 for nearly everything, but validates on the client, with v2, whatever the
v3 documents cannot vouch for. A `kind: List` manifest is the common case: v1 List has no PATCH
operation, hence no `fieldValidation` parameter, so kubectl checks each item against the v2
definitions. It asks for them only in protobuf, as the `openapi.v2.Document` message of
google/gnostic (wire notes §2.1), and parses them with kube-openapi, which is stricter than
Swagger: a `$ref` must name a definition and carry no type or properties, a schema has at most
one type and an array exactly one item schema, and `allOf`/`oneOf` are not read. Kinds are found
by `x-kubernetes-group-version-kind`; extension values travel as YAML text (written as JSON,
which YAML parsers read).

The document is derived, never declared twice: paths and CRD schemas come from the v3 documents
of `sandbox.openapi`, built-in definitions from `sandbox.schemas`, rewritten for Swagger 2.0 the
way kube-apiserver rewrites CRD schemas for v2. Built-ins are converted and encoded once per
process; the rest is rebuilt only when a v3 document's hash moves. Nothing here knows HTTP or
storage: `render` takes an Accept header and returns bytes.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from sandbox.errors import NotAcceptable
from sandbox.openapi import COMPONENTS, INT_OR_STRING, OpenAPI
from sandbox.protobuf.encode import Writer
from sandbox.schemas import KUBERNETES_VERSION, REF_PREFIX, definitions

# kubectl asks for the `@` spelling, but Go's mime parser rejects `@` in a Content-Type, so the
# answer is labelled with the dotted spelling, as kube-apiserver labels it.
PROTOBUF_ASKED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
JSON = "application/json"
SERVED = (JSON, PROTOBUF_ASKED, PROTOBUF)
DEFINITIONS = "#/definitions/"
PRESERVE = "x-kubernetes-preserve-unknown-fields"

_WireForm = Literal["string", "double", "count", "flag", "any"]

# The scalar fields of gnostic's Schema message: Swagger name -> (field number, wire form).
_SCALARS: dict[str, tuple[int, _WireForm]] = {
    "$ref": (1, "string"),
    "format": (2, "string"),
    "title": (3, "string"),
    "description": (4, "string"),
    "default": (5, "any"),
    "multipleOf": (6, "double"),
    "maximum": (7, "double"),
    "exclusiveMaximum": (8, "flag"),
    "minimum": (9, "double"),
    "exclusiveMinimum": (10, "flag"),
    "maxLength": (11, "count"),
    "minLength": (12, "count"),
    "pattern": (13, "string"),
    "maxItems": (14, "count"),
    "minItems": (15, "count"),
    "uniqueItems": (16, "flag"),
    "maxProperties": (17, "count"),
    "minProperties": (18, "count"),
    "discriminator": (26, "string"),
    "readOnly": (27, "flag"),
    "example": (30, "any"),
}
_KEPT = frozenset({*_SCALARS, "required", "enum"}) - {"$ref"}
_PRIMITIVES = frozenset({"string", "integer", "number", "boolean"})

# -- JSON Schema / OpenAPI 3 -> Swagger 2.0 --------------------------------------------------


def _single_type(value: Any) -> str | None:
    """`["string", "null"]` -> "string"; Swagger 2.0 has one type or none."""
    types = value if isinstance(value, list) else [value]
    real = [t for t in types if isinstance(t, str) and t != "null"]
    return real[0] if len(real) == 1 else None


def _reference(node: dict[str, Any]) -> str | None:
    """The definition a node points at, by `$ref` or by OpenAPI 3's `allOf: [{$ref}]` wrapper."""
    ref = node.get("$ref")
    all_of = node.get("allOf")
    if not isinstance(ref, str) and isinstance(all_of, list) and len(all_of) == 1:
        inner = all_of[0]
        ref = inner.get("$ref") if isinstance(inner, dict) else None
    if not isinstance(ref, str):
        return None
    for prefix in (REF_PREFIX, COMPONENTS):
        if ref.startswith(prefix):
            return DEFINITIONS + ref[len(prefix) :]
    return None  # kube-openapi rejects any other target, so the node stays untyped instead


def _primitive_union(node: dict[str, Any]) -> str | None:
    """IntOrString and Quantity are a `oneOf` of primitives; Kubernetes' v2 calls them strings."""
    branches = node.get("oneOf")
    if not isinstance(branches, list):
        return None
    kinds = {_single_type(b.get("type")) for b in branches if isinstance(b, dict)}
    return "string" if "string" in kinds and kinds <= _PRIMITIVES else None


def to_v2_schema(node: dict[str, Any]) -> dict[str, Any]:
    """One schema in the Swagger 2.0 form kube-openapi parses. The input is never modified."""
    ref = _reference(node)
    if ref is not None:
        kept = {k: v for k, v in node.items() if k == "description" or k.startswith("x-")}
        return {"$ref": ref, **kept}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            kind = _single_type(value)
            if kind is not None:
                out[key] = kind
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: to_v2_schema(v) for k, v in value.items() if isinstance(v, dict)}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = to_v2_schema(value)
        elif key in _KEPT or key.startswith("x-") or key == "additionalProperties":
            out[key] = value
    return _fit_for_kube_openapi(node, out)


def _fit_for_kube_openapi(node: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    union = _primitive_union(node)
    if union is not None and "type" not in out:
        out["type"] = union
    # kube-apiserver's own v2 rules for CRD schemas: kubectl misreads typed nulls, and children
    # under preserve-unknown-fields would make it reject the unknown fields they allow.
    if node.get("nullable") is True:
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get(PRESERVE) is True:
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    return out


def _builtin_definition(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    converted = to_v2_schema(schema)
    for key in ("apiVersion", "kind"):  # kubernetes-validate's own enums, not Kubernetes'
        prop = converted.get("properties", {}).get(key)
        if isinstance(prop, dict):
            prop.pop("enum", None)
    if name == INT_OR_STRING:
        converted.setdefault("format", "int-or-string")
    return converted


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: param[k] for k in ("name", "in", "description", "required") if k in param
    }
    schema = param.get("schema") or {}
    return {**out, **{k: schema[k] for k in ("type", "format") if k in schema}}


def _first_schema(content: dict[str, Any]) -> dict[str, Any] | None:
    return next((media["schema"] for media in content.values() if "schema" in media), None)


def _response(response: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"description": response.get("description", "")}
    schema = _first_schema(response.get("content") or {})
    return {**out, "schema": to_v2_schema(schema)} if schema else out


def _operation(operation: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: operation[k] for k in ("tags", "description", "operationId") if k in operation
    }
    params = [_parameter(p) for p in operation.get("parameters", ())]
    consumes = ["*/*"]
    body = operation.get("requestBody")
    if isinstance(body, dict):
        content = body.get("content") or {}
        consumes = list(content)
        schema = _first_schema(content)
        if schema:
            required = bool(body.get("required"))
            param = {"name": "body", "in": "body", "required": required}
            params.insert(0, {**param, "schema": to_v2_schema(schema)})
    responses = operation.get("responses") or {}
    produces = sorted({media for r in responses.values() for media in r.get("content") or {}})
    return {
        **out,
        "consumes": consumes,
        "produces": produces,
        "schemes": ["https"],
        "parameters": params,
        "responses": {code: _response(r) for code, r in responses.items()},
        **{k: v for k, v in operation.items() if k.startswith("x-")},
    }


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {m: _operation(item[m]) for m in _METHODS if m in item}
    if "parameters" in item:
        out["parameters"] = [_parameter(p) for p in item["parameters"]]
    return out


# -- Swagger 2.0 -> gnostic openapi.v2 protobuf (field numbers from gnostic OpenAPIv2.proto) --


def _any(value: Any) -> Writer:
    """openapi.v2.Any, with the value in its `yaml` field."""
    return Writer().string(2, orjson.dumps(value).decode())


def _named_any(name: str, value: Any) -> Writer:
    return Writer().string(1, name).message(2, _any(value))


def _put_scalar(writer: Writer, number: int, how: _WireForm, value: Any) -> None:
    # A value of the wrong JSON type is left out: JSON Schema 2020-12 makes exclusiveMaximum a
    # number, say, where Swagger 2.0 has a flag.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if how == "string" and isinstance(value, str):
        writer.string(number, value)
    elif how == "double" and numeric:
        writer.double(number, float(value))
    elif how == "count" and numeric and isinstance(value, int):
        writer.integer(number, value)
    elif how == "flag" and isinstance(value, bool):
        writer.boolean(number, value)
    elif how == "any":
        writer.message(number, _any(value))


def _properties(properties: dict[str, Any]) -> Writer:
    entries = Writer()  # Properties{repeated NamedSchema additional_properties = 1}
    for name, child in properties.items():
        entries.message(1, Writer().string(1, name).message(2, encode_schema(child)))
    return entries


def _additional(value: Any) -> Writer:
    item = Writer()  # AdditionalPropertiesItem: oneof schema (1) / boolean (2)
    return (
        item.message(1, encode_schema(value)) if isinstance(value, dict) else item.boolean(2, value)
    )


def encode_schema(schema: dict[str, Any]) -> Writer:
    """An openapi.v2.Schema message from a Swagger 2.0 schema (as `to_v2_schema` returns)."""
    writer = Writer()
    for key, value in schema.items():
        if key in _SCALARS:
            _put_scalar(writer, *_SCALARS[key], value)
        elif key == "required":
            writer.strings(19, [name for name in value if isinstance(name, str)])
        elif key == "enum":
            for item in value:
                writer.message(20, _any(item))
        elif key == "additionalProperties":
            writer.message(21, _additional(value))
        elif key == "type":
            writer.message(22, Writer().string(1, value))  # TypeItem{repeated value}
        elif key == "items":
            writer.message(23, Writer().message(1, encode_schema(value)))  # ItemsItem{schema}
        elif key == "properties":
            writer.message(25, _properties(value))
        elif key.startswith("x-"):
            writer.message(31, _named_any(key, value))
    return writer


def _definition_entries(schemas: dict[str, dict[str, Any]]) -> bytes:
    """Repeated `Definitions.additional_properties` (NamedSchema) fields, ready to concatenate."""
    entries = Writer()
    for name, schema in schemas.items():
        entries.message(1, Writer().string(1, name).message(2, encode_schema(schema)))
    return entries.to_bytes()


# NonBodyParameter's oneof member and its `type` field number, by where the parameter goes;
# `format` always follows `type`.
_NON_BODY = {"header": (1, 5), "formData": (2, 6), "query": (3, 6), "path": (4, 5)}


def _encode_parameter(param: dict[str, Any]) -> Writer:
    """A ParametersItem holding a Parameter: a BodyParameter or a NonBodyParameter."""
    where = str(param.get("in", "query"))
    if where == "body":
        body = Writer().string(1, param.get("description", "")).string(2, param["name"])
        body.string(3, where).boolean(4, bool(param.get("required")))
        body.message(5, encode_schema(param.get("schema") or {}))
        return Writer().message(1, Writer().message(1, body))
    member, type_field = _NON_BODY.get(where, _NON_BODY["query"])
    sub = Writer().boolean(1, bool(param.get("required"))).string(2, where)
    sub.string(3, param.get("description", "")).string(4, param.get("name", ""))
    for offset, key in enumerate(("type", "format")):
        if key in param:
            sub.string(type_field + offset, param[key])
    return Writer().message(1, Writer().message(2, Writer().message(member, sub)))


def _encode_operation(operation: dict[str, Any]) -> Writer:
    writer = Writer().strings(1, operation.get("tags", []))
    writer.string(3, operation.get("description", "")).string(5, operation.get("operationId", ""))
    writer.strings(6, operation.get("produces", [])).strings(7, operation.get("consumes", []))
    for param in operation.get("parameters", ()):
        writer.message(8, _encode_parameter(param))
    responses = Writer()
    for code, response in operation.get("responses", {}).items():
        body = Writer().string(1, response.get("description", ""))
        if "schema" in response:  # SchemaItem: oneof schema (1) / file_schema (2)
            body.message(2, Writer().message(1, encode_schema(response["schema"])))
        # NamedResponseValue{name, ResponseValue{response}}
        responses.message(1, Writer().string(1, code).message(2, Writer().message(1, body)))
    writer.message(9, responses).strings(10, operation.get("schemes", []))
    for key, value in operation.items():
        if key.startswith("x-"):
            writer.message(13, _named_any(key, value))
    return writer


def _encode_path_item(item: dict[str, Any]) -> Writer:
    writer = Writer()
    for method, number in _METHODS.items():
        if method in item:
            writer.message(number, _encode_operation(item[method]))
    for param in item.get("parameters", ()):
        writer.message(9, _encode_parameter(param))
    return writer


@functools.cache
def _builtins() -> tuple[dict[str, dict[str, Any]], bytes]:
    """Every built-in definition in Swagger 2.0 form, and encoded as Definitions entries."""
    converted = {
        name: _builtin_definition(name, schema) for name, schema in sorted(definitions().items())
    }
    return converted, _definition_entries(converted)


# -- the served document ---------------------------------------------------------------------


def negotiate(accept: str) -> str:
    """The media type to answer with: the first served one the Accept header lists."""
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in SERVED:
            return PROTOBUF if media == PROTOBUF_ASKED else media
        if media in ("", "*/*", "application/*"):
            return JSON
    raise NotAcceptable(f"only the following media types are accepted: {', '.join(SERVED)}")


@dataclass(frozen=True)
class Rendering:
    """The document in one media type, ready to send."""

    body: bytes
    content_type: str
    etag: str  # quoted, as an ETag header carries it


class OpenAPIV2:
    """Serves `/openapi/v2`. Returned dicts are cached and shared: callers must not mutate them."""

    def __init__(self, v3: OpenAPI) -> None:
        self._v3 = v3
        self._key: tuple[str, ...] | None = None
        self._paths: dict[str, Any] = {}
        self._custom: dict[str, dict[str, Any]] = {}
        self._renderings: dict[str, Rendering] = {}

    def document(self) -> dict[str, Any]:
        """The Swagger 2.0 document as JSON-shaped data."""
        self._refresh()
        return {
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": f"v{KUBERNETES_VERSION}"},
            "paths": self._paths,
            "definitions": {**_builtins()[0], **self._custom},
        }

    def render(self, accept: str) -> Rendering:
        """The document encoded as the Accept header asks: gnostic protobuf, or JSON."""
        media = negotiate(accept)
        self._refresh()
        rendering = self._renderings.get(media)
        if rendering is None:
            body = orjson.dumps(self.document()) if media == JSON else self._protobuf()
            etag = f'"{hashlib.sha256(body).hexdigest()}"'
            rendering = self._renderings[media] = Rendering(body, media, etag)
        return rendering

    def _protobuf(self) -> bytes:
        paths = Writer()
        for path, item in self._paths.items():  # NamedPathItem entries of Paths.path
            paths.message(2, Writer().string(1, path).message(2, _encode_path_item(item)))
        info = Writer().string(1, "Kubernetes").string(2, f"v{KUBERNETES_VERSION}")
        definitions_message = Writer().extend(_builtins()[1])
        definitions_message.extend(_definition_entries(self._custom))
        document = Writer().string(1, "2.0").message(2, info)
        return document.message(8, paths).message(9, definitions_message).to_bytes()

    def _refresh(self) -> None:
        """Rebuild from the v3 documents when any of their hashes moved."""
        index = self._v3.root()["paths"]
        key = tuple(f"{gv} {entry['serverRelativeURL']}" for gv, entry in index.items())
        if key == self._key:
            return
        paths: dict[str, Any] = {}
        custom: dict[str, dict[str, Any]] = {}
        for group_version in index:
            document = self._v3.document(group_version) or {}
            for path, item in document.get("paths", {}).items():
                paths[path] = _path_item(item)
            for name, schema in document.get("components", {}).get("schemas", {}).items():
                if name not in definitions():
                    custom[name] = to_v2_schema(schema)
        self._paths, self._custom = paths, dict(sorted(custom.items()))
        self._renderings = {}
        self._key = key
