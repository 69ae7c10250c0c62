"""How a command shows the crew at work on stderr, while stdout waits for the answer: drawn in
one place for `kubecrew heal`, `ask` and `chat`.

What there is to show comes from the agents: each step as it finishes ("learn done"), each tool
call by name, and what a long step waits for as it last observed it (`Progress`: "validating:
1/2 pods ready", "validating: 2/2 pods ready, soak 12 s of 30 s", "merging: PR #3"). `Steps`
draws them two ways, chosen by the console (Rich: interactive means a terminal that is not dumb;
`TTY_INTERACTIVE` overrides):

- on a terminal, one live line updated in place: a spinner, the step and what it waits for,
  with a bar when it counts toward a total (the soak); finished steps and said lines print
  above it, and the live line goes when the work ends;
- anywhere else (a pipe, a file, a CI log), one plain line per step and per change of what a
  step waits for, as the agents paced them: no carriage returns, no colour, no escape codes,
  so the log reads and greps.

Once a step reports what it waits for, its tool calls are the polls behind that report, so they
are not listed until the next step finishes. `chat` gets the same from the front door in words
("learn done", "tool diagnose", "validating: ..."), which `Steps.said` reads back. A quiet
console (`kubecrew ask --quiet`) shows nothing at all. Deciding what to report, and how often,
is the agents' (`agents.runtime.progress`); this module only draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from agents.runtime.progress import Progress

WORKING = "working…"


class Steps:
    """The crew's progress on `console` (stderr); `tools`: list tool calls as lines when not on
    a terminal (a terminal always shows them on its live line)."""

    def __init__(self, console: Console, *, tools: bool = False) -> None:
        self.console = console
        self.tools = tools
        self.live = console.is_interactive and not console.quiet
        self._shown: Progress | str = WORKING
        self._waiting = False  # a step reports what it waits for: its tool calls are its polls
        self._last = ""  # the last plain line, so a repeated report is not printed twice
        self._spinner = Spinner("dots", style="cyan")
        self._live: Live | None = None

    def __enter__(self) -> Steps:
        if self.live:
            self._live = Live(
                console=self.console,
                get_renderable=self._render,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,  # the answer's stream: never drawn over, never moved
            )
            self._live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The live line taken down while the terminal asks a person something."""
        live = self._live
        if live is not None:
            live.stop()
        try:
            yield
        finally:
            if live is not None:
                live.start()

    def line(self, text: str, *, style: str = "") -> None:
        """A line that stays: above the live line on a terminal, as it is elsewhere."""
        self._print(Text(text, style=style))

    def done(self, step: str) -> None:
        self._waiting = False
        self._shown = WORKING
        if self._live is not None:
            self._live.refresh()  # what the step waited for goes with it
        self.line(f"{step} done", style="dim")

    def tool(self, name: str, _arguments: dict[str, Any] | None = None) -> None:
        """A tool call, by name only: its arguments may hold what the person typed."""
        if self._waiting:
            return
        if self.live:
            self._shown = f"{WORKING} tool {name}"
        elif self.tools:
            self.line(f"  tool {name}", style="dim")

    def progress(self, progress: Progress | str) -> None:
        """What a long step waits for (a `Progress`, or the words of one)."""
        self._waiting = True
        if not self.live:
            if str(progress) != self._last:
                self.line(f"  {progress}")
            return
        self._shown = progress
        if self._live is not None:
            self._live.refresh()  # what is waited for shows at once, not at the next tick

    def said(self, words: str) -> None:
        """The front door's progress, in its three forms of words: "NODE done", "tool NAME", or
        what a long step waits for ("validating: 1/2 pods ready")."""
        node = words.removesuffix(" done")
        if words.startswith("tool "):
            self.tool(words.removeprefix("tool "))
        elif node != words and " " not in node:
            self.done(node)
        else:
            self.progress(words)

    def _print(self, text: Text) -> None:
        if self.console.quiet:
            return
        self._last = text.plain.strip()
        self.console.print(text, soft_wrap=not self.live, highlight=False)

    def _render(self) -> RenderableType:
        shown = self._shown
        if isinstance(shown, str):
            self._spinner.update(text=Text(shown))
            return self._spinner
        said = Text.assemble((shown.step, "bold"), f": {shown.detail}")
        self._spinner.update(text=said)
        if shown.total is None or shown.done is None:
            return self._spinner
        unit = f" {shown.unit}" if shown.unit else ""
        row = Table.grid(padding=(0, 1))
        row.add_row(
            self._spinner,
            ProgressBar(total=shown.total, completed=min(shown.done, shown.total), width=24),
            Text(f"{shown.done:.0f}{unit} of {shown.total:.0f}{unit}"),
        )
        return row
