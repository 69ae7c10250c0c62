"""`kubecrew status` with `$KUBECREW_DATABASE_URL` lists the incidents every replica books in
that database; a database that does not answer is one line on stderr naming its host and port,
never the password, and exit status 1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from agents.runtime.notify.incidents import open_incidents
from agents.runtime.notify.signals import Signal
from agents.runtime.persistence import DATABASE_ENV
from tests.support.postgres import fresh_database

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
PASSWORD = "hunter2-not-shown"


def status(home: Path, database: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env |= {"KUBECREW_HOME": str(home), DATABASE_ENV: database}
    return subprocess.run(
        [KUBECREW, "status", "--store", str(home / "store.sqlite"), *arguments],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def test_status_lists_the_incidents_booked_in_the_database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = fresh_database(request.config)
    with closing(open_incidents(environ={DATABASE_ENV: url})) as book:
        book.record(Signal("patrol", "Deployment", "shop", "web", "CrashLoopBackOff", "crashes"))

    shown = status(tmp_path / "home", url, "--json")

    assert shown.returncode == 0, shown.stderr
    [incident] = json.loads(shown.stdout)["incidents"]
    assert (incident["subject"], incident["state"]) == (
        "CrashLoopBackOff on Deployment web in shop",
        "open",
    )


def test_a_database_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when status runs
    url = f"postgresql://kubecrew:{PASSWORD}@127.0.0.1:{port}/kubecrew"

    failed = status(tmp_path / "home", url)

    assert failed.returncode == 1
    [line] = failed.stderr.strip().splitlines()
    assert f"127.0.0.1:{port}" in line and "Connection refused" in line
    assert PASSWORD not in failed.stderr + failed.stdout
