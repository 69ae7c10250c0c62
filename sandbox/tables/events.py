"""Event rows, for both `v1` Events and `events.k8s.io/v1` Events.

Kubernetes prints both API versions with one printer, because they share one internal type. The
newer version renames fields (`regarding`, `note`, `deprecatedLastTimestamp`, ...), so each row
first reads the fields under either name. LAST SEEN falls back from `lastTimestamp` to the first
time seen, then to `eventTime`; a series overrides both LAST SEEN and COUNT. Reads JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.tables.cells import sub
from sandbox.tables.durations import since
from sandbox.tables.printer import NAME, Column, Printer, name_of, wide


@dataclass(frozen=True)
class _Names:
    """Where one API version keeps the fields the printer reads."""

    regarding: str
    message: str
    first: str
    last: str
    count: str
    source: str


_CORE = _Names("involvedObject", "message", "firstTimestamp", "lastTimestamp", "count", "source")
_EVENTS_V1 = _Names(
    "regarding",
    "note",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
    "deprecatedSource",
)


def _source(event: Mapping[str, Any], names: _Names) -> str:
    source = sub(event, names.source)
    component = source.get("component") or event.get("reportingController") or ""
    host = source.get("host") or event.get("reportingInstance") or ""
    return f"{component}, {host}" if host else str(component)


def _object(regarding: Mapping[str, Any]) -> str:
    kind = str(regarding.get("kind", "")).lower()
    name = regarding.get("name")
    return f"{kind}/{name}" if name else kind


def _cells(event: dict[str, Any], now: float, names: _Names) -> list[Any]:
    first_time = event.get(names.first)
    first = since(first_time if first_time else event.get("eventTime"), now)
    last = since(event[names.last], now) if event.get(names.last) else first
    count = int(event.get(names.count) or 0)
    series = event.get("series")
    if series:
        last = since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events of the newer API carry no count
    regarding = sub(event, names.regarding)
    return [
        last,
        str(event.get("type", "")),
        str(event.get("reason", "")),
        _object(regarding),
        str(regarding.get("fieldPath", "")),
        _source(event, names),
        str(event.get(names.message, "")).strip(),
        first,
        count,
        name_of(event),
    ]


def _core_event(event: dict[str, Any], now: float) -> list[Any]:
    return _cells(event, now, _CORE)


def _events_v1_event(event: dict[str, Any], now: float) -> list[Any]:
    return _cells(event, now, _EVENTS_V1)


_COLUMNS = (
    Column("Last Seen", "Time since the event was last observed."),
    Column("Type", "Normal or Warning."),
    Column("Reason", "A short machine-readable reason."),
    Column("Object", "The object the event is about, as kind/name."),
    wide("Subobject", "The part of the object concerned, such as a container."),
    wide("Source", "The component (and host) that reported the event."),
    Column("Message", "The human-readable description."),
    wide("First Seen", "Time since the event was first observed."),
    wide("Count", "How many times the event was observed."),
    Column(NAME.name, NAME.description, priority=1, format="name"),
)

PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("", "Event"): Printer(_COLUMNS, _core_event),
    ("events.k8s.io", "Event"): Printer(_COLUMNS, _events_v1_event),
}
