"""The crew's log lines as people read them (text) or as a log pipeline reads them (JSON lines).

`kubecrew --log-format json` (or `$KUBECREW_LOG_FORMAT=json`) calls `configure("json")`: every
record of Python's logging (the crew's, Bolt's, ...) is then one JSON object per line on
stderr:

    {"time": "2026-05-04T10:00:00.123Z", "level": "info", "logger": "kubecrew.watch",
     "message": "incident opened: Deployment shop/web [events]",
     "trace_id": "4bf9...", "span_id": "00f0..."}

`trace_id` and `span_id` are there when a span is current where the line was said (a desk's
incident, a loop node: `core.telemetry.tracing`), so a line leads to its trace. A message
keeps its own line breaks, escaped: one record, one line.

The long-lived commands print their progress through a "say" function (one line of news at a
time). `sayer(text, name=...)` is that function: `text` itself in the text format, so what a
person sees is unchanged, and in the JSON format a record on the `kubecrew.<name>` logger.
The text format installs nothing: Python's logging keeps its defaults (and a command's own
`basicConfig`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum

from core.telemetry.tracing import current_ids

FORMAT_ENV = "KUBECREW_LOG_FORMAT"
Say = Callable[[str], None]


class LogFormat(StrEnum):
    text = "text"
    json = "json"


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ids = current_ids()  # formatted in the caller's thread and context: its span
        if ids is not None:
            out["trace_id"], out["span_id"] = ids
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class _JsonHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """JSON lines on whatever sys.stderr is when a record comes (a test may have swapped it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(JsonLines())

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def configure(chosen: LogFormat | str) -> LogFormat:
    """Use `chosen` for this process's log records from now on (see the module docstring)."""
    chosen = LogFormat(chosen)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _JsonHandler)]:
        root.removeHandler(handler)
    crew = logging.getLogger("kubecrew")
    if chosen is LogFormat.json:
        root.addHandler(_JsonHandler())
        crew.setLevel(logging.INFO)  # the crew's news; other libraries keep their levels
    else:
        crew.setLevel(logging.NOTSET)
    return chosen


def current() -> LogFormat:
    json_on = any(isinstance(h, _JsonHandler) for h in logging.getLogger().handlers)
    return LogFormat.json if json_on else LogFormat.text


def sayer(text: Say, *, name: str) -> Say:
    """The say function of a long-lived command `name` (`watch`, `run`): `text` in the text
    format, a record on the `kubecrew.<name>` logger in the JSON format."""
    if current() is LogFormat.text:
        return text
    logger = logging.getLogger(f"kubecrew.{name}")
    return lambda line: logger.info("%s", line)
