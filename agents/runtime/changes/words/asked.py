"""What a request asks, as the grammar reads it: the one type every reader returns.

Must not know: any agent, the cluster, how the words were read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.runtime.changes.words.sentence import Sentence


@dataclass(frozen=True)
class Asked:
    op: str  # the operation: one of `words.OPS`
    params: dict[str, Any] = field(default_factory=dict)
    subject: tuple[str, ...] = ()  # the words left: they may name the object
    kind: str = ""  # the kind the words said ("Deployment", "Pod", "Node"), if any
    problem: str = ""  # why the change is not precise enough to make (nothing changes)
    namespace: str | None = None  # "in shop", "-n shop", "shop/web"

    def replicas(self, current: object) -> int | None:
        """The replica count a scale asks for, given the live one: as said ("to 3"), by a
        delta ("add 2"), or by a factor ("double"); None when relative and `current` is not a
        count."""
        if "replicas" in self.params:
            return int(self.params["replicas"])
        if not isinstance(current, int):
            return None
        if "by" in self.params:
            return max(0, current + int(self.params["by"]))
        return max(1 if current else 0, round(current * float(self.params["factor"])))


Reader = Callable[[Sentence, int], Asked]  # (the sentence, where its verb is) -> what it asks
