"""`kubecrew proposals list | show ID`: what agents proposed to each other, and how it ended.

Reads the policy store (`--store`: a SQLite file or `kubernetes[:CONTEXT]`; by default
`$KUBECREW_POLICY_STORE`, else the file under `$KUBECREW_HOME`, else ~/.kubecrew) through the
`Store` interface and prints; it never decides anything, so reading a store other processes are
writing is safe. `StoreOption` and `opened_store` are shared with `kubecrew approvals` and
`kubecrew audit`, so every command names and opens a store alike. The engine is imported when a
command runs, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from core.policy.proposals import ApprovalRequest, ProposalRecord, ProposalState
    from core.policy.store.base import Store

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
    str | None,
    typer.Option(
        "--store",
        help="The policy store: a SQLite file, or `kubernetes[:CONTEXT]` for the kubecrew-system "
        "namespace of the kubeconfig's cluster. [default: $KUBECREW_POLICY_STORE, else "
        "$KUBECREW_HOME/policy/store.sqlite, else ~/.kubecrew/policy/store.sqlite]",
        show_default=False,
    ),
]


def _fail(message: str) -> NoReturn:
    print_failure(message)
    raise typer.Exit(1)


def _out(text: str) -> None:
    Console(highlight=False, markup=False).print(text, soft_wrap=True)


def opened_store(given: str | None) -> Store:
    """The store `--store` names; a missing SQLite file is an error here, not a new empty store."""
    from core.errors import ToolError
    from core.policy.store import KUBERNETES, SPEC_ENV, open_store
    from core.policy.store.sqlite import default_path

    spec = given or os.environ.get(SPEC_ENV)
    if spec is None or not (spec == KUBERNETES or spec.startswith(KUBERNETES + ":")):
        path = Path(spec).expanduser() if spec else default_path()
        if not path.is_file():
            _fail(f"no policy store at {path}: nothing was proposed there yet; give --store FILE")
    try:
        return open_store(spec)
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
    opened = opened_store(store)
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
    """The proposal, its transcript in order, its decision, and any approval request with the
    answers people gave.

    **Example**

    ```
    kubecrew proposals show p-1a2b3c4d
    ```
    """
    from core.errors import ToolError

    opened = opened_store(store)
    try:
        record = opened.get(proposal_id)
        requests = [r for r in opened.approvals() if r.proposal == proposal_id]
    except ToolError as exc:
        _fail(exc.message)
    finally:
        opened.close()
    for line in _lines(record):
        _out(line)
    for request in requests:
        for line in request_lines(request):
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


def request_lines(request: ApprovalRequest) -> list[str]:
    """An approval request in words: what, who may answer, until when, and each answer."""
    lines = [
        f"approval {request.id} ({request.state}) for proposal {request.proposal}",
        f"  action    {request.action.describe()}",
        f"  approvers {request.approvers.describe()} ({request.min_approvals} needed)",
        f"  requested {request.requested_at.isoformat()}, expires {request.expires_at.isoformat()}",
    ]
    lines += [f"  why       {reason}" for reason in request.reasons]
    for given in request.answers:
        verb = "granted" if given.verdict == "grant" else "denied"
        said = f"  {given.at:%Y-%m-%d %H:%M:%S} {given.by} {verb} via {given.via}"
        lines.append(said + (f": {given.reason}" if given.reason else ""))
    if request.claimed_by is not None:
        lines.append(f"  taken up by {request.claimed_by}")
    return lines
