"""The `kubecrew` command line: the front door to the crew and its practice cluster.

This module only wires sub-apps together (each lives in its own module: `cli.sandbox` for
`kubecrew sandbox ...`, `cli.faults` for `kubecrew sandbox fault ...`) and keeps the promise
every command makes: a failure is one clear line on stderr, never a traceback. Commands report the
failures they expect themselves; anything else is caught here. `KUBECREW_DEBUG=1` lets the
traceback through for bug reports.

Its callback sets up what every command shares: `--log-format text|json` ($KUBECREW_LOG_FORMAT)
for the log lines of the long-running commands, traces when the standard OpenTelemetry variables
name a collector (`core.telemetry.tracing`), and the cluster whose state the command uses.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from typing import Annotated, Any

import typer

from core.home import STATE_ENV
from core.telemetry import FORMAT_ENV, LogFormat, logs, tracing
from kubecrew.channels.slack import command as slack_command
from kubecrew.cli import (
    approvals,
    ask,
    audit,
    chat,
    demo,
    evaluate,
    faults,
    heal,
    install,
    mcp,
    policy,
    proposals,
    run,
    sandbox,
    status,
    sync_prs,
    watch,
)
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.crew import FOLLOWING, follow_cluster
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


@app.callback()
def _follow_the_cluster(
    ctx: typer.Context,
    log_format: Annotated[
        LogFormat,
        typer.Option(
            "--log-format",
            envvar=FORMAT_ENV,
            case_sensitive=False,
            help="How the long-running commands (watch, run, slack) write their log on stderr: "
            "text for people, json for a log pipeline (one object per line, with the trace).",
        ),
    ] = LogFormat.text,
) -> None:
    # Telemetry first, for every command: the log format, and traces when
    # $OTEL_EXPORTER_OTLP_ENDPOINT names a collector (core.telemetry; metrics need no setup).
    logs.configure(log_format)
    tracing.configure(command=ctx.invoked_subcommand)
    # What the crew remembers (incidents, memory, proposals) is the cluster's: each command
    # reads and writes the state of the cluster its kubeconfig names (core.home), unless the
    # person chose one with $KUBECREW_STATE. Undone when the command ends, for in-process callers.
    if STATE_ENV in os.environ:
        return
    ctx.meta[FOLLOWING] = True
    ctx.call_on_close(lambda: os.environ.pop(STATE_ENV, None))
    follow_cluster()


sandbox.app.add_typer(faults.app)
app.add_typer(sandbox.app)
app.add_typer(mcp.app)
app.add_typer(policy.app)
app.add_typer(proposals.app)
approvals.app.command("sync-prs")(sync_prs.sync_prs)
app.add_typer(approvals.app)
app.add_typer(audit.app)
app.command(name="slack", help=slack_command.HELP)(slack_command.slack)
app.command(name="ask")(ask.ask)
app.command(name="heal")(heal.heal)
app.command(name="watch")(watch.watch)
app.command(name="run")(run.run)
app.command(name="chat")(chat.chat)
app.command(name="status")(status.status)
app.command(name="eval")(evaluate.eval_corpus)
app.command(name="demo")(demo.demo)
app.command(name="install")(install.install)


def _installed_version() -> str:
    try:
        return metadata.version("kubecrew")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


@app.command()
def version(output: OutputOption = Format.table) -> None:
    """Print the kubecrew version and the Kubernetes version its sandbox serves.

    **Examples**

    ```
    kubecrew version
    kubecrew version -o json
    ```
    """
    installed = _installed_version()
    said = f"kubecrew {installed} (sandbox serves Kubernetes v{KUBERNETES_VERSION})"
    emit(output, {"kubecrew": installed, "sandbox_kubernetes": KUBERNETES_VERSION}, [said])
