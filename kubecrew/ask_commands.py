"""`kubecrew ask "..."`: one question to the Dev Team agent, answered once, from the terminal.

The answer goes to stdout (or, with `--json`, the answer as data); progress (each graph step and
each tool call, by name only: arguments may hold what the person typed) goes to stderr, so
`kubecrew ask ... > answer.txt` keeps a clean answer. Exit status: 0 answered, 2 the agent asks
a clarifying question back (ambiguous or unknown name: the question is printed on stdout), 1 a
failure in one line (no cluster reachable, a model that cannot be built).

The brain is the deterministic planner unless `KUBECREW_MODEL=provider:model` is set; the
conversation's checkpoints and memory live under `$KUBECREW_HOME/agents/dev_team/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NoReturn

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.terminal import print_failure

CLARIFYING = 2


def ask(
    question: Annotated[str, typer.Argument(help="What you want to know, in your own words.")],
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="kubeconfig file [default: $KUBECONFIG, else ~/.kube/config]"),
    ] = None,
    context: Annotated[
        str | None, typer.Option(help="kubeconfig context [default: the current one]")
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="look for the workload in this namespace only"),
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option(help="Prometheus URL: adds golden signals (rate, errors, latency)"),
    ] = None,
    thread: Annotated[
        str | None, typer.Option(help="continue this conversation (its id) [default: a new one]")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
) -> None:
    """Ask the Dev Team agent about a workload; it reads, answers with evidence, changes nothing.

    **Examples**

    ```
    kubecrew ask "why is web failing?"
    kubecrew ask "what's wrong with checkout" -n shop --json
    ```
    """
    from agents.dev_team.conversation import conversation
    from agents.dev_team.graph import Outcome
    from agents.runtime.brain import planner_from_env
    from agents.runtime.errors import AgentError, ToolFailed
    from agents.runtime.toolbox import Servers
    from mcp_servers.kube.settings import KubeSettings
    from mcp_servers.metrics.settings import MetricsSettings

    progress = Console(stderr=True, highlight=False)
    servers = Servers(
        kube=KubeSettings(kubeconfig=kubeconfig, context=context),
        metrics=MetricsSettings(prometheus_url=prometheus, kubeconfig=kubeconfig, context=context)
        if prometheus
        else None,
    )

    def on_call(tool: str, _arguments: dict[str, Any]) -> None:
        progress.print(f"[dim]  tool {escape(tool)}[/]")

    def on_node(node: str) -> None:
        progress.print(f"[dim]{escape(node)} done[/]")

    async def go() -> Outcome:
        async with conversation(servers, planner_from_env(), thread=thread, on_call=on_call) as c:
            return await c.ask(question, namespace=namespace, on_node=on_node)

    try:
        outcome = anyio.run(go)
    except ToolFailed as exc:
        if exc.unreachable:
            _fail(f"no cluster reachable: {exc.reason}")
        _fail(exc.message)
    except AgentError as exc:
        _fail(exc.message)
    out = Console(highlight=False, soft_wrap=True)
    if as_json:
        data = {
            "thread": outcome.thread,
            "answer": outcome.answer,
            "clarifying": outcome.clarifying,
            "target": outcome.target,
            **outcome.report,
        }
        out.print_json(json.dumps(data, default=str))
    else:
        out.print(escape(outcome.answer))
    if outcome.clarifying:
        raise typer.Exit(CLARIFYING)


def _fail(message: str) -> NoReturn:
    print_failure(message)
    raise typer.Exit(1)
