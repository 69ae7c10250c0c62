"""Custom resources checked against their CRD's OpenAPI v3 schema, as kube-apiserver does.

The CRD's structural schema is JSON Schema with OpenAPI's dialect (`nullable`,
`x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`); it is translated once per
schema and checked with `jsonschema`. Violations become causes worded like Kubernetes' own
(`spec.size in body must be of type integer: "big"`). Unknown fields are not reported here: the
field-validation step prunes or rejects them first.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import jsonschema

from sandbox.errors import Cause
from sandbox.validation.causes import INVALID, NOT_SUPPORTED, REQUIRED, render

_TOP_LEVEL = ("apiVersion", "kind", "metadata")


def schema_problems(schema: Mapping[str, Any], obj: Mapping[str, Any]) -> list[Cause]:
    validator = _validator(json.dumps(schema, sort_keys=True))
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    return [_cause(error) for error in sorted(validator.iter_errors(body), key=_order)]


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = _translate(json.loads(schema_json))
    if isinstance(schema.get("properties"), dict):
        for name in _TOP_LEVEL:
            schema["properties"].pop(name, None)
    if isinstance(schema.get("required"), list):
        schema["required"] = [r for r in schema["required"] if r not in _TOP_LEVEL]
    validator: jsonschema.protocols.Validator = jsonschema.Draft7Validator(schema)
    return validator


def _translate(node: Any) -> Any:
    """OpenAPI v3 schema -> JSON Schema: `nullable`, int-or-string, no format assertions."""
    if isinstance(node, list):
        return [_translate(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _translate(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    out.pop("nullable", None)
    if node.get("x-kubernetes-preserve-unknown-fields") and "type" not in out:
        out.pop("type", None)
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _order(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path)


def _path(error: jsonschema.ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _cause(error: jsonschema.ValidationError) -> Cause:
    path = _path(error)
    value = error.instance
    keyword = error.validator
    rule: Any = error.validator_value
    if keyword == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else ""
        return Cause(f"{path}.{missing}" if path else missing, "Required value", REQUIRED)
    if keyword == "enum":
        allowed = ", ".join(render(v) for v in rule)
        return Cause(
            path, f"Unsupported value: {render(value)}: supported values: {allowed}", NOT_SUPPORTED
        )
    if keyword == "type":  # Kubernetes shows the JSON type of the bad value, not the value
        wanted = rule if isinstance(rule, str) else rule[0]
        got = render(_json_type(value))
        return Cause(
            path, f"Invalid value: {got}: {path} in body must be of type {wanted}: {got}", INVALID
        )
    detail = {
        "minimum": f"should be greater than or equal to {error.validator_value}",
        "maximum": f"should be less than or equal to {error.validator_value}",
        "minLength": f"should be at least {error.validator_value} chars long",
        "maxLength": f"may not be longer than {error.validator_value}",
        "pattern": f"should match '{error.validator_value}'",
        "minItems": f"should have at least {error.validator_value} items",
        "maxItems": f"must have at most {error.validator_value} items",
    }.get(str(keyword), error.message)
    return Cause(path, f"Invalid value: {render(value)}: {path} in body {detail}", INVALID)
