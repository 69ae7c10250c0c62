"""The report gives the pass rate per intent kind (a scenario's `intent`): per kind, how many
scenarios and runs and the share that passed, in `results.json`'s summary and as a table in
`report.md`, worst first; runs of scenarios with no intent are in the totals but in no kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubecrew.evals.report import write


def run(scenario: str, status: str, intent: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"scenario": scenario, "domain": "networking", "status": status}
    if intent is not None:
        result["intent"] = intent
    if status == "error":
        return {**result, "error": "WorldFailed: the sandbox refused it"}
    checks: dict[str, list[Any]] = {"objectives": [], "safeguards": [], "budget": []}
    record = {"calls": [], "sandbox_seconds": 10.0, "wall_seconds": 1.0}
    return {**result, "score": {**checks, "score": 1.0, "mutations": 1, "blocked": 0},
            "record": record}  # fmt: skip


RESULTS = [
    run("change-expose-terse", "pass", "expose"),
    run("change-expose-chatty", "pass", "expose"),
    run("change-expose-typo", "fail", "expose"),
    run("change-ingress-terse", "pass", "ingress"),
    run("change-ingress-terse", "pass", "ingress"),  # a repeat: one scenario, two runs
    run("question-inventory-terse", "error", "question-inventory"),
    run("service-selector-nothing", "pass", None),
]


def test_the_summary_counts_scenarios_runs_and_passes_per_intent(tmp_path: Path) -> None:
    totals = write(RESULTS, tmp_path, mode="deterministic", repeat=1)
    assert totals["intents"] == {
        "expose": {"scenarios": 3, "runs": 3, "pass_at_1": 0.667},
        "ingress": {"scenarios": 1, "runs": 2, "pass_at_1": 1.0},
        "question-inventory": {"scenarios": 1, "runs": 1, "pass_at_1": 0.0},
    }
    assert totals["runs"] == 7  # the run with no intent still counts overall
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["summary"]["intents"] == totals["intents"]


def test_the_markdown_has_a_table_per_intent_kind_worst_first(tmp_path: Path) -> None:
    write(RESULTS, tmp_path, mode="deterministic", repeat=1)
    report = (tmp_path / "report.md").read_text()
    table = report[report.index("| intent |") :].split("\n\n")[0].splitlines()
    assert table == [
        "| intent | scenarios | runs | pass@1 |",
        "|---|---|---|---|",
        "| question-inventory | 1 | 1 | 0% |",
        "| expose | 3 | 3 | 66.7% |",
        "| ingress | 1 | 2 | 100% |",
    ]
    assert "Pass rate per intent kind (3 kinds):" in report


def test_a_corpus_with_no_intent_has_no_intent_table(tmp_path: Path) -> None:
    write([run("service-selector-nothing", "pass", None)], tmp_path, mode="llm", repeat=1)
    assert "| intent |" not in (tmp_path / "report.md").read_text()
