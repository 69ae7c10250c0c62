"""`kubecrew proposals list | show ID`: what agents proposed to each other, and how it ended.

Reads the policy store (`--store`: a SQLite file or `kubernetes[:CONTEXT]`; by default
`$KUBECREW_POLICY_STORE`, else the file under `$KUBECREW_HOME`, else ~/.kubecrew) through the
`Store` interface and prints; it never decides anything, so reading a store other processes are
writing is safe. It names and opens the store as every command does (`options.StoreOption`,
`options.policy_store`). The engine is imported when a command runs, so `kubecrew --help` stays
quick.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from kubecrew.cli.options import StoreOption, policy_store, request_lines
from kubecrew.cli.output import Format, OutputOption, emit

if TYPE_CHECKING:
    from core.policy.proposals import ProposalRecord, ProposalState

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


@app.command("list")
def list_proposals(
    store: StoreOption = None,
    state: Annotated[StateChoice | None, typer.Option(help="Only proposals in this state.")] = None,
    output: OutputOption = Format.table,
) -> None:
    """One line per proposal, oldest first: id, state, proposer and action.

    **Examples**

    ```
    kubecrew proposals list --state escalated
    kubecrew proposals list -o json
    ```
    """
    with policy_store(store) as opened:
        proposals = opened.list(state=None if state is None else _STATES[state])
    lines = [
        f"{proposal.id}  {proposal.state:<9}  {proposal.created:%Y-%m-%d %H:%M}  "
        f"{proposal.proposer}: {proposal.action.describe()}"
        for proposal in proposals
    ]
    none = "no proposals" + (f" in state {state.value}" if state else "")
    emit(output, proposals, lines or [none])


@app.command()
def show(
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's id.")],
    store: StoreOption = None,
    output: OutputOption = Format.table,
) -> None:
    """The proposal, its transcript in order, its decision, and any approval request with the
    answers people gave.

    As data: the proposal's fields (as `proposals list` gives them), then `version`,
    `transcript`, `decision` and `approvals` (as `approvals show` gives each).

    **Examples**

    ```
    kubecrew proposals show p-1a2b3c4d
    kubecrew proposals show p-1a2b3c4d -o yaml
    ```
    """

    with policy_store(store) as opened:
        record = opened.get(proposal_id)
        requests = [r for r in opened.approvals() if r.proposal == proposal_id]
    data = record.proposal.model_dump(mode="json") | {
        "version": record.version,
        "transcript": record.transcript,
        "decision": record.decision,
        "approvals": requests,
    }
    lines = [*_lines(record), *(line for request in requests for line in request_lines(request))]
    emit(output, data, lines)


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
