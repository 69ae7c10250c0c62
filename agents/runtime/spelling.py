"""How close two spellings are, the one measure every grammar of the crew uses for typos.

`slips(a, b)` counts edits (an adjacent swap counting once: "wbe" is one slip from "web");
`close(word, name)` allows one slip per five letters of a name, or a close spelling;
`namespace_meant(said, existing)` is the namespace a word names, itself or its one near miss
("stagng" is staging). Names are matched against what exists, never corrected blind.

Must not know: any agent, the cluster, any grammar.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def slips(a: str, b: str) -> int:
    """Edits between `a` and `b`, an adjacent swap counting once (optimal string alignment)."""
    if abs(len(a) - len(b)) > 2:
        return abs(len(a) - len(b))  # at least that many: not worth counting exactly
    rows = [list(range(len(b) + 1))] + [[i] + [0] * len(b) for i in range(1, len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


def close(word: str, name: str) -> bool:
    """One slip per five letters of `name`, or a close spelling."""
    if slips(word, name) <= max(1, len(name) // 5):
        return True
    return difflib.SequenceMatcher(None, word, name).ratio() >= 0.85


def namespace_meant(said: str, existing: Sequence[str]) -> str | None:
    """`said` when it exists, else the one namespace it is a near miss of, else None."""
    if said in existing:
        return said
    near = [n for n in existing if close(said, n)]
    return near[0] if len(near) == 1 else None
