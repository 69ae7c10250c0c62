"""Keeping Secret values out of every tool output, whatever shape the output takes.

A Secret's `data` and `stringData` values are replaced by a marker that says how long the value
was; the keys stay, because "which keys exist" is what a diagnosis needs ("the pod wants key
`password`, the Secret has `passwd`"). The `kubectl.kubernetes.io/last-applied-configuration`
annotation carries a full copy of the applied object, so it is parsed and redacted the same way
(or dropped when it cannot be parsed). Redaction happens on the raw object, before any summary,
YAML or field selection is built, so no output path can skip it.

Objects from the store are never mutated: redaction builds new dicts. This is redaction by
position; a value moved elsewhere (an annotation, an error's text) is hidden by value, by the
tool call's `common.secret_values`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_servers.common.secret_values import LAST_APPLIED as LAST_APPLIED
from mcp_servers.common.secret_values import marker as marker

Json = dict[str, Any]


def redact_secret(secret: Json) -> Json:
    """A copy of a Secret (or a Secret-shaped manifest) with every value hidden."""
    out = dict(secret)
    for key in ("data", "stringData"):
        if isinstance(secret.get(key), dict):
            out[key] = {k: marker(v) for k, v in secret[key].items()}
    metadata = secret.get("metadata")
    if isinstance(metadata, dict) and LAST_APPLIED in (metadata.get("annotations") or {}):
        annotations = dict(metadata["annotations"])
        annotations[LAST_APPLIED] = _redacted_last_applied(annotations[LAST_APPLIED])
        out["metadata"] = {**metadata, "annotations": annotations}
    return out


def redact(obj: Json, *, kind: str = "") -> Json:
    """`obj` with Secret values hidden. `kind` names items of a list whose entries carry no kind
    (a SecretList's items have none)."""
    if (obj.get("kind") or kind) == "Secret":
        return redact_secret(obj)
    if isinstance(obj.get("items"), list):
        item_kind = str(obj.get("kind", "")).removesuffix("List") or kind
        return {**obj, "items": [redact(i, kind=item_kind) for i in obj["items"]]}
    return obj


def _redacted_last_applied(text: object) -> str:
    try:
        applied = json.loads(str(text))
    except ValueError:
        return marker(text)
    if not isinstance(applied, dict):
        return marker(text)
    return json.dumps(redact_secret(applied), sort_keys=True)
