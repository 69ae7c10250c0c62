"""The request lines a serving application logs, so its error rate and latency show in its log.

A real server that fails half its requests logs those failures, and one that has become slow
logs slow requests; the traffic counters Prometheus reads are not the only witness. A profile's
`log_lines` are what the app prints while healthy, as they are written (durations included).
While a fault makes it fail (`error_rate` > 0) or answer at another latency than its lines were
written for, a profile that serves traffic prints only request lines instead: its own request
lines (`GET /x 200 ...` in logfmt, JSON or access-log form), or a logfmt one on its first path
when it has none, rewritten so that

* the share `error_rate` of them are 500 errors (at `level=error` where the line has a level),
  the status the traffic counters count, spread evenly: line n fails when
  floor((n+1)*rate) > floor(n*rate), so the log is the same on every run and the share is exact
  over any stretch of lines;
* their durations are about `latency_ms` (a small fixed cycle of spreads around it), in the
  unit and precision the line uses; a format without a duration (nginx's) cannot show it.

A line already logging a 5xx is the app's own account of a failure and keeps its status.
Healthy profiles print their lines verbatim. This module knows profiles and strings only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from sandbox.kubelet.profiles import Profile

ERROR_STATUS = "500"  # what sandbox.traffic counts an error_rate failure as
SPREAD = (1.0, 0.93, 1.08, 0.97, 1.12, 0.9, 1.04)  # logged duration / latency_ms, in turn
_REQUEST = re.compile(
    r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+\S+(?:\s+HTTP/[\d.]+\")?\s+(?P<status>\d{3})\b"
)
_LEVEL = re.compile(r'(?P<key>"?level"?\s*[=:]\s*"?)info\b')
_MILLIS = re.compile(
    r'(?P<before>\b\d{3}\s+)(?P<value>\d+(?:\.\d+)?)ms\b|"duration_ms":\s*(?P<json>\d+(?:\.\d+)?)'
)


def faulty(profile: Profile, usual_latency_ms: float) -> bool:
    """Whether `profile` logs rewritten request lines rather than its own lines verbatim;
    `usual_latency_ms`: the latency its lines were written for."""
    return profile.requests_per_second > 0 and (
        profile.error_rate > 0 or profile.latency_ms != usual_latency_ms
    )


def lines(profile: Profile, usual_latency_ms: float, first: int, count: int) -> Iterator[str]:
    """The `count` lines the app prints from its `first`-th line on (a running sequence
    number, so a log continues where the previous round stopped)."""
    if not faulty(profile, usual_latency_ms):
        own = profile.log_lines
        yield from (own[n % len(own)] for n in range(first, first + count) if own)
        return
    templates = [line for line in profile.log_lines if _REQUEST.search(line)]
    if not templates:
        path = profile.http_paths[0] if profile.http_paths else "/"
        templates = [f'level=info msg="GET {path} 200 {usual_latency_ms:.1f}ms"']
    slow = profile.latency_ms != usual_latency_ms
    for n in range(first, first + count):
        line = templates[n % len(templates)]
        if slow:
            line = _with_duration(line, profile.latency_ms * SPREAD[n % len(SPREAD)])
        yield _failed(line) if _fails(n, profile.error_rate) else line


def _fails(n: int, rate: float) -> bool:
    return math.floor((n + 1) * rate + 1e-9) > math.floor(n * rate + 1e-9)


def _failed(line: str) -> str:
    found = _REQUEST.search(line)
    if found is None or found["status"].startswith("5"):
        return line
    start, end = found.span("status")
    line = line[:start] + ERROR_STATUS + line[end:]
    return _LEVEL.sub(lambda m: f"{m['key']}error", line, count=1)


def _with_duration(line: str, millis: float) -> str:
    def replace(found: re.Match[str]) -> str:
        if found["json"] is not None:
            return f'"duration_ms":{_number(found["json"], millis)}'
        return f"{found['before']}{_number(found['value'], millis)}ms"

    return _MILLIS.sub(replace, line, count=1)


def _number(written: str, millis: float) -> str:
    """`millis` in the precision the line wrote its own duration with."""
    return f"{millis:.1f}" if "." in written else str(round(millis))
