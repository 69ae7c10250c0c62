"""Where an agent keeps what outlives one process: its checkpoints and its long-term memory.

Both are SQLite files in the agent's folder of the cluster's state (`core.home`:
`$KUBECREW_HOME/clusters/<cluster>/agents/<agent>/`, so one cluster's never answer for another):
`checkpoints.sqlite` (LangGraph's checkpointer: every step of every thread, so an interrupted run
resumes where it stopped and a node that finished is never run again) and `memory.sqlite`
(LangGraph's store interface: past incidents, see `memory`). The async variants of the SQLite
saver and store are used because the tools are MCP sessions, which are async.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.sqlite.aio import AsyncSqliteStore

from core.files import private
from core.home import state_home


def agent_home(agent: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The agent's folder in the state of the cluster it works on (`core.home`)."""
    return state_home(environ) / "agents" / agent


@dataclass(frozen=True)
class Durable:
    checkpointer: AsyncSqliteSaver
    store: AsyncSqliteStore


@asynccontextmanager
async def open_durable(home: Path) -> AsyncIterator[Durable]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name in ("checkpoints.sqlite", "memory.sqlite"):
        private(home / name)  # they hold what the tools answered, conversations and incidents
    async with (
        AsyncSqliteSaver.from_conn_string(str(home / "checkpoints.sqlite")) as checkpointer,
        AsyncSqliteStore.from_conn_string(str(home / "memory.sqlite")) as store,
    ):
        await checkpointer.setup()
        await store.setup()
        yield Durable(checkpointer, store)
