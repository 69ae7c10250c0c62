"""The sandbox clock: real time by default, movable for deterministic scenarios."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sandbox.clock import Clock, format_time, parse_time


def test_clock_starts_where_told_and_advances_on_demand() -> None:
    start = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    clock = Clock(start)
    assert abs(clock.now() - start) < timedelta(seconds=5)
    clock.advance(timedelta(hours=2))
    assert abs(clock.now() - (start + timedelta(hours=2))) < timedelta(seconds=5)


def test_timestamps_round_trip_in_kubernetes_format() -> None:
    moment = datetime(2026, 12, 2, 11, 48, 47, tzinfo=UTC)
    assert format_time(moment) == "2026-12-02T11:48:47Z"
    assert parse_time("2026-12-02T11:48:47Z") == moment


def test_an_accelerated_clock_starts_at_the_real_now_and_runs_faster() -> None:
    real = datetime.now(UTC)
    clock = Clock(rate=10)
    assert abs(clock.now() - real) < timedelta(seconds=1)  # no head start to read in ages
    assert clock.wall_anchored  # clients see its stamps on their own clock (sandbox.timeframe)
    first = clock.now()
    clock.advance(timedelta(minutes=5))
    assert clock.now() - first >= timedelta(minutes=5)
    assert clock.real_seconds(30) == 3


def test_a_stopped_clock_moves_only_when_advanced() -> None:
    start = datetime(2030, 1, 2, tzinfo=UTC)
    clock = Clock(start, rate=0)
    assert clock.now() == start
    clock.advance(timedelta(seconds=90))
    assert clock.now() == start + timedelta(seconds=90)
    assert clock.real_seconds(1) == float("inf")
