"""Maintenance windows: weekly day and time ranges, in a named time zone.

A window opens on each listed day at `start` (wall-clock time in `timezone`) and closes at `end`
the same day, or the next day when `end` is not after `start` ("22:00" to "06:00" opens Friday
night and closes Saturday morning; a window belongs to the day it opens). "00:00" to "24:00" is a
whole day. Times are wall-clock times: on the day the clocks skip 02:00-03:00, a window from
02:30 opens at 03:00, when the clocks jump past its start.

These are typed data rather than CEL because CEL's getHours() takes no time zone in our library,
and because a window must answer "when does it open next?", which a condition cannot.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from core.policy.documents.common import DnsLabel, Strict

Weekday = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
WEEKDAYS: tuple[Weekday, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DAY = 24 * 60
_SEARCH_DAYS = 15  # two weeks and a day: enough to step over a daylight-saving gap


def _clock(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML 1.1 reads an unquoted 22:00 as the base-60 number 1320.
        raise ValueError(
            f'YAML read this time as the number {value}; quote it: "{value // 60:02d}:'
            f'{value % 60:02d}"'
        )
    if not isinstance(value, str) or not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d|24:00", value):
        raise ValueError(f"{value!r} is not a time of day; write HH:MM (24-hour), in quotes")
    return value


def _zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"unknown time zone {value!r}; use an IANA name such as Europe/Paris or UTC"
        ) from exc
    return value


ClockTime = Annotated[str, BeforeValidator(_clock)]
TimeZone = Annotated[str, AfterValidator(_zone)]


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


class MaintenanceWindow(Strict):
    name: DnsLabel
    days: Annotated[list[Weekday], Field(min_length=1)]
    start: ClockTime
    end: ClockTime
    timezone: TimeZone

    @model_validator(mode="after")
    def _sensible(self) -> MaintenanceWindow:
        if len(set(self.days)) != len(self.days):
            raise ValueError("a day is listed twice in days")
        if self.start == "24:00":
            raise ValueError("start 24:00 is the next day's 00:00; write 00:00 on that day")
        if _minutes(self.start) == _minutes(self.end):
            raise ValueError(
                f"start and end are both {self.start}: an empty window (for a whole day write "
                'start "00:00", end "24:00")'
            )
        return self

    @property
    def _span(self) -> tuple[int, int]:
        start, end = _minutes(self.start), _minutes(self.end)
        return start, end if end > start else end + _DAY

    def is_open(self, now: datetime) -> bool:
        local = now.astimezone(ZoneInfo(self.timezone))
        minute = local.hour * 60 + local.minute + local.second / 60
        start, end = self._span
        today = local.date()
        for opened, offset in ((today, 0), (today - timedelta(days=1), _DAY)):
            if WEEKDAYS[opened.weekday()] in self.days and start <= minute + offset < end:
                return True
        return False

    def next_opening(self, now: datetime) -> datetime | None:
        """`now` when open, else the next instant the window opens (None: not within 15 days)."""
        if self.is_open(now):
            return now
        zone = ZoneInfo(self.timezone)
        today = now.astimezone(zone).date()
        for days in range(_SEARCH_DAYS):
            candidate = self._opening_on(today + timedelta(days=days), zone)
            # Compared in UTC: equal tzinfo would make Python compare wall times, folds and all.
            after = candidate is not None and candidate.astimezone(UTC) > now.astimezone(UTC)
            if candidate is not None and after and self.is_open(candidate):
                return candidate
        return None

    def _opening_on(self, day: date, zone: ZoneInfo) -> datetime | None:
        if WEEKDAYS[day.weekday()] not in self.days:
            return None
        start = _minutes(self.start)
        wall = datetime(day.year, day.month, day.day, start // 60, start % 60, tzinfo=zone)
        after = wall.astimezone(UTC)  # fold 0: in a skipped hour, the instant after the skip
        if after.astimezone(zone).replace(tzinfo=None) == wall.replace(tzinfo=None):
            return after.astimezone(zone)
        # The start falls in a skipped hour: the window opens when the clocks jump past it.
        before = wall.replace(fold=1).astimezone(UTC)
        if self.is_open(before) or not self.is_open(after):
            return None
        while after - before > timedelta(seconds=1):
            middle = before + (after - before) / 2
            before, after = (before, middle) if self.is_open(middle) else (middle, after)
        return after.replace(microsecond=0).astimezone(zone)

    def describe(self) -> str:
        closes = "" if _minutes(self.end) > _minutes(self.start) else " the next day"
        return f"{','.join(self.days)} {self.start}-{self.end}{closes} ({self.timezone})"
