"""Cron schedules as the CronJob controller reads them: when is the next run after a moment?

The syntax is the one `sandbox.validation.cron` accepts (five fields; `*`, `?`, `N`, `N-M`,
lists, `/step`, month and weekday names; the `@hourly`-style descriptors), interpreted like the
cron library Kubernetes uses: when either day field starts with `*` or `?` a day must match both
of them, otherwise it may match either. Times are wall-clock times in the CronJob's time zone.
Validation has already refused bad schedules on the API side; `Schedule.parse` still raises
ValueError so a scenario typo fails loudly. Knows nothing of objects or clocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_BOUNDS = ((0, 59, ()), (0, 23, ()), (1, 31, ()), (1, 12, _MONTHS), (0, 6, _DAYS))
_HORIZON = timedelta(days=366 * 5)  # a schedule with no run in five years never runs


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool  # one of the day fields starts with * or ?: both must match

    @classmethod
    def parse(cls, text: str) -> Schedule:
        fields = _MACROS.get(text.strip(), text).split()
        if len(fields) != 5:
            raise ValueError(f"expected exactly 5 fields, found {len(fields)}: {text!r}")
        minutes, hours, days, months, weekdays = (
            _field(text, low, high, names)
            for text, (low, high, names) in zip(fields, _BOUNDS, strict=True)
        )
        starred = fields[2][0] in "*?" or fields[4][0] in "*?"
        return cls(minutes, hours, days, months, weekdays, any_day=starred)

    def next_after(self, moment: datetime) -> datetime:
        """The first scheduled minute strictly after `moment` (aware), in `moment`'s zone."""
        zone = moment.tzinfo
        local = moment.replace(tzinfo=None, second=0, microsecond=0) + timedelta(minutes=1)
        limit = local + _HORIZON
        while local < limit:
            if local.month not in self.months:
                month = local.month % 12 + 1
                local = datetime(local.year + (month == 1), month, 1)
            elif not self._day_matches(local):
                local = datetime(local.year, local.month, local.day) + timedelta(days=1)
            elif local.hour not in self.hours:
                local = local.replace(minute=0) + timedelta(hours=1)
            elif local.minute not in self.minutes:
                local += timedelta(minutes=1)
            else:
                return local.replace(tzinfo=zone)
        raise ValueError("the schedule never runs")

    def _day_matches(self, local: datetime) -> bool:
        day = local.day in self.days
        weekday = (local.isoweekday() % 7) in self.weekdays
        return (day and weekday) if self.any_day else (day or weekday)


def _field(text: str, low: int, high: int, names: tuple[str, ...]) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            start, end = low, high
        else:
            first, _, last = span.partition("-")
            start = _value(first, names, low)
            end = _value(last, names, low) if last else (high if step_text else start)
        if not (low <= start <= end <= high) or step < 1:
            raise ValueError(f"{part!r} is out of range {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _value(text: str, names: tuple[str, ...], low: int) -> int:
    if text.lower() in names:
        return names.index(text.lower()) + low
    return int(text)
