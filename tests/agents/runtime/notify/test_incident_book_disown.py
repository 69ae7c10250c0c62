"""A Lease holder's term starts with nobody handling anything (`Incidents.disown`): each run
booked by another process counts as interrupted and the next heal of it continues its thread;
this process's own run stays its own; every incident left handling is open again. Two real
processes book runs in one incident book: a SQLite file, and a real PostgreSQL database as the
crew's replicas share it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.runtime.notify.incidents import Incidents, Run, open_incidents
from agents.runtime.notify.signals import Signal
from agents.runtime.persistence import DATABASE_ENV
from tests.support.postgres import fresh_database

WEB = Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "web crashes")
API = Signal("patrol", "Deployment", "shop", "api", "CrashLoopBackOff", "api crashes")

BOOK_ELSEWHERE = """
import sys
from pathlib import Path
from agents.runtime.notify.incidents import open_incidents
from agents.runtime.notify.signals import Signal
book = open_incidents(Path(sys.argv[1]))
book.begin(Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "web"), thread="t-web")
book.close()
"""


def state(book: Incidents, signal: Signal) -> str:
    incident = book.get(signal.fingerprint)
    assert incident is not None
    return incident.state


def run(book: Incidents, signal: Signal) -> Run:
    booked = book.run(signal.fingerprint)
    assert booked is not None
    return booked


@pytest.mark.parametrize("where", ["sqlite", "postgres"])
def test_runs_of_other_processes_are_disowned_and_continued(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / "incidents.sqlite"
    env = {k: v for k, v in os.environ.items() if k != DATABASE_ENV}
    if where == "postgres":
        env[DATABASE_ENV] = fresh_database(request.config)
    book = open_incidents(path, env)
    try:
        mine = book.begin(API, thread="t-api")
        elsewhere = [sys.executable, "-c", BOOK_ELSEWHERE, str(path)]
        subprocess.run(elsewhere, check=True, env=env)
        assert run(book, WEB).thread == "t-web"
        assert state(book, WEB) == "handling"

        disowned = book.disown()

        assert disowned == [API.fingerprint, WEB.fingerprint]  # nobody handles anything now
        assert run(book, WEB).interrupted
        assert state(book, WEB) == "open"
        assert run(book, API) == mine
        assert state(book, API) == "open"

        continued = book.begin(WEB, thread="t-new")
        assert continued.thread == "t-web"  # the interrupted heal's thread, not a second heal
        assert not continued.interrupted
        assert continued.pid == os.getpid()  # this process's now
    finally:
        book.close()
