"""An agent's answer as data, for `kubecrew ask -o json|yaml`: the answer text, the evidence it
rests on, the changes made or proposed, and links to what a person follows up.

Each task reports in its own shape (a diagnosis's cause and fix, a change's outcome and steps, a
heal's attempts, a question's rows), and scripts read those as they are: the report's own keys
stay at the top level, as `--json` always printed them. Over them come the fields every answer
has, read from what the reports share: `evidence` (every `evidence` list in the report, each
item once; a line of text becomes `{"text": ...}`), `changes` (a heal's attempts, the one change
a report carried out, refused or left waiting, or a diagnosis's recommended fix, each as `what`,
`outcome`, `change`, `proposal`, `approval` and `pr`), and `links` (each proposal, approval
request and pull request named, with the command that shows it). A report that names none of
these has empty lists, never a guess. Knowing these shapes here is a stopgap: they belong in the
agent contract's `Outcome` (agents/runtime/contract.py), where the agents would fill them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.runtime.contract import Outcome

Json = dict[str, Any]
_SHOWN_BY = {"proposal": "kubecrew proposals show", "approval": "kubecrew approvals show"}


def answer_record(outcome: Outcome) -> Json:
    """The outcome of one request, as `ask -o json` prints it."""
    report = outcome.data
    waiting = None
    if outcome.waiting is not None:
        waiting = {"approval": outcome.waiting.request, "asked": outcome.waiting.asked}
    record: Json = {
        "thread": outcome.thread,
        "task": outcome.task,
        "answer": outcome.answer,
        "clarifying": outcome.clarifying,
        "finished": outcome.finished,
        "target": outcome.target or report.get("target"),
        "waiting": waiting,
        "evidence": evidence(report),
        "changes": changes(report, task=outcome.task),
    }
    record["links"] = links(record["changes"], waiting)
    return record | {key: value for key, value in report.items() if key not in record}


def evidence(report: Mapping[str, Any]) -> list[Json]:
    seen: dict[str, Json] = {}
    for item in _under(report, "evidence"):
        shown = item if isinstance(item, dict) else {"text": str(item)}
        seen.setdefault(json.dumps(shown, sort_keys=True, default=str), shown)
    return list(seen.values())


def changes(report: Mapping[str, Any], *, task: str) -> list[Json]:
    if report.get("attempts"):  # a heal: each fix it tried, and whether it held
        return [
            _change(a.get("fix", ""), a.get("verdict", ""), a.get("applied") or {})
            for a in report["attempts"]
        ]
    if report.get("outcome"):  # one change, carried out or not
        done = _change(task, report["outcome"], report)
        if isinstance(report.get("change"), dict):
            done |= {"what": _described(report["change"]) or task, "change": report["change"]}
        return [done]
    fix = report.get("fix")
    if isinstance(fix, dict) and fix.get("title"):  # a diagnosis: what it recommends, not done
        return [_change(fix["title"], "recommended", {})]
    return []


def links(made: list[Json], waiting: Json | None) -> list[Json]:
    named = [(kind, change[kind]) for change in made for kind in ("proposal", "approval", "pr")]
    if waiting is not None:
        named.append(("approval", waiting["approval"]))
    found: dict[tuple[str, object], Json] = {}
    for kind, value in named:
        if value:
            command = _SHOWN_BY.get(kind)  # a pull request is the forge's to show
            found.setdefault(
                (kind, value),
                {
                    "kind": "pull_request" if kind == "pr" else kind,
                    "id": value,
                    "command": f"{command} {value}" if command else None,
                },
            )
    return list(found.values())


def _change(what: str, outcome: str, ids: Mapping[str, Any]) -> Json:
    return {
        "what": what,
        "outcome": outcome,
        "change": None,
        "proposal": ids.get("proposal") or None,
        "approval": ids.get("approval") or None,
        "pr": ids.get("pr") or None,
    }


def _described(change: Json) -> str:
    """A typed change in words, as its own model says it; empty when it is not one."""
    from pydantic import ValidationError

    from agents.runtime.changes.ops import from_json

    try:
        return from_json(change).describe()
    except ValidationError:
        return ""


def _under(data: object, key: str) -> Iterator[object]:
    """Every item of every list held under `key`, anywhere in `data`, in order."""
    if isinstance(data, dict):
        for name, value in data.items():
            if name == key and isinstance(value, list):
                yield from value
            else:
                yield from _under(value, key)
    elif isinstance(data, list):
        for value in data:
            yield from _under(value, key)
