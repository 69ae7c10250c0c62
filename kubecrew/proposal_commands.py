"""`kubecrew proposals list | show ID`: what agents proposed to each other, and how it ended.

Reads the policy store (the SQLite file under `$KUBECREW_HOME`, else ~/.kubecrew, or `--store`)
through the `Store` interface and prints; it never decides anything, so reading a store other
processes are writing is safe. The engine is imported when a command runs, so `kubecrew --help`
stays quick.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from mcp_servers.policy.proposals import ProposalRecord, ProposalState
    from mcp_servers.policy.store.sqlite import SqliteStore

app = typer.Typer(
    name="proposals",
    help="Read the proposals agents negotiate in the policy store, with their transcripts.\n\n"
    "Example: `kubecrew proposals show p-1a2b3c4d`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


class StateChoice(StrEnum):
    open = "open"
    decided = "decided"
    escalated = "escalated"


_STATES: dict[StateChoice, ProposalState] = {
    StateChoice.open: "open",
    StateChoice.decided: "decided",
    StateChoice.escalated: "escalated",
}
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="The policy store file. [default: $KUBECREW_HOME/policy/store.sqlite, "
        "else ~/.kubecrew/policy/store.sqlite]",
        show_default=False,
    ),
]


def _fail(message: str) -> NoReturn:
    print_failure(message)
    raise typer.Exit(1)


def _out(text: str) -> None:
    Console(highlight=False, markup=False).print(text, soft_wrap=True)


def _store(given: Path | None) -> SqliteStore:
    from mcp_servers.common.errors import ToolError
    from mcp_servers.policy.store.sqlite import SqliteStore, default_path

    path = given or default_path()
    if not path.is_file():
        _fail(f"no policy store at {path}: nothing was proposed there yet; give --store FILE")
    try:
        return SqliteStore(path)
    except ToolError as exc:
        _fail(exc.message)


@app.command("list")
def list_proposals(
    store: StoreOption = None,
    state: Annotated[StateChoice | None, typer.Option(help="Only proposals in this state.")] = None,
) -> None:
    """One line per proposal, oldest first: id, state, proposer and action.

    **Example**

    ```
    kubecrew proposals list --state escalated
    ```
    """
    opened = _store(store)
    try:
        proposals = opened.list(state=None if state is None else _STATES[state])
    finally:
        opened.close()
    if not proposals:
        _out("no proposals" + (f" in state {state.value}" if state else ""))
    for proposal in proposals:
        _out(
            f"{proposal.id}  {proposal.state:<9}  {proposal.created:%Y-%m-%d %H:%M}  "
            f"{proposal.proposer}: {proposal.action.describe()}"
        )


@app.command()
def show(
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's id.")],
    store: StoreOption = None,
) -> None:
    """The proposal, its transcript in order, and its decision.

    **Example**

    ```
    kubecrew proposals show p-1a2b3c4d
    ```
    """
    from mcp_servers.common.errors import ToolError

    opened = _store(store)
    try:
        record = opened.get(proposal_id)
    except ToolError as exc:
        _fail(exc.message)
    finally:
        opened.close()
    for line in _lines(record):
        _out(line)


def _lines(record: ProposalRecord) -> list[str]:
    proposal = record.proposal
    lines = [
        f"proposal {proposal.id} ({proposal.state})",
        f"  by        {proposal.proposer}",
        f"  action    {proposal.action.describe()}",
        f"  rationale {proposal.rationale}",
    ]
    impact = proposal.impact
    if impact.savings_per_month is not None:
        lines.append(f"  savings   {impact.savings_per_month:g} per month, risk {impact.risk}")
    if proposal.deadline is not None:
        lines.append(f"  deadline  {proposal.deadline.isoformat()}")
    lines.append("transcript:")
    for event in record.transcript:
        first, *rest = event.describe().splitlines()
        lines.append(f"  {event.seq:>2}. {event.at:%Y-%m-%d %H:%M:%S} {event.actor}: {first}")
        lines += [f"      {line.strip()}" for line in rest]
    return lines
