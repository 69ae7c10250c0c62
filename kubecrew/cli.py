"""The `kubecrew` command line: the front door to the crew and its practice cluster.

This module only wires sub-apps together (each lives in its own module: `sandbox_commands` for
`kubecrew sandbox ...`, `sandbox_faults` for `kubecrew sandbox fault ...`) and keeps the promise
every command makes: a failure is one clear line on stderr, never a traceback. Commands report the
failures they expect themselves; anything else is caught here. `KUBECREW_DEBUG=1` lets the
traceback through for bug reports.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from typing import Any

import typer
from rich.console import Console

from kubecrew import (
    approval_commands,
    ask_commands,
    audit_commands,
    chat_commands,
    demo_commands,
    eval_commands,
    heal_commands,
    install_commands,
    mcp_commands,
    policy_commands,
    pr_approval_commands,
    proposal_commands,
    run_commands,
    sandbox_commands,
    sandbox_faults,
    status_commands,
    watch_commands,
)
from kubecrew.slack import command as slack_command
from kubecrew.terminal import print_failure
from sandbox.schemas import KUBERNETES_VERSION


class _OneLineErrors(typer.Typer):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as exc:
            if os.environ.get("KUBECREW_DEBUG"):
                raise
            print_failure(
                str(exc) or type(exc).__name__, hint="KUBECREW_DEBUG=1 shows the traceback"
            )
            sys.exit(1)


app = _OneLineErrors(
    name="kubecrew",
    help="An operations crew for Kubernetes, with a practice cluster built in.\n\n"
    "Start with `kubecrew sandbox up --detach`, then use kubectl with the printed "
    "KUBECONFIG.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
)
sandbox_commands.app.add_typer(sandbox_faults.app)
app.add_typer(sandbox_commands.app)
app.add_typer(mcp_commands.app)
app.add_typer(policy_commands.app)
app.add_typer(proposal_commands.app)
approval_commands.app.command("sync-prs")(pr_approval_commands.sync_prs)
app.add_typer(approval_commands.app)
app.add_typer(audit_commands.app)
app.command(name="slack", help=slack_command.HELP)(slack_command.slack)
app.command(name="ask")(ask_commands.ask)
app.command(name="heal")(heal_commands.heal)
app.command(name="watch")(watch_commands.watch)
app.command(name="run")(run_commands.run)
app.command(name="chat")(chat_commands.chat)
app.command(name="status")(status_commands.status)
app.command(name="eval")(eval_commands.eval_corpus)
app.command(name="demo")(demo_commands.demo)
app.command(name="install")(install_commands.install)


def _installed_version() -> str:
    try:
        return metadata.version("kubecrew")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


@app.command()
def version() -> None:
    """Print the kubecrew version and the Kubernetes version its sandbox serves.

    **Example**

    ```
    kubecrew version
    ```
    """
    Console(highlight=False).print(
        f"kubecrew {_installed_version()} (sandbox serves Kubernetes v{KUBERNETES_VERSION})"
    )
