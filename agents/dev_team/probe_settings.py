"""A probe as a change of it starts from: the settings `ops.Probe` takes, and those a live
probe has (`probe_fields`), so "set the readiness probe's period to 5s" keeps its path and
port. Plain functions of the container's JSON; `changing` makes the change.
"""

from __future__ import annotations

from typing import Any

PROBE_SETTINGS = ("path", "port", "command", "handler", "scheme", "initial_delay", "period",
                   "timeout", "failure_threshold")  # fmt: skip


def probe_fields(probe: dict[str, Any]) -> dict[str, Any]:
    """An existing probe's settings, as `ops.Probe` fields (what a change of one keeps)."""
    fields: dict[str, Any] = {}
    if "httpGet" in probe:
        get = probe["httpGet"] or {}
        fields |= {
            "handler": "http",
            "path": get.get("path") or "/",
            "port": get.get("port", 80),
            "scheme": get.get("scheme") or "HTTP",
        }
    elif "tcpSocket" in probe:
        fields |= {"handler": "tcp", "port": (probe["tcpSocket"] or {}).get("port", 80)}
    elif "exec" in probe:
        fields |= {"handler": "exec", "command": (probe["exec"] or {}).get("command") or []}
    for key, field in (
        ("initialDelaySeconds", "initial_delay"),
        ("periodSeconds", "period"),
        ("timeoutSeconds", "timeout"),
        ("failureThreshold", "failure_threshold"),
    ):
        if isinstance(probe.get(key), int) and probe[key] > 0:
            fields[field] = probe[key]
    return fields
