"""`kubecrew approvals list | show | grant | deny | wait`: a person's side of an escalation.

An escalated proposal waits for an `ApprovalRequest` in the policy store; any channel may answer
it, and this is the terminal's. Authorisation (is this person an approver, has she answered
already, has the request expired) is `core.policy.approvals.answer`'s, so the CLI, Slack
and MCP refuse alike; this module only says who is answering (`options.person`, shared with
`kubecrew chat`). With the SQLite store that is whoever the local user says (`--as`,
`--group`): the file is theirs, so trusting them costs nothing. With `--store kubernetes` it is
the API server's answer about the kubeconfig's credentials, which the user cannot choose. The
engine is imported when a command runs, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from kubecrew.cli.options import (
    AsOption,
    GroupOption,
    StoreOption,
    out,
    person,
    policy_store,
    request_lines,
)
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from core.policy.proposals import AnswerVerdict, ApprovalState

TIMED_OUT = 2

app = typer.Typer(
    name="approvals",
    help="List, grant, deny and wait for the approval requests of escalated proposals.\n\n"
    "Who you are: with the SQLite store, the local user is trusted as whoever `--as` and "
    "`--group` say (the file is yours anyway); with `--store kubernetes` your identity is the "
    "API server's answer for your kubeconfig credentials, and `--as` must agree with it.\n\n"
    "Example: `kubecrew approvals grant a-1a2b3c4d --as alice --group shop-admins`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


class StateChoice(StrEnum):
    pending = "pending"
    granted = "granted"
    denied = "denied"
    expired = "expired"


_STATES: dict[StateChoice, ApprovalState] = {
    StateChoice.pending: "pending",
    StateChoice.granted: "granted",
    StateChoice.denied: "denied",
    StateChoice.expired: "expired",
}
IdArgument = Annotated[str, typer.Argument(metavar="ID", help="The approval request's id.")]
ReasonOption = Annotated[str, typer.Option(help="Why, for the transcript and the audit log.")]


@app.command("list")
def list_requests(
    store: StoreOption = None,
    state: Annotated[StateChoice | None, typer.Option(help="Only requests in this state.")] = None,
    output: OutputOption = Format.table,
) -> None:
    """One line per approval request, oldest first: id, state, expiry, approvers and action.

    **Examples**

    ```
    kubecrew approvals list --state pending
    kubecrew approvals list -o json
    ```
    """
    with policy_store(store) as opened:
        requests = opened.approvals(state=None if state is None else _STATES[state])
    lines = [
        f"{request.id}  {request.state:<7}  until {request.expires_at:%Y-%m-%d %H:%M}  "
        f"{request.approvers.describe()}: {request.action.describe()} (proposal {request.proposal})"
        for request in requests
    ]
    none = "no approval requests" + (f" in state {state.value}" if state else "")
    emit(output, requests, lines or [none])


@app.command()
def show(id_: IdArgument, store: StoreOption = None, output: OutputOption = Format.table) -> None:
    """The request: its action, approvers, expiry, why a person decides, and every answer.

    **Examples**

    ```
    kubecrew approvals show a-1a2b3c4d
    kubecrew approvals show a-1a2b3c4d -o yaml
    ```
    """

    with policy_store(store) as opened:
        request = opened.approval(id_)
    emit(output, request, request_lines(request))


def _answer_with(
    id_: str,
    verdict: AnswerVerdict,
    reason: str,
    store: str | None,
    name: str | None,
    groups: list[str] | None,
) -> None:
    from core.errors import PermissionDenied
    from core.policy import approvals

    with policy_store(store) as opened:
        who = person(opened, name, groups)
        now = datetime.now(UTC)
        try:
            request = approvals.answer(opened, id_, who, verdict, via="cli", now=now, reason=reason)
        except PermissionDenied as exc:
            if name is not None or groups:
                raise
            # Nobody said who they are: say how to, with the approvers the request names.
            raise PermissionDenied(
                f"{exc.message}. You answered as the local user; say who you are with "
                f"--as NAME --group GROUP (kubecrew approvals {verdict} {id_} --as alice "
                "--group shop-admins)"
            ) from exc
        decision = opened.get(request.proposal).decision if request.ended else None
    out(f"{id_}: {verdict} by {who} recorded; the request is {request.state}")
    if decision is not None:
        out(f"proposal {request.proposal}: {decision.describe()}")


@app.command()
def grant(
    id_: IdArgument,
    reason: ReasonOption = "",
    as_: AsOption = None,
    group: GroupOption = None,
    store: StoreOption = None,
) -> None:
    """Grant the request: once enough approvers grant, its proposal is approved.

    **Example**

    ```
    kubecrew approvals grant a-1a2b3c4d --reason "looks fine" --as alice --group shop-admins
    ```
    """
    _answer_with(id_, "grant", reason, store, as_, group)


@app.command()
def deny(
    id_: IdArgument,
    reason: ReasonOption = "",
    as_: AsOption = None,
    group: GroupOption = None,
    store: StoreOption = None,
) -> None:
    """Deny the request: its proposal is rejected at once.

    **Example**

    ```
    kubecrew approvals deny a-1a2b3c4d --reason "not during the sale" --as alice
    ```
    """
    _answer_with(id_, "deny", reason, store, as_, group)


@app.command()
def wait(
    id_: IdArgument,
    timeout: Annotated[float, typer.Option(help="Seconds to wait before giving up.")] = 300.0,
    store: StoreOption = None,
) -> None:
    """Block until the request is answered or expires, print the answer, and take it up.

    Exit status: 0 granted (and its proposal approved), 1 denied, expired or superseded, 2 still
    pending at the timeout. The answer is handed out once: a second waiter is refused.

    **Example**

    ```
    kubecrew approvals wait a-1a2b3c4d --timeout 600 && kubectl scale ...
    ```
    """
    from core.policy import approvals

    waiter = f"kubecrew approvals wait on {socket.gethostname()} (pid {os.getpid()})"
    with policy_store(store) as opened:
        request = approvals.wait(opened, id_, waiter=waiter, timeout=timeout)
        decision = None if request is None else opened.get(request.proposal).decision
    if request is None:
        print_failure(f"{id_} is still pending after {timeout:g}s; wait again or ask an approver")
        raise typer.Exit(TIMED_OUT)
    for line in request_lines(request):
        out(line)
    if decision is not None:
        out(f"proposal {request.proposal}: {decision.describe()}")
    if decision is None or decision.outcome != "approved":
        raise typer.Exit(1)
