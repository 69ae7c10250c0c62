"""The sandbox's sense of time: real by default, settable for deterministic tests and evals.

Kubernetes timestamps are RFC 3339 in UTC with second precision (`2026-12-02T11:48:47Z`);
`MicroTime` fields (events, leases) carry microseconds.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    def __init__(self, start: datetime | None = None) -> None:
        self._offset = timedelta(0)
        if start is not None:
            self._offset = start - datetime.now(UTC)

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def advance(self, delta: timedelta) -> None:
        self._offset += delta

    def timestamp(self) -> str:
        return format_time(self.now())


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
