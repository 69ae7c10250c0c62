"""Container logs: what `pods/log` serves.

The simulated kubelet appends lines as containers run; the API reads them back with kubectl's
options (container, previous, tailLines, sinceSeconds, limitBytes, timestamps, follow). Each
container keeps its current and previous run, bounded, as a kubelet keeps rotated logs: at most
`MAX_LINES` a run, and fewer when many containers share `TOTAL_LINES` (50,000 pods printing
access lines would otherwise fill the server's memory within the hour), never under
`MIN_LINES`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from sandbox.clock import Clock

LogKey = tuple[str, str, str]  # (namespace, pod, container)
MAX_LINES = 10_000  # of one run of one container
TOTAL_LINES = 2_000_000  # of every current run together (~300 MB)
MIN_LINES = 50


@dataclass
class _Container:
    current: deque[tuple[datetime, str]] = field(default_factory=deque)
    previous: deque[tuple[datetime, str]] = field(default_factory=deque)
    followers: set[asyncio.Queue[str]] = field(default_factory=set)


@dataclass(frozen=True)
class LogQuery:
    previous: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False


class PodLogs:
    def __init__(self, clock: Clock, *, total_lines: int = TOTAL_LINES) -> None:
        self.clock = clock
        self.total_lines = total_lines
        self._containers: dict[LogKey, _Container] = {}
        self._of_pod: dict[tuple[str, str], set[str]] = {}  # (namespace, pod) -> containers
        self._kept = MAX_LINES  # lines a run keeps, with this many containers

    def append(self, namespace: str, pod: str, container: str, line: str) -> None:
        entry = self._entry((namespace, pod, container))
        current = entry.current
        current.append((self.clock.now(), line))
        while len(current) > self._kept:
            current.popleft()
        for follower in entry.followers:
            follower.put_nowait(line)

    def restart(self, namespace: str, pod: str, container: str) -> None:
        """A container restarted: its log becomes the previous one (`logs --previous`)."""
        entry = self._entry((namespace, pod, container))
        entry.previous, entry.current = entry.current, deque()

    def _entry(self, key: LogKey) -> _Container:
        entry = self._containers.get(key)
        if entry is None:
            entry = self._containers[key] = _Container()
            self._of_pod.setdefault(key[:2], set()).add(key[2])
            self._share()
        return entry

    def _share(self) -> None:
        count = max(1, len(self._containers))
        self._kept = max(MIN_LINES, min(MAX_LINES, self.total_lines // count))

    def forget(self, namespace: str, pod: str) -> None:
        for container in self._of_pod.pop((namespace, pod), ()):
            self._containers.pop((namespace, pod, container), None)
        self._share()

    def has_previous(self, namespace: str, pod: str, container: str) -> bool:
        entry = self._containers.get((namespace, pod, container))
        return bool(entry and entry.previous)

    def read(self, key: LogKey, query: LogQuery) -> str:
        entry = self._containers.get(key)
        if entry is None:
            return ""
        lines = list(entry.previous if query.previous else entry.current)
        if query.since_seconds is not None:
            cutoff = self.clock.now().timestamp() - query.since_seconds
            lines = [(t, s) for t, s in lines if t.timestamp() >= cutoff]
        if query.tail_lines is not None:
            lines = lines[-query.tail_lines :] if query.tail_lines > 0 else []
        text = "".join(
            (f"{t.strftime('%Y-%m-%dT%H:%M:%S.%fZ')} " if query.timestamps else "") + s + "\n"
            for t, s in lines
        )
        if query.limit_bytes is not None:
            text = text.encode()[: query.limit_bytes].decode(errors="ignore")
        return text

    def follow(self, key: LogKey) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        self._entry(key).followers.add(queue)
        return queue

    def unfollow(self, key: LogKey, queue: asyncio.Queue[str]) -> None:
        entry = self._containers.get(key)
        if entry is not None:
            entry.followers.discard(queue)
