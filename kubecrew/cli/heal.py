"""`kubecrew heal NAME [-n NS]`: run the Dev Team's remediation loop on one workload, or on one
object by its kind (`service/web`, `pvc/data`).

The loop learns, recommends, mutates (a GitOps pull request when `--repo` names the team's
manifests repository and it defines the object; else a gated kube write where policy allows)
and validates; the outcome, with its attempts and evidence, goes to stdout and progress to
stderr (`kubecrew.progress`: on a terminal a live line with the step and what it waits for,
"validating: 1/2 pods ready, soak 12 s of 30 s"; elsewhere one line per step and per change of
that); its servers, their options and the crew file are `kubecrew.crew`'s. Exit status: 0
healed (or nothing to heal), 3 left to a person: waiting for an approval request the run made
(its id, who may answer it, and the thread to resume are printed), or escalated, saying why
(never that a person must approve something: no request waits then); 1 a failure. Either way
the run is booked in the cluster's incident book (its state folder, `core.home`), so `kubecrew
status` shows it and a running `kubecrew watch --heal` resumes a waiting one once answered; a
healed one resolves its incident. Checkpoints and memory live in the same folder
(`agents/dev_team/`), so `--thread` resumes a run that stopped: after a crash, or
once the approval request has been answered. With `$KUBECREW_DATABASE_URL` the book, the
checkpoints and the memory are that PostgreSQL database's, shared with the crew's replicas; one
that does not answer is one line on stderr and exit status 1. A heal is booked from its start
(its thread is printed then), so one killed halfway shows in `kubecrew status` as interrupted,
and the next `kubecrew heal` of the same target continues it without --thread.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.crew import CrewOptions, crew_options, resolve
from kubecrew.progress import Steps
from kubecrew.terminal import print_failure

ESCALATED = 3


@crew_options
def heal(
    name: Annotated[
        str,
        typer.Argument(help="What to heal: web, shop/web, or by kind: service/web, pvc/data."),
    ],
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="its namespace")
    ] = None,
    thread: Annotated[str | None, typer.Option(help="resume this run (its id)")] = None,
    *,
    crew: CrewOptions,
) -> None:
    """Heal a workload: fix, validate, roll back and retry, or escalate with the evidence.

    **Examples**: `kubecrew heal web -n shop --repo ./shop-gitops`, `kubecrew heal service/web
    -n shop`
    """
    from agents.dev_team.heal import heal as run_heal
    from agents.dev_team.incidents import book
    from agents.runtime.brain import planner_from_env
    from agents.runtime.errors import AgentError
    from agents.runtime.loop.run import LoopResult
    from agents.runtime.notify.incidents import default_path
    from core.errors import ToolError

    try:
        servers = resolve(crew).servers("dev_team")
    except ToolError as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from exc
    steps = Steps(Console(stderr=True, highlight=False))

    async def go() -> LoopResult:
        return await run_heal(
            name,
            servers=servers,
            planner=planner_from_env(agent="dev_team"),
            namespace=namespace,
            thread=thread,
            on_node=steps.done,
            on_progress=steps.progress,
            on_call=steps.tool,
            book=default_path(),
            say=steps.line,
        )

    try:
        with steps:
            result = anyio.run(go)
        booked = book(result, default_path())
    except (AgentError, ToolError) as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from exc
    out = Console(highlight=False, soft_wrap=True)
    if not result.finished:
        out.print(escape(f"waiting for approval {result.waiting_for}: {result.asked}"))
        out.print(
            escape(f"resume with: kubecrew heal {name} --thread {result.thread} (same options)")
        )
    else:
        out.print(escape(result.summary or result.outcome))
    if booked:
        out.print(escape(booked))
    if not result.finished or result.outcome == "escalated":
        raise typer.Exit(ESCALATED)
