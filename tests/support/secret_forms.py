"""How a Secret value can show up in what a tool answered, for "it never does" checks.

A value leaks in its plain form, in base64 (a Secret's `data` holds it so; with or without the
padding), or JSON-escaped (inside a JSON text, or a JSON document kept in a JSON string, such as
the last-applied-configuration annotation). `leaks(text, value)` names the forms found in `text`.
The values the tests choose are random and long, so a form found is a leak, not a coincidence.
"""

from __future__ import annotations

import base64
import json
import secrets


def canary(prefix: str = "canary") -> str:
    """A random value no tool output could hold by chance, with characters JSON escapes."""
    return f'{prefix}-{secrets.token_urlsafe(18)}"q\\ü'


def forms(value: str) -> dict[str, str]:
    raw = value.encode()
    encoded = base64.b64encode(raw).decode()
    escaped = json.dumps(value)[1:-1]
    return {
        "plain": value,
        "base64": encoded,
        "base64 unpadded": encoded.rstrip("="),
        "url-safe base64": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "json-escaped": escaped,
        "json-escaped, non-ascii kept": json.dumps(value, ensure_ascii=False)[1:-1],
        "json-escaped twice": json.dumps(escaped)[1:-1],
        "python repr": repr(value)[1:-1],
    }


def leaks(text: str, *values: str) -> list[str]:
    """The forms of `values` that occur in `text` ("base64 of canary-...")."""
    return [
        f"{name} of {value[:12]}..."
        for value in values
        for name, form in forms(value).items()
        if form in text
    ]
