"""Everything the Slack app's handlers and its poster need, as one object built at startup.

Stores and ledgers are opened per use, on the thread that uses them: Bolt runs listeners on a
thread pool and the poster on its own thread, and a SQLite connection belongs to one thread.
`now` is the clock answers and expiries are stamped with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.policy.catalog import PolicySet
from core.policy.people import People
from core.policy.store.base import Store
from kubecrew.channels.slack.ledger import Ledger, open_ledger
from kubecrew.channels.slack.settings import SlackSettings


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SlackDeps:
    settings: SlackSettings
    people: People
    policies: PolicySet
    open_store: Callable[[], Store]
    ledger_path: Path
    now: Callable[[], datetime] = field(default=_utc_now)

    @contextmanager
    def store(self) -> Iterator[Store]:
        opened = self.open_store()
        try:
            yield opened
        finally:
            opened.close()

    @contextmanager
    def ledger(self) -> Iterator[Ledger]:
        opened = open_ledger(self.ledger_path)
        try:
            yield opened
        finally:
            opened.close()
