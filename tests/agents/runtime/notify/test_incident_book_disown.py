"""A Lease holder's term starts with nobody handling anything (`Incidents.disown`): each run
booked by another process counts as interrupted and the next heal of it continues its thread;
this process's own run stays its own; every incident left handling is open again. Two real
processes book runs in one incident book."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agents.runtime.notify.incidents import Incidents, Run
from agents.runtime.notify.signals import Signal

WEB = Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "web crashes")
API = Signal("patrol", "Deployment", "shop", "api", "CrashLoopBackOff", "api crashes")

BOOK_ELSEWHERE = """
import sys
from agents.runtime.notify.incidents import Incidents, Run
from agents.runtime.notify.signals import Signal
book = Incidents(__import__("pathlib").Path(sys.argv[1]))
book.begin(Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "web"), thread="t-web")
"""


def state(book: Incidents, signal: Signal) -> str:
    incident = book.get(signal.fingerprint)
    assert incident is not None
    return incident.state


def run(book: Incidents, signal: Signal) -> Run:
    booked = book.run(signal.fingerprint)
    assert booked is not None
    return booked


def test_runs_of_other_processes_are_disowned_and_continued(tmp_path: Path) -> None:
    path = tmp_path / "incidents.sqlite"
    book = Incidents(path)
    try:
        mine = book.begin(API, thread="t-api")
        subprocess.run([sys.executable, "-c", BOOK_ELSEWHERE, str(path)], check=True)
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
