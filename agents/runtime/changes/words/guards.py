"""Readers of what guards a workload's capacity: a disruption budget and an autoscaler.

"add a PDB to web with min available 2", "make sure at least 2 web pods stay up during
maintenance", "web may lose at most one pod at a time", "keep 50% of api available";
"autoscale web between 2 and 10 at 70% cpu", "kubectl autoscale deploy web --min=2 --max=5
--cpu-percent=80", "create an HPA for api targeting 50% CPU with min=1 and max=3 replicas",
"scale web automatically up to 8 pods when memory is over 75%". Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence
from agents.runtime.changes.words.vocabulary import AUTOSCALE_WORDS, CPU_WORDS, MEMORY_WORDS
from agents.runtime.changes.words.workloads import LINKS

_COUNT = r"(\d+%?|one|two|three|four|five|six|seven|eight|nine|ten|a|an|half)"
_BUDGET_WORDS = frozenset(
    {
        "pdb",
        "pdbs",
        "poddisruptionbudget",
        "disruption",
        "disruptions",
        "budget",
        "min",
        "minimum",
        "max",
        "maximum",
        "available",
        "unavailable",
        "minavailable",
        "maxunavailable",
        "least",
        "most",
        "keep",
        "stay",
        "stays",
        "up",
        "running",
        "during",
        "maintenance",
        "drains",
        "drain",
        "upgrades",
        "upgrade",
        "lose",
        "down",
        "at",
        "time",
        "once",
        "protect",
        "allowing",
        "allow",
        "with",
        "make",
        "sure",
        "pods",
        "pod",
        "replicas",
        "instances",
        "remain",
        "remains",
        "are",
        "is",
        "be",
        "always",
        "evictions",
        "of",
        "its",
        "and",
        "create",
        "add",
        "set",
        "new",
        "than",
        "more",
        "no",
        "voluntary",
        "percent",
        "should",
    }
)


def budget(sentence: Sentence, at: int) -> Asked:
    text = " ".join(sentence.low)
    flags = sentence.flags
    params: dict[str, Any] = {}
    if "min-available" in flags:
        params["min_available"] = _amount(flags["min-available"])
    if "max-unavailable" in flags:
        params["max_unavailable"] = _amount(flags["max-unavailable"])
    for pattern, key in (
        (rf"\bmin(?:imum)?[ -]?available(?: of| to|=| =| is)? {_COUNT}", "min_available"),
        (rf"\bminavailable[ =:]*{_COUNT}", "min_available"),
        (rf"\bmax(?:imum)?[ -]?unavailable(?: of| to|=| =| is)? {_COUNT}", "max_unavailable"),
        (rf"\bmaxunavailable[ =:]*{_COUNT}", "max_unavailable"),
        (
            rf"\bat most {_COUNT} (?:\S+ )?(?:pods? |replicas? |instances? )?(?:is |are |be |go )?"
            r"(?:down|unavailable|missing|disrupted|evicted|at a time|at once)",
            "max_unavailable",
        ),
        (rf"\blose (?:at most |no more than |more than |only )?{_COUNT}", "max_unavailable"),
        (
            rf"\bat least {_COUNT} (?:\S+ )?(?:of \S+ )?(?:pods? |replicas? |instances? )?",
            "min_available",
        ),
        (rf"\bkeep {_COUNT} (?:of )?", "min_available"),
    ):
        match = re.search(pattern, text)
        if match and key not in params and not ({"min_available", "max_unavailable"} & set(params)):
            params[key] = _amount(match[1])
    name = flags.get("name") or ""
    if name:
        params["name"] = name
    numbers = {str(v) for v in params.values()} | {f"{v}" for v in params.values()}
    sentence.take_words(
        _BUDGET_WORDS
        | LINKS
        | numbers
        | set(amounts.NUMBERS)
        | {
            w
            for w in sentence.low
            if re.fullmatch(r"\d+%?|minavailable[=:]?\S*|maxunavailable[=:]?\S*", w)
        }
    )
    return Asked("pdb", params)


def _amount(text: str) -> int | str:
    text = text.strip().lower()
    if text == "half":
        return "50%"
    if text.endswith("%"):
        return text
    if text.isdigit():
        return int(text)
    found = amounts.count(text)
    return 1 if found is None else found


def autoscale(sentence: Sentence, at: int) -> Asked:
    text = " ".join(sentence.low)
    flags = sentence.flags
    params: dict[str, Any] = {}
    if flags.get("min", "").isdigit():
        params["min"] = int(flags["min"])
    if flags.get("max", "").isdigit():
        params["max"] = int(flags["max"])
    if flags.get("cpu-percent", "").rstrip("%").isdigit():
        params["cpu"] = int(flags["cpu-percent"].rstrip("%"))
    between = re.search(r"\b(?:between|from) (\d+) (?:up )?(?:and|to|-) (\d+)\b", text)
    if between:
        params.setdefault("min", int(between[1]))
        params.setdefault("max", int(between[2]))
    for pattern, key in (
        (r"\bmin(?:imum)?(?: replicas)?(?: of| to|=| =| is|:)? ?(\d+)\b", "min"),
        (r"\bat least (\d+)\b", "min"),
        (r"\bmax(?:imum)?(?: replicas)?(?: of| to|=| =| is|:)? ?(\d+)\b", "max"),
        (r"\b(?:up to|at most|no more than|as many as) (\d+)\b", "max"),
        (r"\b(\d+) (?:min|minimum)\b", "min"),
        (r"\b(\d+) (?:max|maximum)\b", "max"),
    ):
        match = re.search(pattern, text)
        if match and key not in params:
            params[key] = int(match[1])
    shares = amounts.percent(sentence, near_words=CPU_WORDS | MEMORY_WORDS)
    for word, share in shares.items():
        key = "memory" if word in MEMORY_WORDS else "cpu"
        params.setdefault(key, share)
    if "cpu" not in params and "memory" not in params:
        over = re.search(
            r"\b(cpu|memory|mem)\w* (?:is |goes |gets )?(?:over|above|beyond|"
            r"exceeds?|at|reaches|hits) (\d+)\b",
            text,
        )
        if over:
            params["memory" if over[1].startswith("mem") else "cpu"] = int(over[2])
    name = flags.get("name") or ""
    if name:
        params["name"] = name
    numbers = {str(v) for v in params.values()}
    sentence.take_words(
        numbers
        | CPU_WORDS
        | MEMORY_WORDS
        | LINKS
        | AUTOSCALE_WORDS
        | {
            "auto",
            "scale",
            "between",
            "and",
            "min",
            "max",
            "minimum",
            "maximum",
            "replicas",
            "replica",
            "pods",
            "pod",
            "up",
            "at",
            "least",
            "most",
            "when",
            "if",
            "is",
            "goes",
            "over",
            "above",
            "utilization",
            "utilisation",
            "usage",
            "target",
            "targeting",
            "average",
            "percent",
            "create",
            "add",
            "make",
            "set",
            "new",
            "horizontal",
            "that",
            "keeps",
            "keep",
            "as",
            "many",
            "no",
            "more",
            "than",
            "gets",
            "exceeds",
            "reaches",
            "based",
            "load",
            "under",
            "it",
            "can",
            "with",
        }
        | {w for w in sentence.low if re.fullmatch(r"\d+%|m(?:in|ax)=\d+", w)}
    )
    return Asked("autoscale", params)


READERS: dict[str, Reader] = {"pdb": budget, "autoscale": autoscale}
