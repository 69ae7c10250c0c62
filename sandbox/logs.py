"""Container logs: what `pods/log` serves.

The simulated kubelet appends lines as containers run; the API reads them back with kubectl's
options (container, previous, tailLines, sinceSeconds, limitBytes, timestamps, follow). Each
container keeps its current and previous run, bounded, as a kubelet keeps rotated logs.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from sandbox.clock import Clock

LogKey = tuple[str, str, str]  # (namespace, pod, container)
MAX_LINES = 10_000


@dataclass
class _Container:
    current: deque[tuple[datetime, str]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    previous: deque[tuple[datetime, str]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    followers: set[asyncio.Queue[str]] = field(default_factory=set)


@dataclass(frozen=True)
class LogQuery:
    previous: bool = False
    tail_lines: int | None = None
    since_seconds: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False


class PodLogs:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._containers: dict[LogKey, _Container] = {}

    def append(self, namespace: str, pod: str, container: str, line: str) -> None:
        entry = self._containers.setdefault((namespace, pod, container), _Container())
        moment = self.clock.now()
        entry.current.append((moment, line))
        for follower in entry.followers:
            follower.put_nowait(line)

    def restart(self, namespace: str, pod: str, container: str) -> None:
        """A container restarted: its log becomes the previous one (`logs --previous`)."""
        entry = self._containers.setdefault((namespace, pod, container), _Container())
        entry.previous, entry.current = entry.current, deque(maxlen=MAX_LINES)

    def forget(self, namespace: str, pod: str) -> None:
        for key in [k for k in self._containers if k[:2] == (namespace, pod)]:
            del self._containers[key]

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
        self._containers.setdefault(key, _Container()).followers.add(queue)
        return queue

    def unfollow(self, key: LogKey, queue: asyncio.Queue[str]) -> None:
        entry = self._containers.get(key)
        if entry is not None:
            entry.followers.discard(queue)
