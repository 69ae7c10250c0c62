"""Quantities as people write them, read off a `Sentence` and marked as read.

Counts ("two", "3", "a couple"), memory and CPU sizes ("512MB" is 512Mi as people mean it when
they size a container, "half a CPU", "2 cores", "250 millicores"), storage sizes ("10 gigs"),
percentages ("70%", "70 percent"), ports ("port 8080", ":8080", "on 80"), URL paths
("/healthz"), host names ("shop.example.com"), durations ("10s", "5 minutes"), schedules
("every night at 2", "every 5 minutes", "daily at 3am", a cron line), and key=value pairs.

Each reader returns what it found (None or empty when nothing) and marks the tokens it used,
so the words left may name the object. Must not know: any operation or agent.
"""

from __future__ import annotations

import re

from agents.runtime import numbers
from agents.runtime.changes.words.sentence import CRON, Sentence

NUMBERS = {**numbers.WORDS, "none": 0, "a": 1, "an": 1, "single": 1, "pair": 2}
CPU = frozenset({"cpu", "cpus", "core", "cores", "vcpu", "vcpus", "millicores", "millicpu"})
MEMORY = frozenset({"memory", "mem", "ram"})
MEMORY_SIZE = re.compile(
    r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[kmgt]i?b?|[KMGT]i?|[kmgt]i?b|Ki|Mi|Gi|Ti)$", re.I
)
MEMORY_UNITS = frozenset(
    {"mb", "mi", "mib", "gb", "gi", "gib", "kb", "ki", "tb", "ti", "gigs", "gig", "megs", "meg"}
)
_CPU_SIZE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>m|millicores?|cores?|cpus?)?$", re.I)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
PAIR = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)=(?P<value>.*)$")
_PERCENT = re.compile(r"^(?P<n>\d+(?:\.\d+)?)%$")
_PORT = re.compile(r"^:?(?P<n>\d{1,5})(?:/(?P<proto>tcp|udp|sctp))?$", re.I)
_HOST = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$")
_PATH = re.compile(r"^/[A-Za-z0-9._~/-]*$")
_DURATION = re.compile(r"^(?P<n>\d+)(?P<unit>ms|s|sec|secs|m|min|mins|h|hr|hrs)$", re.I)
_SECONDS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
}
_TIME = re.compile(r"^(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?P<ampm>am|pm)?$")
_DAYS = {
    "sunday": 0,
    "monday": 1,
    "tuesday": 2,
    "wednesday": 3,
    "thursday": 4,
    "friday": 5,
    "saturday": 6,
}


def count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return NUMBERS.get(word)


def number(word: str) -> float | None:
    return float(word) if _NUMBER.match(word) else None


def memory(number_text: str, unit: str) -> str:
    """People's memory sizes as Kubernetes writes them: MB and MiB are both Mi, GB Gi."""
    letter = {"gig": "G", "gigs": "G", "meg": "M", "megs": "M"}.get(unit.lower(), unit[0].upper())
    return f"{number_text}{letter}i"


def size_at(sentence: Sentence, index: int) -> str:
    """A memory or storage size written at `index` ("512Mi", "512 MB", "10 gigs"), marked
    read; "" when there is none."""
    word = sentence.at(index)
    found = MEMORY_SIZE.match(word)
    if found and not _CPU_SIZE.match(word):
        sentence.take(index)
        return memory(found["n"], found["unit"])
    following = sentence.at(index + 1)
    if _NUMBER.match(word) and following in MEMORY_UNITS:
        sentence.take(index, index + 1)
        return memory(word, following)
    return ""


def sizes(sentence: Sentence, *, links: frozenset[str] = frozenset()) -> tuple[dict[str, str], str]:
    """{"cpu": ..., "memory": ...} as Kubernetes quantities from the words, and a problem when a
    number has no unit it can be read by. `links` are words the reader may mark read too."""
    fields: dict[str, str] = {}
    problem = ""
    low = sentence.low
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        following = sentence.at(index + 1)
        cpu = _CPU_SIZE.match(word)
        if word in ("half", "quarter") and CPU & set(low[index + 1 : index + 3]):
            fields["cpu"] = "500m" if word == "half" else "250m"
            stop = index + 3 if following in ("a", "an") else index + 2
            sentence.take(*range(index, stop))
            continue
        if (found := size_at(sentence, index)) != "":
            fields["memory"] = found
            continue
        if _NUMBER.match(word) and following in CPU:
            fields["cpu"] = f"{word}m" if following.startswith("milli") else word
            sentence.take(index + 1)
        elif cpu and cpu["unit"]:
            unit = cpu["unit"].lower()
            fields["cpu"] = f"{cpu['n']}m" if unit.startswith("m") else cpu["n"]
        elif _NUMBER.match(word) and near(low, index, CPU | MEMORY) in CPU:
            fields["cpu"] = word
        elif _NUMBER.match(word) and near(low, index, CPU | MEMORY) in MEMORY:
            problem = f"'{word}' of memory needs a unit: 512Mi, 1Gi"
        elif word not in CPU | MEMORY | links:
            continue
        sentence.take(index)
    return fields, problem


def near(words: list[str], index: int, kinds: frozenset[str]) -> str:
    """The closest word of `kinds` to words[index], or ""."""
    best, distance = "", len(words)
    for other, word in enumerate(words):
        if word in kinds and abs(other - index) < distance:
            best, distance = word, abs(other - index)
    return best


def pairs(sentence: Sentence, *, strip: bool = True) -> dict[str, str]:
    """key=value words, marked read (values with quotes stripped; "k=" is an empty value)."""
    found: dict[str, str] = {}
    for index, word in enumerate(sentence.raw):
        match = PAIR.match(word)
        if match and index not in sentence.used:
            value = match["value"]
            found[match["key"]] = value.strip("'\"") if strip else value
            sentence.take(index)
    return found


def percent(sentence: Sentence, *, near_words: frozenset[str] = frozenset()) -> dict[str, int]:
    """Percentages, each by the nearest of `near_words` ("70% cpu", "memory at 80 percent"):
    {"cpu": 70}; a percentage near none of them is keyed "".
    """
    found: dict[str, int] = {}
    for index, word in enumerate(sentence.low):
        if index in sentence.used:
            continue
        value: float | None = None
        match = _PERCENT.match(word)
        if match:
            value = float(match["n"])
            sentence.take(index)
        elif _NUMBER.match(word) and sentence.at(index + 1) in ("percent", "pct", "%"):
            value = float(word)
            sentence.take(index, index + 1)
        if value is None:
            continue
        key = near(sentence.low, index, near_words) if near_words else ""
        found[key] = int(value)
    return found


def port(sentence: Sentence, *, cue: frozenset[str] = frozenset({"port", "ports"})) -> int:
    """The port named after a cue word ("port 8080", "on port 80"), or written ":8080" or
    "8080/tcp"; 0 when none. The port's tokens are marked read."""
    for index, word in enumerate(sentence.low):
        if index in sentence.used:
            continue
        following = sentence.at(index + 1)
        if word in cue and (match := _PORT.match(following)) is not None:
            sentence.take(index, index + 1)
            return int(match["n"])
        if word.startswith(":") and (match := _PORT.match(word)) is not None:
            sentence.take(index)
            return int(match["n"])
        if "/" in word and (match := _PORT.match(word)) is not None and match["proto"]:
            sentence.take(index)
            return int(match["n"])
    return 0


def bare_number(sentence: Sentence, *, after: int = -1, below: int = 65536) -> int:
    """The first number token after `after` not read yet (a port said as "on 8080"); 0 when
    none. Marked read."""
    for index in range(after + 1, len(sentence.low)):
        word = sentence.low[index]
        if index not in sentence.used and word.isdigit() and 0 < int(word) < below:
            sentence.take(index)
            return int(word)
    return 0


def path(sentence: Sentence) -> str:
    """A URL path ("/healthz", "/api/v1"), marked read; "" when none."""
    for index, word in enumerate(sentence.raw):
        if index not in sentence.used and _PATH.match(word) and len(word) < 256:
            sentence.take(index)
            return word
    return ""


def host(sentence: Sentence) -> str:
    """A DNS host name ("shop.example.com"), marked read; "" when none. An image reference or
    a file name with an extension people run ("report.py") is not a host."""
    for index, word in enumerate(sentence.low):
        if index in sentence.used or not _HOST.match(word):
            continue
        if word.rsplit(".", 1)[-1] in ("py", "sh", "js", "rb", "yaml", "yml", "json", "txt"):
            continue
        sentence.take(index)
        return word
    return ""


def duration(sentence: Sentence, *, after: frozenset[str]) -> int:
    """Seconds said after one of `after` ("after 10s", "every 5 seconds", "timeout 3"); 0 when
    none. Marked read."""
    for index, word in enumerate(sentence.low):
        if word not in after or index in sentence.used:
            continue
        following, unit = sentence.at(index + 1), sentence.at(index + 2)
        if (match := _DURATION.match(following)) is not None:
            seconds = int(match["n"]) * _SECONDS.get(match["unit"].lower(), 1)
            if match["unit"].lower() == "ms":
                seconds = max(1, int(match["n"]) // 1000)
            sentence.take(index, index + 1)
            return seconds
        if following.isdigit():
            sentence.take(index, index + 1)
            if unit in _SECONDS:
                sentence.take(index + 2)
                return int(following) * _SECONDS[unit]
            return int(following)
    return 0


def schedule(sentence: Sentence) -> str:
    """A cron schedule from the words: a cron line as written, or "every 5 minutes", "every
    hour", "hourly", "every night at 2", "daily at 3:30am", "every monday at 9", "weekly";
    "" when none. Marked read."""
    if sentence.cron:
        sentence.take_words({CRON.lower()})
        return sentence.cron
    low = sentence.low
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        if word in ("hourly", "daily", "nightly", "weekly", "monthly") or word == "every":
            return _cron_from(sentence, index)
    return ""


def _cron_from(sentence: Sentence, index: int) -> str:
    low = sentence.low
    word = low[index]
    used = [index]
    if word == "every":
        amount = sentence.at(index + 1)
        step = count(amount)
        if step is not None and amount not in ("a", "an"):
            unit = sentence.at(index + 2)
            used += [index + 1, index + 2]
        else:
            step, unit = 1, amount
            used.append(index + 1)
        fields = _every(unit if unit == "s" else unit.rstrip("s"), step)
    else:
        fields = _PERIODS[word]
    if fields is None:
        return ""
    minute, hour, day_of_month, day_of_week = fields
    sentence.take(*used)
    clock = _clock(sentence, index)
    if clock is not None:
        hour, minute = clock
    return f"{minute} {hour} {day_of_month} * {day_of_week}"


_PERIODS = {"hourly": ("0", "*", "*", "*"), "daily": ("0", "0", "*", "*"),
            "nightly": ("0", "0", "*", "*"), "weekly": ("0", "0", "*", "0"),
            "monthly": ("0", "0", "1", "*")}  # fmt: skip
_DAY_HOURS = {"day": "0", "night": "0", "midnight": "0", "morning": "6", "noon": "12",
              "evening": "18"}  # fmt: skip


def _every(unit: str, step: int) -> tuple[str, str, str, str] | None:
    """(minute, hour, day of month, day of week) for "every <step> <unit>"."""
    each = "*" if step == 1 else f"*/{step}"
    if unit in ("minute", "min"):
        return each, "*", "*", "*"
    if unit in ("hour", "hr"):
        return "0", each, "*", "*"
    if unit in _DAY_HOURS:
        return "0", _DAY_HOURS[unit], "*" if step == 1 else f"*/{step}", "*"
    if unit == "week":
        return "0", "0", "*", "0"
    if unit == "month":
        return "0", "0", "1", "*"
    if unit == "weekday":
        return "0", "0", "*", "1-5"
    day = _DAYS.get(unit, _DAYS.get(unit + "s"))
    return None if day is None else ("0", "0", "*", str(day))


def _clock(sentence: Sentence, index: int) -> tuple[str, str] | None:
    """(hour, minute) said as "at 2", "at 3:30am", "at 11 pm", "at noon", after `index`."""
    at = sentence.find({"at"}, after=index)
    if at == -1 or at > index + 4:
        return None
    said, following = sentence.at(at + 1), sentence.at(at + 2)
    if said in ("noon", "midday", "midnight"):
        sentence.take(at, at + 1)
        return ("12" if said != "midnight" else "0"), "0"
    clock = _TIME.match(said)
    if clock is None:
        return None
    hour = int(clock["h"]) % 24
    half = clock["ampm"] or (following if following in ("am", "pm") else "")
    if half == "pm" and hour < 12:
        hour += 12
    if half == "am" and hour == 12:
        hour = 0
    sentence.take(at, at + 1, *([at + 2] if following in ("am", "pm", "o'clock", "oclock") else []))
    return str(hour), str(int(clock["m"] or 0))
