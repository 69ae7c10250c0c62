"""The sandbox's sense of time: real by default, accelerated or hand-driven for tests and evals.

Every controller, backoff, probe, CronJob and grace period asks this clock, never the wall clock,
so a sandbox run at `rate=10` lives ten seconds for each real one and a run at `rate=0` stands
still until someone calls `advance` (the fully deterministic mode unit tests use).

Clients compute ages with their own, real clock (kubectl's AGE, LAST SEEN), so a clock that runs
faster than life would soon stamp objects in the future and kubectl would print `<invalid>`. An
accelerated clock therefore starts a day behind real time unless told where to start: ages read
a day too old, and at 10x it takes over two hours of real time to catch up.

Kubernetes timestamps are RFC 3339 in UTC with second precision (`2026-12-02T11:48:47Z`);
`MicroTime` fields (events, leases) carry microseconds.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

ACCELERATED_HEAD_START = timedelta(days=1)


class Clock:
    def __init__(self, start: datetime | None = None, *, rate: float = 1.0) -> None:
        if rate < 0:
            raise ValueError(f"a clock rate must be 0 or more, not {rate}")
        self.rate = rate
        if start is None:
            start = datetime.now(UTC) - (ACCELERATED_HEAD_START if rate > 1 else timedelta(0))
        self._origin = start
        self._real_origin = time.monotonic()
        self._offset = timedelta(0)

    def now(self) -> datetime:
        elapsed = (time.monotonic() - self._real_origin) * self.rate
        return self._origin + timedelta(seconds=elapsed) + self._offset

    def seconds(self) -> float:
        """Now as a POSIX timestamp: the cheap form controllers compare deadlines with."""
        return self.now().timestamp()

    def advance(self, delta: timedelta) -> None:
        self._offset += delta

    def real_seconds(self, sandbox_seconds: float) -> float:
        """How long a real wait lasts for `sandbox_seconds` to pass (infinite when stopped)."""
        return sandbox_seconds / self.rate if self.rate else float("inf")

    def timestamp(self) -> str:
        return format_time(self.now())

    def micro_timestamp(self) -> str:
        return format_micro_time(self.now())


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
