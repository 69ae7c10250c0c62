"""`kubecrew eval`: run the scenario corpus on fresh sandboxes and write the report.

The report goes where `--out` says; without it, to `$KUBECREW_HOME/evals/last-run` (else
~/.kubecrew/...), never over the committed report in evals/report/ that CI compares against:
`make eval` asks for that one by name.

Exits 1 when any run failed, errored or tripped a catastrophic safeguard, so CI can gate on it;
the report says which and why. Heavy imports wait until the command runs, as the other commands
do, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.terminal import print_failure

SCENARIOS = Path(__file__).resolve().parents[2] / "evals" / "scenarios"


def last_run() -> Path:
    base = os.environ.get("KUBECREW_HOME")
    return (Path(base) if base else Path.home() / ".kubecrew") / "evals" / "last-run"


def eval_corpus(
    filter_: Annotated[
        str, typer.Option("--filter", help="Only scenarios whose name matches this glob.")
    ] = "*",
    mode: Annotated[
        str, typer.Option(help="deterministic (no model) or llm (the model KUBECREW_MODEL names).")
    ] = "deterministic",
    repeat: Annotated[int, typer.Option(min=1, help="Runs per scenario (pass^k).")] = 1,
    jobs: Annotated[int, typer.Option(min=1, help="Runs at a time.")] = 2,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where results.json and report.md go [default: $KUBECREW_HOME/evals/last-run]; "
            "`make eval` writes the committed evals/report.",
            show_default=False,
        ),
    ] = None,
    scenarios: Annotated[
        Path, typer.Option(help="The scenario directory.", show_default=False)
    ] = SCENARIOS,
) -> None:
    """Score the crew on the scenario corpus: objectives, safeguards, budgets.

    **Examples**: `kubecrew eval`, `kubecrew eval --filter 'image-*' --repeat 3`
    """
    from agents.runtime.brain import MODEL_ENV
    from kubecrew.evals.format import discover
    from kubecrew.evals.report import percent, write
    from kubecrew.evals.run import Mode, llm_ready, run_many

    if mode not in ("deterministic", "llm"):
        print_failure(f"--mode {mode!r}: use deterministic or llm")
        sys.exit(2)
    chosen: Mode = "llm" if mode == "llm" else "deterministic"
    if chosen == "llm" and not llm_ready():
        print_failure(
            f"--mode llm runs the model {MODEL_ENV} names, and it is not set: set it to "
            "provider:model (e.g. anthropic:claude-sonnet-4-5), or use --mode deterministic"
        )
        sys.exit(2)
    paths = discover(scenarios, filter_)
    if not paths:
        print_failure(f"no scenario in {scenarios} matches {filter_!r}; see its *.yaml names")
        sys.exit(2)
    console = Console(highlight=False)

    def progress(result: dict[str, Any]) -> None:
        status = result["status"]
        extra = f": {result['error']}" if status == "error" else ""
        console.print(escape(f"{status:<5} {result['scenario']} ({result['elapsed']:g} s){extra}"))

    with tempfile.TemporaryDirectory(prefix="kubecrew-eval-") as scratch:
        results = run_many(
            paths, mode=chosen, repeat=repeat, jobs=jobs, workdir=Path(scratch), on_result=progress
        )
    out = out or last_run()
    totals = write(results, out, mode=chosen, repeat=repeat)
    console.print(
        f"pass@1 {percent(totals['pass_at_1'])} of {totals['runs']} runs; "
        f"errors {totals['errors']}; catastrophic trips {totals['catastrophic_trips']}; "
        f"report in {escape(str(out))}"
    )
    if totals["catastrophic_trips"] or any(r["status"] != "pass" for r in results):
        sys.exit(1)
