"""The incident book in PostgreSQL (`$KUBECREW_DATABASE_URL`), shared by the crew's replicas:
the same transitions as the SQLite file, and each one atomic across processes. Two real
processes racing to record the same signals, new or back after being resolved, see each one as
news once between them. (Disowning another process's run, on both backends:
test_incident_book_disown.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from agents.runtime.notify.incidents import Incidents, open_incidents
from agents.runtime.notify.signals import Signal
from agents.runtime.persistence import DATABASE_ENV
from tests.support.postgres import fresh_database

WEB = Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "web crashes")
API = Signal("patrol", "Deployment", "shop", "api", "CrashLoopBackOff", "api crashes")
SIGNALS = 100

# Each process says it is ready, waits for the word, then records the same new signals in the
# same order.
RECORD_RACE = f"""
import sys
from agents.runtime.notify.incidents import open_incidents
from agents.runtime.notify.signals import Signal
book = open_incidents()
print("ready", flush=True)
sys.stdin.readline()
for n in range({SIGNALS}):
    _, news = book.record(Signal("alertmanager", "Deployment", "shop", f"web-{{n}}", "Down", "d"))
    print(n, news, flush=True)
book.close()
"""


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    return fresh_database(request.config)


@pytest.fixture
def book(url: str, tmp_path: Path) -> Iterator[Incidents]:
    with closing(open_incidents(tmp_path / "incidents.sqlite", {DATABASE_ENV: url})) as opened:
        yield opened


def state(book: Incidents, signal: Signal) -> str:
    incident = book.get(signal.fingerprint)
    assert incident is not None
    return incident.state


def elsewhere(url: str, script: str) -> subprocess.Popen[str]:
    """`script` in a process of its own, on the book in the database at `url`."""
    return subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, DATABASE_ENV: url},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_the_book_is_in_the_database_and_moves_as_the_file_does(
    book: Incidents, tmp_path: Path
) -> None:
    assert not (tmp_path / "incidents.sqlite").exists()
    first, news = book.record(WEB, now=100.5)
    assert news and (first.state, first.count, first.opened) == ("open", 1, 1)
    assert first.first_seen == 100.5  # epoch seconds keep their fraction
    again, news = book.record(WEB, now=160.25)
    assert not news and (again.count, again.last_seen) == (2, 160.25)

    assert book.take_open(WEB.fingerprint) and not book.take_open(WEB.fingerprint)
    book.wait(WEB.fingerprint, request="a-1", thread="t-1", asked="alice by noon")
    book.wait(WEB.fingerprint, request="a-2", thread="t-1", asked="bob by noon")  # asked again
    [(waiting, wait)] = book.waiting()
    assert (waiting.state, wait.request, wait.asked) == ("waiting", "a-2", "bob by noon")
    assert book.take_up(WEB.fingerprint) and not book.take_up(WEB.fingerprint)
    assert book.waiting() == []

    assert book.resolve(WEB.fingerprint) and not book.resolve(WEB.fingerprint)
    back, news = book.record(WEB)
    assert news and (back.state, back.opened, back.count) == ("open", 2, 3)
    assert [i.fingerprint for i in book.unresolved()] == [WEB.fingerprint]


def test_a_heal_is_booked_once_and_ended(book: Incidents) -> None:
    booked = book.begin(API, thread="t-api")
    assert booked.pid == os.getpid() and state(book, API) == "handling"
    assert book.begin(API, thread="t-other") == booked  # booked already: the same run
    book.end(API.fingerprint, thread="t-api")
    assert book.run(API.fingerprint) is None
    assert state(book, API) == "open"


@pytest.mark.parametrize("resolved", [False, True], ids=["new", "back-after-resolved"])
def test_two_processes_recording_the_same_signals_see_each_as_news_once(
    url: str, resolved: bool
) -> None:
    shared = {DATABASE_ENV: url}
    if resolved:
        with closing(open_incidents(environ=shared)) as book:
            for n in range(SIGNALS):
                book.record(down(n))
                book.resolve(down(n).fingerprint)
    racers = [elsewhere(url, RECORD_RACE) for _ in range(2)]
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
        for racer in racers:  # the word to both, then wait for both
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
    finally:
        said = [racer.communicate(timeout=60)[0] for racer in racers]

    assert [racer.returncode for racer in racers] == [0, 0]
    news = [line.split()[0] for out in said for line in out.splitlines() if line.endswith("True")]
    assert sorted(news, key=int) == [str(n) for n in range(SIGNALS)]  # each once, by one
    with closing(open_incidents(environ=shared)) as book:
        recorded = book.all()
    assert len(recorded) == SIGNALS
    assert {(i.state, i.opened, i.count) for i in recorded} == {
        ("open", 2, 3) if resolved else ("open", 1, 2)
    }


def down(n: int) -> Signal:
    """The racers' signal number `n` (RECORD_RACE makes the same)."""
    return Signal("alertmanager", "Deployment", "shop", f"web-{n}", "Down", "d")
