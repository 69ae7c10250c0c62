"""What a person's words ask for: a question about the cluster, a change, or neither.

Both grammars may read the same words: "can the dev team restart api?" has a restart in it and
is a question; "enforce restricted pod security in shop" has a pod in it and is a change. The
shape of the words decides: text phrased as a question (a question word first, or a question
mark at the end) is the question when the question grammar reads it, otherwise the change is.
Every front door and agent asks here, so one request means one thing everywhere.

Must not know: any agent; it only puts the two grammars in order.
"""

from __future__ import annotations

import re

from agents.runtime import questions
from agents.runtime.changes import words

_ASKING = re.compile(
    r"^\W*(?:(?:hey|hi|ok|so|please|quick question)\W+)*(?:who|whom|what|what's|whats|which|"
    r"how|may|might|can|could|is|are|does|do|did|should|would|will|when|where|why|has|have)\b",
    re.IGNORECASE,
)


_POLITE = re.compile(r"\b(?:can|could|would|will)\s+(?:you|u|we)\b|^\W*please\b|\bplease\s+\w",
                     re.IGNORECASE)  # fmt: skip
_TELL = re.compile(r"\b(?:who|whom|what|which|how|where|when|whether|why|if|tell|show|list|explain|"
                   r"check|see|find|look)\b", re.IGNORECASE)  # fmt: skip
_RECEIVES = re.compile(r"\b(?:could|can|may)\s+\w+\s+(?:get|have|receive)\b", re.IGNORECASE)


def read(text: str, *, namespace: str | None = None) -> questions.Question | words.Asked | None:
    """The question or the change `text` asks; None when it asks neither of these."""
    question = questions.read(text, namespace=namespace)
    change = words.read(text)
    if change is None or question is None:
        return change or question
    if requests_politely(text) or (change.op == "grant" and _RECEIVES.search(text)):
        return change  # "could you give bob edit rights?": a request, phrased politely
    return question if asks(text) else change


def asks(text: str) -> bool:
    """Whether `text` is phrased as a question."""
    return bool(_ASKING.match(text)) or text.rstrip().endswith("?")


def wonders(text: str) -> bool:
    """Whether `text` asks whether, not for something to be done: "should web have a pdb?",
    "is web resilient?" wonder; "can you harden web?" and "harden web?" ask for work."""
    return bool(_ASKING.match(text)) and not requests_politely(text)


def requests_politely(text: str) -> bool:
    """Whether `text` asks the crew to do something ("can you ...", "could you please ...",
    "please ..."), and not to tell something ("can you tell me who ...")."""
    found = _POLITE.search(text)
    return found is not None and not _TELL.search(text[found.end() :])
