"""Elapsed time as `kubectl get` prints it ("5s", "3m20s", "2d3h", "45d", "2y10d").

The breakpoints are apimachinery's `HumanDuration`: about two significant figures, so AGE, LAST
SEEN and DURATION cells match a real cluster to the character. Timestamps are RFC 3339 strings as
Kubernetes serializes them; they are turned into epoch seconds once and subtracted as floats.

This module knows nothing of objects, columns or tables.
"""

from __future__ import annotations

from datetime import UTC, datetime

UNKNOWN = "<unknown>"


def human_duration(seconds: float) -> str:
    """`seconds` elapsed, rounded down the way Kubernetes rounds them."""
    whole = int(seconds)  # truncates toward zero, as Go's int(d.Seconds()) does
    if whole < 0:
        # Up to a second of clock skew reads as "now"; more is an impossible future.
        return "0s" if whole == -1 else "<invalid>"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return _two_units(minutes, "m", whole % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    return _hours_and_beyond(minutes)


def _hours_and_beyond(minutes: int) -> str:
    hours = minutes // 60
    if hours < 8:
        return _two_units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return _two_units(days, "d", hours % 24, "h")
    if days < 365 * 2:
        return f"{days}d"
    years, rest = divmod(days, 365)
    if years < 8:
        return _two_units(years, "y", rest, "d")
    return f"{years}y"


def _two_units(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}{small}{small_unit}" if small else f"{big}{big_unit}"


def epoch(value: object) -> float | None:
    """Epoch seconds of an RFC 3339 timestamp, or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def since(value: object, now: float) -> str:
    """Age of a timestamp at `now` (epoch seconds); `<unknown>` when it is missing."""
    moment = epoch(value)
    return UNKNOWN if moment is None else human_duration(now - moment)


def now_epoch(now: datetime) -> float:
    """Epoch seconds of `now`; a naive datetime is taken as UTC, never as local time."""
    return (now if now.tzinfo else now.replace(tzinfo=UTC)).timestamp()
