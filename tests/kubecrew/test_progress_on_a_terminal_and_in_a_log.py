"""`kubecrew.progress.Steps`, the one drawing of the crew at work on stderr, on the two kinds of
stream a command meets: a terminal (Rich's own, forced, writing to a buffer) gets one live line
with the step, what it waits for and a bar for the soak, finished steps above it; a log gets a
plain line per step and per change, never wrapped, without escape codes or carriage returns; a
quiet console (`ask --quiet`) gets nothing. The front door's words for the same (`chat`) read
the same way."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from rich.console import Console

from agents.runtime.progress import Progress
from kubecrew.progress import Steps

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ROLLING = Progress("validating", "rolling out, 0/2 pods ready")
SOAKING = Progress("validating", "2/2 pods ready, soak", 12, 30, "s")
LONG = Progress("syncing", "Deployment a-workload-with-a-rather-long-name-indeed from git, " * 3)


def run(steps: Steps) -> None:
    """A heal, as the loop reports it."""
    with steps:
        steps.line("healing Deployment web on thread t-1")
        steps.tool("diagnose", {"name": "web"})
        steps.done("learn")
        steps.progress(LONG)
        steps.done("mutate")
        steps.progress(ROLLING)
        steps.tool("list_resources", {})  # a poll of the wait: not listed
        steps.progress(SOAKING)
        steps.done("validate")


def test_a_terminal_gets_one_live_line_with_the_soak_as_a_bar() -> None:
    buffer = StringIO()
    run(Steps(console(buffer, terminal=True), tools=True))

    assert "\x1b[" in buffer.getvalue()  # drawn in place: cursor movements and colour
    drawn = ANSI.sub("", buffer.getvalue())
    assert "learn done" in drawn and "validate done" in drawn
    assert "validating: rolling out, 0/2 pods ready" in drawn
    assert "validating: 2/2 pods ready, soak" in drawn and "12 s of 30 s" in drawn
    assert "━" in drawn  # the soak's bar
    assert "tool list_resources" not in drawn


def test_a_log_gets_a_plain_line_per_step_and_per_change() -> None:
    buffer = StringIO()
    run(Steps(console(buffer, terminal=False), tools=True))

    assert buffer.getvalue().splitlines() == [
        "healing Deployment web on thread t-1",
        "  tool diagnose",
        "learn done",
        f"  {LONG}",
        "mutate done",
        "  validating: rolling out, 0/2 pods ready",
        "  validating: 2/2 pods ready, soak 12 s of 30 s",
        "validate done",
    ]
    assert "\x1b" not in buffer.getvalue() and "\r" not in buffer.getvalue()


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "log"])
def test_a_quiet_console_shows_nothing(terminal: bool) -> None:
    buffer = StringIO()
    run(Steps(console(buffer, terminal=terminal, quiet=True), tools=True))

    assert buffer.getvalue() == ""


def test_the_front_door_s_words_read_the_same_as_the_agents_reports() -> None:
    said = ["understand done", "tool diagnose", "validating: 1/2 pods ready", "tool get_resource",
            "validating: 1/2 pods ready", "heal done"]  # fmt: skip
    log, screen = StringIO(), StringIO()
    for buffer, terminal in ((log, False), (screen, True)):
        with Steps(console(buffer, terminal=terminal)) as steps:
            for words in said:
                steps.said(words)

    assert log.getvalue().splitlines() == [
        "understand done",
        "  validating: 1/2 pods ready",
        "heal done",
    ]
    drawn = ANSI.sub("", screen.getvalue())
    assert "validating: 1/2 pods ready" in drawn and "heal done" in drawn


def console(buffer: StringIO, *, terminal: bool, quiet: bool = False) -> Console:
    return Console(
        file=buffer,
        force_terminal=terminal,
        force_interactive=terminal,
        width=80,
        quiet=quiet,
        highlight=False,
    )
