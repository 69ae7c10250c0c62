"""Container logs stay within the server's line budget: a run keeps up to MAX_LINES alone, the
budget's share when many containers print, never under MIN_LINES; a pod forgotten gives its
share back, and the newest lines are the ones kept."""

from __future__ import annotations

from sandbox.clock import Clock
from sandbox.logs import MIN_LINES, LogQuery, PodLogs


def fill(logs: PodLogs, pods: int, lines: int) -> None:
    for n in range(lines):
        for pod in range(pods):
            logs.append("ns", f"p{pod}", "c", f"line {n}")


def kept(logs: PodLogs, pod: int = 0) -> list[str]:
    return logs.read(("ns", f"p{pod}", "c"), LogQuery()).splitlines()


def test_many_containers_share_the_budget_and_keep_their_newest_lines() -> None:
    logs = PodLogs(Clock(), total_lines=1_000)
    fill(logs, pods=1, lines=600)
    assert len(kept(logs)) == 600
    fill(logs, pods=10, lines=200)  # ten containers: 100 lines each
    assert [len(kept(logs, p)) for p in range(10)] == [100] * 10
    assert kept(logs, 3)[-1] == "line 199" and kept(logs, 3)[0] == "line 100"
    for pod in range(1, 10):
        logs.forget("ns", f"p{pod}")
    fill(logs, pods=1, lines=900)
    assert len(kept(logs)) == 1_000  # alone again: the whole budget
    fill(logs, pods=100, lines=MIN_LINES + 5)
    assert len(kept(logs, 99)) == MIN_LINES  # never under the floor
