"""The eval report: `results.json` (every run, everything recorded) and `report.md` (pass@1,
pass^k with repeats, per domain, per intent kind, time to resolve, safeguard trips), written side
by side.

pass@1 is the share of runs that passed; pass^k is the share of scenarios whose k runs all
passed, the number that says whether the crew can be relied on rather than lucky. The table per
intent kind (a scenario's `intent`: `expose`, `question-inventory`) says which kinds of request
the crew carries out and which it does not; scenarios with no intent are not in it.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

Result = dict[str, Any]


def summary(results: list[Result]) -> dict[str, Any]:
    by_scenario: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_scenario[result["scenario"]].append(result)
    domains: dict[str, list[Result]] = defaultdict(list)
    intents: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        domains[result.get("domain", "unknown")].append(result)
        if result.get("intent"):
            intents[result["intent"]].append(result)
    passed = [r for r in results if r["status"] == "pass"]
    return {
        "runs": len(results),
        "pass_at_1": _share(len(passed), len(results)),
        "pass_hat_k": _share(
            sum(all(r["status"] == "pass" for r in runs) for runs in by_scenario.values()),
            len(by_scenario),
        ),
        "errors": sum(r["status"] == "error" for r in results),
        "catastrophic_trips": sum(_catastrophic(r) for r in results),
        "safeguard_trips": sum(_trips(r) for r in results),
        "median_sandbox_seconds": _median(results, "sandbox_seconds"),
        "median_wall_seconds": _median(results, "wall_seconds"),
        "domains": {
            name: {
                "runs": len(runs),
                "pass_at_1": _share(sum(r["status"] == "pass" for r in runs), len(runs)),
            }
            for name, runs in sorted(domains.items())
        },
        "intents": {
            name: {
                "scenarios": len({r["scenario"] for r in runs}),
                "runs": len(runs),
                "pass_at_1": _share(sum(r["status"] == "pass" for r in runs), len(runs)),
            }
            for name, runs in sorted(intents.items())
        },
    }


def write(results: list[Result], out: Path, *, mode: str, repeat: int) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    totals = summary(results)
    document = {"mode": mode, "repeat": repeat, "summary": totals, "runs": results}
    (out / "results.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    (out / "report.md").write_text(markdown(results, totals, mode=mode, repeat=repeat))
    return totals


def markdown(results: list[Result], totals: dict[str, Any], *, mode: str, repeat: int) -> str:
    lines = [
        f"# kubecrew evals ({mode} mode, {repeat} run{'s' if repeat != 1 else ''} each)",
        "",
        f"- pass@1: {percent(totals['pass_at_1'])} of {totals['runs']} runs"
        + (f"; pass^{repeat}: {percent(totals['pass_hat_k'])}" if repeat > 1 else ""),
        f"- errors: {totals['errors']}; safeguard trips: {totals['safeguard_trips']} "
        f"(catastrophic: {totals['catastrophic_trips']})",
        f"- median time to resolve: {totals['median_sandbox_seconds']} sandbox s, "
        f"{totals['median_wall_seconds']} wall s",
        "",
        "| domain | runs | pass@1 |",
        "|---|---|---|",
        *(
            f"| {name} | {d['runs']} | {percent(d['pass_at_1'])} |"
            for name, d in totals["domains"].items()
        ),
        "",
        *_intent_table(totals.get("intents", {})),
        "| scenario | domain | status | score | tool calls | mutations | blocked "
        "| sandbox s | wall s | failed checks |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(results, key=lambda r: (r.get("domain", ""), r["scenario"])):
        lines.append(_row(r))
    return "\n".join(lines) + "\n"


def _intent_table(intents: dict[str, dict[str, Any]]) -> list[str]:
    """The pass rate per kind of request, worst first (what to work on), then by name."""
    if not intents:
        return []
    ranked = sorted(intents.items(), key=lambda item: (item[1]["pass_at_1"], item[0]))
    return [
        f"Pass rate per intent kind ({len(intents)} kinds):",
        "",
        "| intent | scenarios | runs | pass@1 |",
        "|---|---|---|---|",
        *(
            f"| {name} | {kind['scenarios']} | {kind['runs']} | {percent(kind['pass_at_1'])} |"
            for name, kind in ranked
        ),
        "",
    ]


def _row(r: Result) -> str:
    if r["status"] == "error":
        error = str(r.get("error", "")).replace("|", "/").splitlines()[0][:120]
        return f"| {r['scenario']} | {r.get('domain', '?')} | error | | | | | | | {error} |"
    s, rec = r["score"], r["record"]
    failed = [c["name"] for c in [*s["objectives"], *s["safeguards"], *s["budget"]] if not c["ok"]]
    return (
        f"| {r['scenario']} | {r['domain']} | {r['status']} | {s['score']:.2f} "
        f"| {len(rec['calls'])} | {s['mutations']} | {s['blocked']} "
        f"| {rec['sandbox_seconds']:g} | {rec['wall_seconds']:g} | {', '.join(failed)} |"
    )


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _median(results: list[Result], key: str) -> float:
    values = [r["record"][key] for r in results if "record" in r]
    return round(statistics.median(values), 1) if values else 0.0


def _catastrophic(result: Result) -> bool:
    return bool(result.get("score", {}).get("catastrophic"))


def _trips(result: Result) -> int:
    return sum(not c["ok"] for c in result.get("score", {}).get("safeguards", []))


def percent(share: float) -> str:
    """A share as a person reads it: whole when it is exact, else to a tenth, so 262 of 263
    reads 99.6%, never a rounded 100%."""
    return f"{share:.0%}" if share in (0.0, 1.0) else f"{share:.1%}"
