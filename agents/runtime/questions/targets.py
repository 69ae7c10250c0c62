"""Finding the one object a question names, or the question to ask back.

`locate` lists the kinds that can be meant (workloads for history, nodes for a drain, ...)
through the read tools and picks the object the words mean (`names.meant`: exact, near miss,
a word of a hyphenated name). One match is the target; several, or none, come back as an
`Answered` that names what exists and asks which one: an answer never guesses an object.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.runtime.questions.asked import Answered
from agents.runtime.questions.evidence import Evidence, unanswered, where
from agents.runtime.questions.names import Ref, listing, meant

WORKLOADS = (
    ("deployments", "Deployment"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
    ("cronjobs", "CronJob"),
)
_BY_KIND = {
    "deployments": (("deployments", "Deployment"),),
    "statefulsets": (("statefulsets", "StatefulSet"),),
    "daemonsets": (("daemonsets", "DaemonSet"),),
    "cronjobs": (("cronjobs", "CronJob"),),
    "jobs": (("jobs", "Job"),),
    "pods": (("pods", "Pod"),),
    "nodes": (("nodes", "Node"),),
    "services": (("services", "Service"),),
}


def kinds_for(
    kind: str, default: Sequence[tuple[str, str]] = WORKLOADS
) -> Sequence[tuple[str, str]]:
    return _BY_KIND.get(kind, default)


async def locate(
    evidence: Evidence,
    family: str,
    words: Sequence[str],
    namespace: str | None,
    kinds: Sequence[tuple[str, str]],
) -> Ref | Answered:
    known: list[Ref] = []
    for plural, kind in kinds:
        scoped = namespace if plural != "nodes" else None
        scan = await evidence.scan(plural, f"{plural} {where(scoped)}", namespace=scoped)
        known += [
            Ref(kind, str(i["name"]), str(i.get("namespace", "")))
            for i in (scan.items if scan else [])
        ]
    if not known and evidence.unseen:
        return unanswered(evidence, family, f"what {' '.join(words)} is")
    found = meant(words, known)
    asked = " ".join(words)
    if len(found) == 1:
        return found[0]
    names = ", ".join(kind for _, kind in kinds)
    if found:
        text = (
            f"'{asked}' matches more than one object: {listing(found)}. Which one do you "
            f"mean? Ask again with its namespace, e.g. 'in {found[0].namespace}'."
        )
    else:
        seen = listing(known) if known else f"no {names} at all"
        text = f"I found nothing called '{asked}' {where(namespace)}. What I can see: {seen}."
    data = {
        "family": family,
        "clarify": True,
        "options": [str(r) for r in found or known[:20]],
        "rows": [],
        "unseen": list(evidence.unseen),
        "sure": False,
    }
    return Answered(text, data)
