"""Which object a question's words mean, among those that exist; and which namespace.

`meant(words, known)` picks from the objects listed: an exact name beats a near miss (one slip
per five letters, a swapped pair counting once: "wbe" is "web"), which beats a word of a
hyphenated name ("checkout" for "checkout-api"); two adjacent words may be one name ("checkout
api"). Several matches are returned as they are: the answer asks which one rather than guess.

`namespace_meant` does the same for a namespace the words named ("shpo" is "shop"), so a typo
there does not turn a question into "nothing found".

Must not know: the cluster, the servers, any agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.runtime.questions.evidence import cite
from agents.runtime.spelling import close


@dataclass(frozen=True)
class Ref:
    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return cite(self.kind, self.name, self.namespace)


def meant(words: Sequence[str], known: Sequence[Ref]) -> list[Ref]:
    candidates = [*("-".join(words[i : i + 2]) for i in range(len(words) - 1)), *words]
    exact = [r for r in known if r.name in candidates]
    if exact:
        return exact
    near = [r for r in known if any(close(c, r.name) for c in candidates)]
    if near:
        return near
    return [r for r in known if any(c in r.name.split("-") for c in candidates)]


def listing(refs: Sequence[Ref], limit: int = 10) -> str:
    shown = ", ".join(str(r) for r in refs[:limit])
    return shown + (f" (and {len(refs) - limit} more)" if len(refs) > limit else "")
