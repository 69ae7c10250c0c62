"""An accelerated clock's stamps as clients see them (sandbox/timeframe.py): moved onto the wall
clock by one shift per response, each keeping its fraction and its order; stamps a client sends
moved back; Lease times and non-time fields untouched; a clock at 1x or told where to start
shown as it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from sandbox.clock import Clock
from sandbox.timeframe import TimeFrame

HOUR = timedelta(hours=1)


def test_the_stamps_of_a_response_move_by_one_shift_and_keep_their_fractions() -> None:
    frame = TimeFrame(Clock(rate=10))
    body = orjson.dumps(
        {
            "metadata": {"creationTimestamp": "2026-12-05T10:00:00Z", "name": "web"},
            "status": {"conditions": [{"lastTransitionTime": "2026-12-05T10:00:30Z"}]},
            "eventTime": "2026-12-05T10:00:59.123456Z",
            "data": {"note": "2026-12-05T10:00:00Z"},
            "spec": {"renewTime": "2026-12-05T10:00:00.000000Z"},
        }
    )

    moved = orjson.loads(frame.outbound(body, -HOUR))

    assert moved["metadata"] == {"creationTimestamp": "2026-12-05T09:00:00Z", "name": "web"}
    assert moved["status"]["conditions"][0]["lastTransitionTime"] == "2026-12-05T09:00:30Z"
    assert moved["eventTime"] == "2026-12-05T09:00:59.123456Z"
    assert moved["data"] == {"note": "2026-12-05T10:00:00Z"}  # data, not a time field
    assert moved["spec"] == {"renewTime": "2026-12-05T10:00:00.000000Z"}  # clients' own clocks
    assert len(frame.outbound(body, -HOUR)) == len(body)  # Content-Length stays true


def test_stamps_a_client_sends_move_back_to_sandbox_time_in_objects_and_json_patches() -> None:
    clock = Clock(rate=10)
    clock.advance(HOUR)  # the sandbox lives an hour ahead of the wall clock
    frame = TimeFrame(clock)
    wall = datetime.now(UTC).replace(microsecond=0)
    sent = wall.strftime("%Y-%m-%dT%H:%M:%SZ")

    event = frame.inbound({"kind": "Event", "lastTimestamp": sent, "message": sent})
    [op] = frame.inbound([{"op": "replace", "path": "/status/startTime", "value": sent}])

    landed = datetime.fromisoformat(event["lastTimestamp"].replace("Z", "+00:00"))
    assert abs(landed - (wall + HOUR)) <= timedelta(seconds=2)
    assert event["message"] == sent
    assert op["value"] == event["lastTimestamp"]


def test_only_a_clock_off_the_speed_of_life_and_not_told_where_to_start_is_moved() -> None:
    start = datetime(2030, 1, 2, tzinfo=UTC)
    assert TimeFrame(Clock(rate=10)).shown_to({})
    assert not TimeFrame(Clock(rate=10)).shown_to({"kubecrew-clock": "cluster"})
    assert not TimeFrame(Clock()).shown_to({})
    assert not TimeFrame(Clock(start, rate=10)).shown_to({})
    assert not TimeFrame(Clock(start, rate=0)).shown_to({})


def test_a_connection_keeps_its_shift_and_a_new_one_sees_the_clock_as_of_then() -> None:
    clock = Clock(rate=10)
    frame = TimeFrame(clock)
    kept = frame.shift_for(("127.0.0.1", 50000))
    clock.advance(HOUR)  # an hour of sandbox time passes between two reads of one client

    assert frame.shift_for(("127.0.0.1", 50000))() == kept()  # kubectl's read and its patch
    fresh = frame.shift_for(("127.0.0.1", 50001))()
    assert abs(kept() - fresh - HOUR) <= timedelta(seconds=2)
