"""Finding 12 (files): what holds Secret values or conversations is readable by its owner alone.

The sandbox's `--state` file keeps every object, Secrets' values included, and an agent's
checkpoints keep what its tools answered; both were created 0644. They are created 0600 (and
an existing file is narrowed to it when opened), with SQLite's -wal and -shm files alike.
"""

from __future__ import annotations

import stat
from pathlib import Path

import anyio

from agents.runtime.persistence import open_durable
from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_sandbox_state_file_is_its_owners_alone(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    state.touch(mode=0o644)  # left wide by an earlier version
    with Sandbox(Options(home=tmp_path / "home", state=state, rate=RATE)) as running:
        kubectl = Kubectl(running.kubeconfig, tmp_path / "cache")
        kubectl("create", "secret", "generic", "db", "--from-literal=password=hunter2")
    written = [p for p in tmp_path.iterdir() if p.name.startswith("state.sqlite")]
    assert state in written
    assert {p.name: mode(p) for p in written} == {p.name: 0o600 for p in written}


def test_an_agents_checkpoints_and_memory_are_its_owners_alone(tmp_path: Path) -> None:
    home = tmp_path / "agents" / "dev-team"

    async def go() -> None:
        async with open_durable(home) as durable:
            await durable.store.aput(("incidents",), "one", {"text": "a page"})

    anyio.run(go)
    files = sorted(p for p in home.iterdir() if p.name.endswith((".sqlite", "-wal", "-shm")))
    assert {"checkpoints.sqlite", "memory.sqlite"} <= {p.name for p in files}
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    assert mode(home) == 0o700
