"""What a polling wait reports reaches whoever streams the graph's custom stream, paced
(`agents.runtime.progress`): a change of what it waits for at once, a count that only moves at
most every `every` seconds, a repeat never; outside a graph run a report goes nowhere."""

from __future__ import annotations

from typing import Any, TypedDict

import anyio
from langgraph.graph import END, START, StateGraph

from agents.runtime.progress import Pace, Progress, report


class State(TypedDict, total=False):
    seen: int


def soak(done: float) -> Progress:
    return Progress("validating", "2/2 pods ready, soak", done, 30, "s")


POLLS = [  # (wall seconds, what the poll observed)
    (0.0, Progress("validating", "rolling out, 0/2 pods ready")),
    (0.5, Progress("validating", "rolling out, 0/2 pods ready")),
    (1.0, Progress("validating", "rolling out, 1/2 pods ready")),
    (1.5, soak(0)),
    (2.0, soak(5)),
    (4.0, soak(20)),
    (7.0, soak(28)),
    (7.5, Progress("validating", "diagnose still finds ImagePullBackOff")),
]


def test_changes_are_reported_at_once_and_a_moving_count_every_few_seconds() -> None:
    async def poll(state: State) -> dict[str, Any]:
        now = [0.0]
        pace = Pace(5.0, clock=lambda: now[0])
        for at, seen in POLLS:
            now[0] = at
            pace(seen)
        return {"seen": len(POLLS)}

    graph = StateGraph(State)
    graph.add_node("validate", poll)
    graph.add_edge(START, "validate")
    graph.add_edge("validate", END)
    compiled = graph.compile()

    async def streamed() -> list[Any]:
        return [chunk async for chunk in compiled.astream({}, stream_mode="custom")]

    assert [str(p) for p in anyio.run(streamed)] == [
        "validating: rolling out, 0/2 pods ready",
        "validating: rolling out, 1/2 pods ready",
        "validating: 2/2 pods ready, soak 0 s of 30 s",
        "validating: 2/2 pods ready, soak 28 s of 30 s",
        "validating: diagnose still finds ImagePullBackOff",
    ]


def test_a_report_outside_a_graph_run_goes_nowhere() -> None:
    report(Progress("merging", "PR #1"))  # nobody streams: no error, nothing kept
