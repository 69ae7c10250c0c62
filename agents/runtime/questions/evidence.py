"""Gathering evidence through the agent's read tools, and saying how sure the answer is.

`Evidence` wraps the toolbox for one answer. A tool the agent lacks or a call the server
refuses (a permission its identity lacks, a namespace outside its allow-list) is not an error
of the answer: it is noted in `unseen`, in the person's words, and the answer goes on with what
it could read and says what it could not. Lists are read in pages of `PAGE` up to `SCAN_CAP`
objects (`scan`); what lies beyond is counted, noted in `cut`, and never read, so a cluster of
thousands of pods costs a bounded number of calls and answers in a bounded number of lines.

`sureness` turns that record into the answer's last line: "Sure: ..." when everything asked was
read, "Partly sure: ..." naming what was not.

Must not know: any agent; the cluster only through the toolbox (read tools only: every tool
this module calls is one of the servers' read-only tools).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agents.runtime.errors import ToolFailed, ToolNotAllowed
from agents.runtime.questions.asked import Answered
from agents.runtime.toolbox import Toolbox

Json = dict[str, Any]
PAGE = 500
SCAN_CAP = 2_000


@dataclass(frozen=True)
class Scan:
    items: list[Json]
    total: int  # how many the server holds; more than len(items) when the scan was capped

    @property
    def complete(self) -> bool:
        return len(self.items) >= self.total


@dataclass
class Evidence:
    toolbox: Toolbox
    unseen: list[str] = field(default_factory=list)  # what could not be read, and why
    cut: list[str] = field(default_factory=list)  # what was read only in part
    context: str = ""  # the cluster (kubeconfig context) read; "" the server's default

    def has(self, tool: str) -> bool:
        return self.toolbox.has(tool)

    async def call(self, tool: str, what: str, /, **arguments: Any) -> Json | None:
        """The tool's answer, or None with `what` noted as unseen (and why). In a named cluster
        (`context`), every tool that takes a context is asked about that cluster."""
        if self.context and self.toolbox.takes(tool, "context"):
            arguments = {**arguments, "context": self.context}
        try:
            return await self.toolbox.call(tool, **arguments)
        except ToolNotAllowed:
            self.unseen.append(f"{what} (this agent has no `{tool}` tool)")
        except ToolFailed as exc:
            self.unseen.append(f"{what} ({_short(exc.reason)})")
        return None

    async def scan(
        self,
        kind: str,
        what: str,
        *,
        namespace: str | None,
        fields: list[str] | None = None,
        label_selector: str = "",
        cap: int = SCAN_CAP,
    ) -> Scan | None:
        """Objects of `kind` (summary rows, or `fields`), at most `cap`; None when unreadable."""
        items: list[Json] = []
        total = 0
        while True:
            arguments: Json = {"kind": kind, "limit": PAGE, "offset": len(items)}
            if namespace:
                arguments["namespace"] = namespace
            if fields:
                arguments.update(output="fields", fields=fields)
            if label_selector:
                arguments["label_selector"] = label_selector
            page = await self.call("list_resources", what, **arguments)
            if page is None:
                return None if not items else Scan(items, total)
            found = [i for i in page.get("items") or [] if isinstance(i, dict)]
            items += found
            total = int(page.get("total") or len(items))
            if not found or len(items) >= total or len(items) >= cap:
                break
        if len(items) < total:
            self.cut.append(f"{what}: read the first {len(items)} of {total}")
        return Scan(items, total)


def finish(
    evidence: Evidence,
    family: str,
    head: str,
    lines: list[str],
    basis: str,
    *,
    rows: list[Json],
    total: int,
    **facts: Any,
) -> Answered:
    """The answer: its head line, its evidence lines, how sure it is; and the rows as data."""
    text = "\n".join([head, *lines, sureness(evidence, basis)])
    data: Json = {
        "family": family,
        **facts,
        "rows": rows,
        "shown": len(rows),
        "total": total,
        "unseen": list(evidence.unseen),
        "cut": list(evidence.cut),
        "sure": not (evidence.unseen or evidence.cut),
    }
    return Answered(text, data)


def unanswered(evidence: Evidence, family: str, what: str, **facts: Any) -> Answered:
    """What could not be told, and why: the reads that failed, in the person's words."""
    missing = "; ".join(evidence.unseen) or "nothing came back"
    text = f"I could not tell {what}: I could not read {missing}."
    data: Json = {
        "family": family,
        **facts,
        "rows": [],
        "shown": 0,
        "total": 0,
        "unseen": list(evidence.unseen),
        "cut": [],
        "sure": False,
    }
    return Answered(text, data)


def sureness(evidence: Evidence, basis: str) -> str:
    """The answer's last line: how sure it is, on what it rests, and what it did not see."""
    missing = evidence.unseen + evidence.cut
    if not missing:
        return f"Sure: {basis}."
    return f"Partly sure: {basis}; not seen: {'; '.join(missing)}."


def more(shown: int, total: int, what: str) -> str:
    """ " (and 12 more pods)" when `total` exceeds what is shown."""
    return f" (and {total - shown} more {what})" if total > shown else ""


def where(namespace: str | None) -> str:
    return f"in {namespace}" if namespace else "in every namespace I can read"


def cite(kind: str, name: str, namespace: str = "") -> str:
    """An object as answers cite it: `Deployment shop/web`, `Node node-1`."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def moment(stamp: object) -> datetime | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _short(reason: str) -> str:
    first = reason.strip().splitlines()[0] if reason.strip() else "no answer"
    return first if len(first) <= 200 else first[:197] + "..."
