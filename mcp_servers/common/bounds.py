"""Keeping tool output small enough for a model's context, and saying so when it is cut.

Every list a tool returns goes through `page`: at most `limit` items, and when there are more, a
note that says how many were left out and how to ask for the rest (`offset`, or a narrower
selector). Long text (logs) goes through `tail_text`: the last lines, within a character budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
TEXT_BUDGET = 16_000  # characters of log or text output per call


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    total: int
    offset: int
    note: str = ""  # empty when nothing was left out


def page(
    items: Sequence[T],
    *,
    limit: int = DEFAULT_LIMIT,
    offset: int = 0,
    what: str = "items",
    total: int | None = None,
) -> Page[T]:
    """Items `offset` to `offset + limit`. `total` is the full count when `items` holds only the
    first ones (a server-side limited list)."""
    limit = max(1, min(limit, MAX_LIMIT))
    offset = max(0, offset)
    chosen = list(items[offset : offset + limit])
    total = len(items) if total is None else total
    note = ""
    if offset + len(chosen) < total:
        rest = total - offset - len(chosen)
        note = (
            f"showing {what} {offset + 1}-{offset + len(chosen)} of {total}; {rest} more: "
            f"call again with offset={offset + len(chosen)}, or narrow the selector"
        )
    return Page(chosen, total, offset, note)


def tail_text(text: str, *, budget: int = TEXT_BUDGET) -> tuple[str, str]:
    """The end of `text` within `budget` characters (whole lines), and a note if cut."""
    if len(text) <= budget:
        return text, ""
    cut = text[-budget:]
    cut = cut[cut.find("\n") + 1 :] if "\n" in cut else cut
    dropped = text[: len(text) - len(cut)].count("\n")
    return cut, f"{dropped} earlier lines left out; ask for fewer with tail or since, or grep"
