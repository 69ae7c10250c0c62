"""The Lease holder disowns the heals of every other process: each run booked elsewhere counts
as interrupted, its incident is open again, and the next heal of it continues its thread; the
holder's own runs are left alone. Two real processes book runs in one incident book."""

from __future__ import annotations

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

        assert [r.fingerprint for r in disowned] == [WEB.fingerprint]
        assert run(book, WEB).interrupted
        assert state(book, WEB) == "open"
        assert run(book, API) == mine
        assert state(book, API) == "handling"

        continued = book.begin(WEB, thread="t-new")
        assert continued.thread == "t-web"  # the interrupted heal's thread, not a second heal
        assert not continued.interrupted
        assert book.disown() == []
    finally:
        book.close()
