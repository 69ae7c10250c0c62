"""What clients see of a clock that does not run at the speed of life.

An accelerated sandbox lives ten seconds for each real one, but its clients compute ages with
their own, real clock: server-side Tables print `AGE` against the sandbox's now, while
`kubectl describe` and scripts that compare a stamp with `date` subtract it from the wall clock.
So the server-written stamps a client reads are re-anchored per response: each moves by (wall
now - sandbox now), which keeps its age in sandbox time exact and the response's stamps in
order. `describe` then agrees with `get`, and no stamp is ever in the future.

Stamps a client writes into those fields (an Event it records, a condition it patches) come
back the other way, so they land at the sandbox moment they meant. Lease `renewTime` and
`acquireTime` are left alone both ways: clients coordinate through them with their own clocks.

One connection keeps the shift it first got (for `CONNECTION_S` at most), so a client's reads
in a row agree with each other: kubectl compares the object it read with the one a patch
returns to say "(no change)". A new connection sees the clock as of then.

A client that reasons in the cluster's own time (the crew reads it from node Lease renewals)
asks for the stamps as they are with `Kubecrew-Clock: cluster`. A clock told where to start,
running at 1x or stopped is shown as it is to everyone: a scenario's `start` is a date its
author chose, and the deterministic tests compare exact stamps.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sandbox.clock import Clock

# Fields of metav1.Time or metav1.MicroTime the API server or its controllers write.
TIME_FIELDS = (
    "creationTimestamp",
    "deletionTimestamp",
    "lastTransitionTime",
    "lastProbeTime",
    "lastHeartbeatTime",
    "lastUpdateTime",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "lastObservedTime",
    "startedAt",
    "finishedAt",
    "startTime",
    "completionTime",
    "lastScheduleTime",
    "lastSuccessfulTime",
    "expirationTimestamp",
    "lastScaleTime",
)
_FIELD_SET = frozenset(TIME_FIELDS)
CLOCK_HEADER = "kubecrew-clock"  # lower-cased, as sandbox.http keeps header names
_SECONDS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
_STAMP = re.compile(rf"({_SECONDS})(\.\d{{1,9}})?Z")
_WIRE = re.compile(rf'"({"|".join(TIME_FIELDS)})":"({_SECONDS})'.encode() + rb'(\.\d{1,9})?Z"')


CONNECTION_S = 30.0  # real seconds a connection keeps its shift
_REMEMBERED = 4096  # connections remembered at most


class TimeFrame:
    """Re-anchors the stamps of one sandbox's responses (and requests) to the wall clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._connections: dict[object, tuple[float, timedelta]] = {}

    def shift_for(self, connection: object) -> Callable[[], timedelta]:
        """The shift a connection's responses take, fixed while it lives (see the module)."""
        now = time.monotonic()
        seen = self._connections.get(connection)
        if seen is None or now - seen[0] > CONNECTION_S:
            if len(self._connections) >= _REMEMBERED:
                self._connections.clear()
            seen = self._connections[connection] = (now, self.shift())
        shift = seen[1]
        return lambda: shift

    def shown_to(self, headers: Mapping[str, str]) -> bool:
        """Whether a request's client sees the stamps moved: any client, unless the clock runs
        at the speed of life or the client reasons in the cluster's own time and says so (the
        crew does, with `Kubecrew-Clock: cluster`)."""
        return self.clock.wall_anchored and headers.get(CLOCK_HEADER) != "cluster"

    def shift(self) -> timedelta:
        """Wall now minus sandbox now, in whole seconds (stamps keep their own fractions)."""
        return timedelta(seconds=round(datetime.now(UTC).timestamp() - self.clock.seconds()))

    def outbound(self, body: bytes, shift: timedelta) -> bytes:
        """`body` (JSON, as the server writes it) with its stamps moved by `shift`."""
        if not shift or b'Z"' not in body:
            return body
        moved: dict[bytes, bytes] = {}

        def move(match: re.Match[bytes]) -> bytes:
            seconds = match.group(2)
            if seconds not in moved:
                moved[seconds] = _moved(seconds.decode(), shift).encode()
            return b'"%s":"%s%sZ"' % (match.group(1), moved[seconds], match.group(3) or b"")

        return _WIRE.sub(move, body)

    def inbound(self, value: Any) -> Any:
        """A decoded request body with the stamps it carries moved back to sandbox time."""
        return _walk(value, _stamp_mover(-self.shift()))


def _moved(seconds: str, shift: timedelta) -> str:
    moment = datetime.fromisoformat(seconds).replace(tzinfo=UTC) + shift
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _stamp_mover(shift: timedelta) -> Callable[[str], str]:
    def move(text: str) -> str:
        match = _STAMP.fullmatch(text)
        if match is None or not shift:
            return text
        return f"{_moved(match.group(1), shift)}{match.group(2) or ''}Z"

    return move


def _walk(value: Any, move: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        if _is_json_patch_op(value):
            field = str(value["path"]).rsplit("/", 1)[-1]
            if field in _FIELD_SET and isinstance(value.get("value"), str):
                return {**value, "value": move(value["value"])}
            return {**value, "value": _walk(value.get("value"), move)}
        return {
            key: move(item) if key in _FIELD_SET and isinstance(item, str) else _walk(item, move)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_walk(item, move) for item in value]
    return value


def _is_json_patch_op(value: dict[str, Any]) -> bool:
    return (
        isinstance(value.get("op"), str)
        and isinstance(value.get("path"), str)
        and ("value" in value)
    )
