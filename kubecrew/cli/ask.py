"""`kubecrew ask "..."`: one question to the Dev Team agent, answered once, from the terminal.

The answer goes to stdout (or, with `--json`, the answer as data); progress (each graph step and
each tool call, by name only: arguments may hold what the person typed) goes to stderr, so
`kubecrew ask ... > answer.txt` keeps a clean answer. Exit status: 0 answered, 2 the agent asks
a clarifying question back (ambiguous or unknown name: the question is printed on stdout), 3 a
change that policy gives to a person (the approval request is printed), 1 a failure in one line
(no cluster reachable, a model that cannot be built, a change not permitted).

Flags for harnesses such as k8s-ai-bench: the prompt on stdin when no question is given,
`--quiet` (the answer alone, no progress), and `--skip-permissions`. A question that changes
the cluster ("fix web", "deploy ...", right-sizing, drift, probes) asks "Proceed?" on a
terminal; with `--skip-permissions` it proceeds without asking, as far as policy allows: every
write still goes through the policy gate and the audit log, and one that policy gives to a
person is not taken (exit 3) - skipping permissions never skips an approval.

The agent's servers come from `kubecrew.crew` (the crew options and `$KUBECREW_HOME/crew.yaml`):
every write is policy-gated and audited, and with `--repo` drift, right-sizing, deploys and
resilience changes go by pull request to that GitOps repository. The brain is the
deterministic planner unless `KUBECREW_MODEL=provider:model` is set; the conversation's
checkpoints and memory live under `$KUBECREW_HOME/agents/dev_team/`.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.cli.options import fail
from kubecrew.crew import CrewOptions, crew_options, resolve
from kubecrew.terminal import print_failure

AGENT = "dev_team"
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
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
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
    """Ask the Dev Team agent about a workload: why it fails (it reads and answers with
    evidence), or to fix, deploy or right-size it (after you say yes, or with
    --skip-permissions; policy decides either way).

    **Examples**

    ```
    kubecrew ask "why is web failing?"
    kubecrew ask "what's wrong with checkout" -n shop --json
    echo "why is web failing" | kubecrew ask --kubeconfig ./kubeconfig --quiet
    kubecrew ask "fix web" -n shop --skip-permissions
    kubecrew ask "has web drifted?" -n shop --repo ./shop-gitops --skip-permissions
    ```
    """
    from_stdin = question is None
    asked = _question(question)  # before the engine is imported: a missing one fails at once
    from agents.dev_team.conversation import conversation
    from agents.dev_team.intents import parse
    from agents.runtime.brain import planner_from_env
    from agents.runtime.contract import Outcome
    from agents.runtime.errors import AgentError, ToolFailed
    from core.errors import ToolError

    try:
        servers = resolve(crew).servers(AGENT)
    except ToolError as exc:
        fail(exc.message)
    progress = Console(stderr=True, highlight=False, quiet=quiet)
    changes = parse(asked, namespace=namespace).kind not in READ_ONLY_INTENTS
    if changes and not skip_permissions:
        _permit(asked, interactive=not from_stdin and sys.stdin.isatty())

    def on_call(tool: str, _arguments: dict[str, Any]) -> None:
        progress.print(f"[dim]  tool {escape(tool)}[/]")

    def on_node(node: str) -> None:
        progress.print(f"[dim]{escape(node)} done[/]")

    async def go() -> Outcome:
        async with conversation(servers, planner_from_env(), thread=thread, on_call=on_call) as c:
            return await c.ask(asked, namespace=namespace, on_node=on_node)

    try:
        outcome = anyio.run(go)
    except ToolFailed as exc:
        if exc.unreachable:
            fail(f"no cluster reachable: {exc.reason}")
        fail(exc.message)
    except AgentError as exc:
        fail(exc.message)
    out = Console(highlight=False, soft_wrap=True)
    if not outcome.finished or outcome.data.get("outcome") == "escalated":
        out.print(escape(outcome.answer or "not done: the change waits for a person's approval"))
        print_failure(
            "this change is a person's call under policy, and --skip-permissions never skips "
            "that: an approver answers it (`kubecrew approvals list`, Slack, or the PR)"
        )
        raise typer.Exit(NEEDS_APPROVAL)
    if as_json:
        data = {
            "thread": outcome.thread,
            "answer": outcome.answer,
            "clarifying": outcome.clarifying,
            "target": outcome.target,
            **outcome.data,
        }
        out.print_json(json.dumps(data, default=str))
    else:
        out.print(escape(outcome.answer))
    if outcome.clarifying:
        raise typer.Exit(CLARIFYING)


def _question(given: str | None) -> str:
    """The question given, else the prompt piped on stdin (k8s-ai-bench's way)."""
    if given is not None and given.strip():
        return given.strip()
    if given is None and not sys.stdin.isatty():
        piped = sys.stdin.read().strip()
        if piped:
            return piped
    fail('no question: give one (kubecrew ask "why is web failing?") or pipe it on stdin')


def _permit(question: str, *, interactive: bool) -> None:
    """Ask before a change; with nobody to ask, refuse and say how to allow it."""
    if not interactive:
        fail(
            f"{question!r} would change the cluster and there is no terminal to ask on: "
            "rerun with --skip-permissions to let policy-allowed changes proceed"
        )
    if not typer.confirm(f"{question!r} may change the cluster. Proceed?", err=True):
        fail("not done: you said no")
