"""The sandbox's sense of time: real by default, accelerated or hand-driven for tests and evals.

Every controller, backoff, probe, CronJob and grace period asks this clock, never the wall clock,
so a sandbox run at `rate=10` lives ten seconds for each real one and a run at `rate=0` stands
still until someone calls `advance` (the fully deterministic mode unit tests use).

A clock not told where to start begins at the real now. Clients compute ages with their own,
real clock, so one that runs at another speed than life is `wall_anchored`: the API shows its
stamps moved onto the wall clock (`sandbox.timeframe`), and they are never in the future.

Kubernetes timestamps are RFC 3339 in UTC with second precision (`2026-12-02T11:48:47Z`);
`MicroTime` fields (events, leases) carry microseconds.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


class Clock:
    def __init__(self, start: datetime | None = None, *, rate: float = 1.0) -> None:
        if rate < 0:
            raise ValueError(f"a clock rate must be 0 or more, not {rate}")
        self.rate = rate
        # Clients see this clock's stamps re-anchored to their own (see sandbox.timeframe).
        self.wall_anchored = start is None and rate not in (0.0, 1.0)
        self._origin = datetime.now(UTC) if start is None else start
        self._real_origin = time.monotonic()
        self._offset = timedelta(0)
        self._stamped: tuple[datetime, str] | None = None  # the last second formatted

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
        """Now to the second, as objects stamp it (formatted once a second: a 50,000-pod round
        of metrics asks for it 50,000 times)."""
        second = self.now().replace(microsecond=0)
        stamped = self._stamped
        if stamped is None or stamped[0] != second:
            stamped = self._stamped = (second, format_time(second))
        return stamped[1]

    def micro_timestamp(self) -> str:
        return format_micro_time(self.now())


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
