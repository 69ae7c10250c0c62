"""`kubecrew ask "..."`: one question to the crew, answered once, from the terminal: by the agent
whose it is: the Cluster Operator for a node change ("cordon node-3", "drain node-2"), the
Platform for a namespace's frame ("create namespace team-a with a quota of 10 pods", "let carol
read logs in shop"), the Dev Team for everything else.

The answer goes to stdout (or, with `-o json|yaml`, the answer as data: `cli.answers`; the older
`--json` still works, hidden); progress (each graph step, each tool call by name only:
arguments may hold what the person typed, and what a long step waits for: `kubecrew.progress`)
goes to stderr, so `kubecrew ask ... > answer.txt` keeps a clean answer. Exit status: 0
answered (and a change asked for is in place), 2 the agent asks a clarifying question back
(ambiguous or unknown name: the question is printed on stdout), 3 a change that policy gives
to a person (the approval request is printed), 1 a failure (no cluster reachable, a model that
cannot be built, a change refused, failed, or undone because it did not hold: the answer says
which and why).

Flags for harnesses such as k8s-ai-bench: the prompt on stdin when no question is given,
`--quiet` (the answer alone, no progress), and `--skip-permissions`. A question that changes
the cluster ("fix web", "scale web to 3", "deploy ...", right-sizing, drift, probes) asks
"Proceed?" on a terminal, and a destructive one (scale to zero, a delete) is asked back by the
agent once more; with `--skip-permissions` it proceeds without asking, as far as policy
allows: every write still goes through the policy gate and the audit log, and one that policy
gives to a person is not taken (exit 3) - skipping permissions never skips an approval.

The agent's servers come from `kubecrew.crew` (the crew options and `$KUBECREW_HOME/crew.yaml`):
every write is policy-gated and audited, and with `--repo` drift, right-sizing, deploys and
resilience changes go by pull request to that GitOps repository. The brain is the
deterministic planner unless `KUBECREW_MODEL=provider:model` is set; the conversation's
checkpoints and memory live in the cluster's state folder (`core.home`), under `agents/`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import anyio
import typer
from rich.console import Console

from kubecrew.cli.answers import answer_record
from kubecrew.cli.options import fail
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.crew import CrewOptions, crew_options, resolve
from kubecrew.progress import Steps
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from agents.runtime.contract import Outcome

AGENT = "dev_team"
NOT_DONE = 1
CLARIFYING = 2
NEEDS_APPROVAL = 3
READ_ONLY_INTENTS = frozenset({"diagnose", "unsupported"})  # the rest may change the cluster


@crew_options
def ask(
    question: Annotated[
        str | None,
        typer.Argument(
            help="What you want to know, in your own words. [default: read from stdin]",
            show_default=False,
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="look for the workload in this namespace only"),
    ] = None,
    thread: Annotated[
        str | None, typer.Option(help="continue this conversation (its id) [default: a new one]")
    ] = None,
    output: OutputOption = Format.table,
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="as -o json")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="print only the answer: no progress on stderr")
    ] = False,
    skip_permissions: Annotated[
        bool,
        typer.Option(
            "--skip-permissions",
            help="let changes (fix, deploy, ...) proceed without asking; policy still gates "
            "each write, and one that needs a person's approval is refused (exit 3)",
        ),
    ] = False,
    *,
    crew: CrewOptions,
) -> None:
    """Ask the crew, in your own words: the Dev Team about a workload (why it fails, or to
    fix, deploy or right-size it), the Cluster Operator about nodes, capacity and upgrades,
    the Platform about org policy. A question reads and answers with evidence; a change
    waits for your yes (or --skip-permissions), and policy decides either way.

    **Examples**

    ```
    kubecrew ask "why is web failing?"
    kubecrew ask "what's wrong with checkout" -n shop -o json
    echo "why is web failing" | kubecrew ask --kubeconfig ./kubeconfig --quiet
    kubecrew ask "fix web" -n shop --skip-permissions
    kubecrew ask "has web drifted?" -n shop --repo ./shop-gitops --skip-permissions
    kubecrew ask "are we ready to upgrade to 1.38?"
    ```
    """
    from_stdin = question is None
    asked = _question(question)  # before the engine is imported: a missing one fails at once
    from agents.dev_team.intents import parse
    from agents.runtime import registry, requests
    from agents.runtime.brain import planner_from_env
    from agents.runtime.changes import words
    from agents.runtime.errors import AgentError, ToolFailed
    from core.errors import ToolError
    from kubecrew.channels.frontdoor import route

    read = requests.read(asked, namespace=namespace)  # a question never writes
    change = read if isinstance(read, words.Asked) else None
    agent = route(asked) or AGENT  # a change by what it changes, a question by its words
    found = registry.find(agent) or fail(f"the {agent} agent is not installed here")
    try:
        servers = resolve(crew).servers(agent)
    except ToolError as exc:
        fail(exc.message)
    steps = Steps(Console(stderr=True, highlight=False, quiet=quiet), tools=True)
    interactive = not from_stdin and sys.stdin.isatty()
    changes = change is not None or (
        agent == AGENT
        and read is None
        and parse(asked, namespace=namespace).kind not in READ_ONLY_INTENTS
    )
    if changes and not skip_permissions:
        _permit(asked, interactive=interactive)

    async def go() -> Outcome:
        async with found.open(
            servers, planner_from_env(agent=agent), thread=thread, on_call=steps.tool
        ) as c:
            outcome = await c.ask(asked, namespace=namespace, on_node=steps.done,
                                  on_progress=steps.progress)  # fmt: skip
            destructive = outcome.clarifying and outcome.data.get("confirm")
            if destructive and (
                skip_permissions or (interactive and _confirmed(outcome.answer, steps))
            ):
                outcome = await c.ask("yes", namespace=namespace, on_node=steps.done,
                                      on_progress=steps.progress)  # fmt: skip
            return outcome

    try:
        with steps:
            outcome = anyio.run(go)
    except ToolFailed as exc:
        if exc.unreachable:
            fail(f"no cluster reachable: {exc.reason}")
        fail(exc.message)
    except AgentError as exc:
        fail(exc.message)
    _show(outcome, output=Format.json if as_json else output)


def _show(outcome: Outcome, *, output: Format) -> None:
    """The answer on stdout (as data with `-o json|yaml`), and the exit status it calls for."""
    waits = not outcome.finished or outcome.data.get("outcome") == "escalated"
    said = outcome.answer or ("not done: the change waits for a person's approval" if waits else "")
    emit(output, answer_record(outcome), [said])
    if waits:
        print_failure(
            "this change is a person's call under policy, and --skip-permissions never skips "
            "that: an approver answers it (`kubecrew approvals list`, Slack, or the PR)"
        )
        raise typer.Exit(NEEDS_APPROVAL)
    if outcome.clarifying:
        raise typer.Exit(CLARIFYING)
    if outcome.data.get("outcome") in ("refused", "failed", "undone"):
        raise typer.Exit(NOT_DONE)  # the change was asked for and is not in place


def _question(given: str | None) -> str:
    """The question given, else the prompt piped on stdin (k8s-ai-bench's way)."""
    if given is not None and given.strip():
        return given.strip()
    if given is None and not sys.stdin.isatty():
        piped = sys.stdin.read().strip()
        if piped:
            return piped
    fail('no question: give one (kubecrew ask "why is web failing?") or pipe it on stdin')


def _confirmed(asked: str, steps: Steps) -> bool:
    """The agent's own question before a destructive change, answered on the terminal."""
    with steps.paused():
        return typer.confirm(f"{asked}\nGo on?", err=True, default=False)


def _permit(question: str, *, interactive: bool) -> None:
    """Ask before a change; with nobody to ask, refuse and say how to allow it."""
    if not interactive:
        fail(
            f"{question!r} would change the cluster and there is no terminal to ask on: "
            "rerun with --skip-permissions to let policy-allowed changes proceed"
        )
    if not typer.confirm(f"{question!r} may change the cluster. Proceed?", err=True):
        fail("not done: you said no")
