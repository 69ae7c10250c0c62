"""What a long step is doing while it waits, said as it happens: "validating: 1/2 pods ready",
"validating: 2/2 pods ready, soak 12 s of 30 s", "merging: PR #3".

A step that waits on the cluster (a validation's rollout and soak, a sync, a deleted object to
go) calls `report` with a `Progress` built from what it observed, never from what it expects.
`report` writes into the custom stream of the LangGraph run it is called in (the node's
`get_stream_writer()`); the loops that stream a graph (`loop.run.heal_run`,
`conversation.GraphConversation.run`) hand each `Progress` to their caller's `OnProgress`, next
to `on_node`. Called outside a graph run, or in a run nobody streams, it goes nowhere: progress
is a courtesy to whoever watches, never part of the result, and never checkpointed.

`Pace` keeps a polling wait from flooding its watcher: a change of what is waited for is
reported at once, a count that merely moves (seconds of soak) at most every few seconds.
How progress is drawn (a live line on a terminal, a line per change elsewhere, a Slack status)
is the front doors' business, not this module's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    step: str  # what runs, as a verb: "validating", "merging", "syncing", "undoing"
    detail: str  # what it waits for, as last observed: "1/2 pods ready, soak"
    done: float | None = None  # how far it counted toward `total`, when it counts
    total: float | None = None
    unit: str = ""  # what `done` and `total` count: "s"

    def __str__(self) -> str:
        said = f"{self.step}: {self.detail}"
        if self.total is None or self.done is None:
            return said
        unit = f" {self.unit}" if self.unit else ""
        return f"{said} {self.done:.0f}{unit} of {self.total:.0f}{unit}"


OnProgress = Callable[[Progress], None]


def report(progress: Progress) -> None:
    """Into the running graph's custom stream; nowhere outside a graph run."""
    # Imported here: a front door imports this module for `Progress` alone, and LangGraph's
    # config pulls in LangChain's tracers (0.4 s of every command's start-up).
    from langgraph.config import get_stream_writer

    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph node: nobody streams this run
        return
    writer(progress)


class Pace:
    """Reports what a polling wait observes: at once when what it waits for changed (its step or
    detail), and when only its count moved, at most once every `every` seconds of wall time."""

    def __init__(self, every: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.every, self.clock = every, clock
        self.last: Progress | None = None
        self.at = 0.0

    def __call__(self, progress: Progress) -> None:
        now, last = self.clock(), self.last
        changed = last is None or (progress.step, progress.detail) != (last.step, last.detail)
        if changed or (progress != last and now - self.at >= self.every):
            self.last, self.at = progress, now
            report(progress)
