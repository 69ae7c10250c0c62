"""Rules for ConfigMaps and Secrets: data keys, Secret data encoding, size, typed Secrets.

In JSON a Secret's `data` values are base64 strings; a value that does not decode is reported
without echoing it, since it may be a secret. `stringData` keys count as data keys for the
typed-Secret requirements, because the API server merges them before validating.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, names
from sandbox.validation.payload import mapping, string_map, text

MAX_DATA_BYTES = 1024 * 1024
REDACTED = "<secret contents redacted>"
_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

# Keys each well-known Secret type must carry in data (any one of a tuple of two is enough
# for basic-auth, which Kubernetes reports as both missing).
_TYPED_KEYS: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "kubernetes.io/dockercfg": ((".dockercfg",),),
    "kubernetes.io/dockerconfigjson": ((".dockerconfigjson",),),
    "kubernetes.io/basic-auth": (("username", "password"),),
    "kubernetes.io/ssh-auth": (("ssh-privatekey",),),
    "kubernetes.io/tls": (("tls.crt",), ("tls.key",)),
}
_SERVICE_ACCOUNT_ANNOTATION = "kubernetes.io/service-account.name"


def validate_config_map(obj: Mapping[str, Any]) -> list[Cause]:
    data = string_map(obj, "data")
    binary = string_map(obj, "binaryData")
    found = _keys(data, "data") + _keys(binary, "binaryData")
    for key in binary:
        if key in data:
            found.append(
                causes.invalid(f"binaryData[{key}]", key, "duplicate of key present in data")
            )
    size = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
    size += sum(len(k.encode()) + _decoded_size(v) for k, v in binary.items())
    if size > MAX_DATA_BYTES:
        found.append(causes.too_long("data", MAX_DATA_BYTES))
    return found


def validate_secret(obj: Mapping[str, Any]) -> list[Cause]:
    data = string_map(obj, "data")
    plain = string_map(obj, "stringData")
    found = _keys(data, "data") + _keys(plain, "stringData")
    for key, value in data.items():
        if (problem := base64_problem(value)) is not None:
            found.append(causes.invalid(f"data[{key}]", REDACTED, problem))
    size = sum(len(k.encode()) + _decoded_size(v) for k, v in data.items())
    size += sum(len(k.encode()) + len(v.encode()) for k, v in plain.items() if k not in data)
    if size > MAX_DATA_BYTES:
        found.append(causes.too_long("data", MAX_DATA_BYTES))
    return found + _typed(obj, keys=set(data) | set(plain))


def _keys(data: Mapping[str, str], path: str) -> list[Cause]:
    found: list[Cause] = []
    for key in data:
        found += causes.invalid_each(f"{path}[{key}]", key, names.config_key(key))
    return found


def _typed(obj: Mapping[str, Any], *, keys: set[str]) -> list[Cause]:
    kind = text(obj, "type")
    if kind == "kubernetes.io/service-account-token":
        annotations = mapping(mapping(obj, "metadata"), "annotations")
        if not annotations.get(_SERVICE_ACCOUNT_ANNOTATION):
            return [causes.required(f"metadata.annotations[{_SERVICE_ACCOUNT_ANNOTATION}]")]
        return []
    found: list[Cause] = []
    for alternatives in _TYPED_KEYS.get(kind, ()):
        if not keys.intersection(alternatives):
            found += [causes.required(f"data[{key}]") for key in alternatives]
    return found


def base64_problem(value: str) -> str | None:
    """Go's standard-encoding decoder verdict: None, or where the input stops being base64."""
    # Go's decoder skips line breaks, so positions count them but validity ignores them.
    for i, char in enumerate(value):
        if char not in _BASE64_ALPHABET and char not in "=\r\n":
            return f"illegal base64 data at input byte {i}"
    compact = value.replace("\r", "").replace("\n", "")
    try:
        base64.b64decode(compact, validate=True)
    except binascii.Error:
        first_pad = value.find("=")
        return f"illegal base64 data at input byte {first_pad if first_pad >= 0 else len(value)}"
    return None


def _decoded_size(value: str) -> int:
    return len(value) * 3 // 4
