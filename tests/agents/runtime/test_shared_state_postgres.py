"""With `$KUBECREW_DATABASE_URL`, an agent's checkpoints and memory are in that PostgreSQL
database: a thread stopped under one `open_durable` resumes under another (as in a second
replica) without running again what it had run, and remembers what the first stored; two agents'
threads stay apart as their files do. A database that does not answer, or refuses the
credentials, is one line naming its host and port, never the password."""

from __future__ import annotations

import operator
import socket
from pathlib import Path
from typing import Annotated, Any, TypedDict
from urllib.parse import urlsplit

import anyio
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.runtime.persistence import DATABASE_ENV, Durable, open_durable
from core.errors import Unavailable
from tests.support.postgres import fresh_database

THREAD: RunnableConfig = {"configurable": {"thread_id": "incident-web"}}
PASSWORD = "hunter2-not-shown"


class Steps(TypedDict):
    ran: Annotated[list[str], operator.add]


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    return fresh_database(request.config)


def two_steps(durable: Durable) -> CompiledStateGraph[Any, Any, Any, Any]:
    """learn, then (after a stop, as for an approval) mutate."""
    builder = StateGraph(Steps)
    builder.add_node("learn", lambda _: {"ran": ["learn"]})
    builder.add_node("mutate", lambda _: {"ran": ["mutate"]})
    builder.add_edge(START, "learn")
    builder.add_edge("learn", "mutate")
    builder.add_edge("mutate", END)
    return builder.compile(
        checkpointer=durable.checkpointer, store=durable.store, interrupt_before=["mutate"]
    )


def test_a_thread_stopped_in_one_replica_resumes_in_another(url: str, tmp_path: Path) -> None:
    shared = {DATABASE_ENV: url}
    home = tmp_path / "agents" / "dev_team"

    async def first() -> list[str]:
        async with open_durable(home, shared) as durable:
            await durable.store.aput(("dev_team", "incidents"), "web", {"code": "CrashLoop"})
            stopped = await two_steps(durable).ainvoke({"ran": []}, THREAD)
            return list(stopped["ran"])

    async def second() -> tuple[list[str], Any]:
        async with open_durable(home, shared) as durable:
            resumed = await two_steps(durable).ainvoke(None, THREAD)
            remembered = await durable.store.aget(("dev_team", "incidents"), "web")
            return list(resumed["ran"]), remembered

    assert anyio.run(first) == ["learn"]
    ran, remembered = anyio.run(second)

    assert ran == ["learn", "mutate"]  # learn ran once, in the first; the second carried on
    assert remembered is not None and remembered.value == {"code": "CrashLoop"}
    assert not home.exists()  # no SQLite file was made beside the database


def test_two_agents_threads_stay_apart_in_one_database(url: str, tmp_path: Path) -> None:
    shared = {DATABASE_ENV: url}

    async def stop_in(agent: str) -> None:
        async with open_durable(tmp_path / "agents" / agent, shared) as durable:
            await two_steps(durable).ainvoke({"ran": []}, THREAD)

    async def state_in(agent: str) -> dict[str, Any]:
        async with open_durable(tmp_path / "agents" / agent, shared) as durable:
            return dict((await two_steps(durable).aget_state(THREAD)).values)

    anyio.run(stop_in, "dev_team")

    assert anyio.run(state_in, "platform") == {}
    assert anyio.run(state_in, "dev_team") == {"ran": ["learn"]}


def test_a_database_that_does_not_answer_is_one_line_without_the_password(
    tmp_path: Path,
) -> None:
    port = closed_port()
    shared = {DATABASE_ENV: f"postgresql://kubecrew:{PASSWORD}@127.0.0.1:{port}/kubecrew"}

    async def go() -> None:
        async with open_durable(tmp_path / "agents" / "dev_team", shared):
            pass

    with pytest.raises(Unavailable) as refused:
        anyio.run(go)

    said = refused.value.message
    assert f"127.0.0.1:{port}" in said and "Connection refused" in said
    assert "\n" not in said and PASSWORD not in said and DATABASE_ENV in said


def test_credentials_the_database_refuses_are_one_line_without_the_password(
    url: str, tmp_path: Path
) -> None:
    stranger = url.replace("postgresql://postgres@", f"postgresql://nobody:{PASSWORD}@")

    async def go() -> None:
        async with open_durable(tmp_path / "agents" / "dev_team", {DATABASE_ENV: stranger}):
            pass

    with pytest.raises(Unavailable) as refused:
        anyio.run(go)

    said = refused.value.message
    assert 'role "nobody" does not exist' in said and f"127.0.0.1:{urlsplit(url).port}" in said
    assert "\n" not in said and PASSWORD not in said


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
