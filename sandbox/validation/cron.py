"""CronJob schedules: the five-field cron syntax and `@hourly`-style descriptors.

Accepts what Kubernetes accepts (its parser is robfig/cron's `ParseStandard`): minute, hour,
day of month, month (or JAN-DEC), day of week (0-6 or SUN-SAT); each field a comma list of `*`,
`?`, `N`, `N-M`, optionally `/step`. Problems are worded as that parser words them, because
Kubernetes passes its message straight through. Only syntax is checked; the next run time is
the CronJob controller's business. Nothing here knows about objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DESCRIPTORS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_GO_DURATION = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|ms|s|m|h))+|0")
_ATOI = re.compile(r"[+-]?[0-9]+")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: tuple[str, ...] = ()
    first_name_value: int = 0


_FIELDS = (
    _Bounds(0, 59),
    _Bounds(0, 23),
    _Bounds(1, 31),
    _Bounds(1, 12, _MONTHS, 1),
    _Bounds(0, 6, _DAYS, 0),
)


_STEP = _Bounds(1, 1)  # steps are plain numbers, never month or day names


class ScheduleError(ValueError):
    """A schedule that does not parse; the message says which field and why."""


def check(schedule: str) -> None:
    """Raise ScheduleError with the parser's message when `schedule` is not a valid schedule."""
    if not schedule:
        raise ScheduleError("empty spec string")
    if schedule.startswith(("TZ=", "CRON_TZ=")):
        # The zone prefix is legal cron; CronJob validation rejects it with its own message.
        schedule = schedule.partition(" ")[2].strip()
    if schedule.startswith("@"):
        _check_descriptor(schedule)
        return
    fields = schedule.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, _FIELDS, strict=True):
        for part in (p for p in text.split(",") if p):
            _check_range(part, bounds)


def _check_descriptor(schedule: str) -> None:
    if schedule in DESCRIPTORS:
        return
    if schedule.startswith("@every "):
        duration = schedule[len("@every ") :]
        if not _GO_DURATION.fullmatch(duration):
            raise ScheduleError(
                f'failed to parse duration {schedule}: time: invalid duration "{duration}"'
            )
        return
    raise ScheduleError(f"unrecognized descriptor: {schedule}")


def _number(text: str, bounds: _Bounds) -> int:
    if text.lower() in bounds.names:
        return bounds.names.index(text.lower()) + bounds.first_name_value
    if not _ATOI.fullmatch(text):
        raise ScheduleError(
            f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
        )
    number = int(text)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {text}")
    return number


def _check_range(expr: str, bounds: _Bounds) -> None:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = bounds.low, bounds.high
    else:
        if len(low_high) > 2:
            raise ScheduleError(f"too many hyphens: {expr}")
        start = _number(low_high[0], bounds)
        end = _number(low_high[1], bounds) if len(low_high) == 2 else start
    if len(range_and_step) > 2:
        raise ScheduleError(f"too many slashes: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _number(range_and_step[1], _STEP)
        if len(low_high) == 1:
            end = bounds.high  # `N/step` means from N to the field's maximum
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
