"""Questions answered from the cluster, with evidence: shared by every agent.

An agent wires it in two lines, before its other intents:

    q = questions.read(text, namespace=ns)        # None: not one of these questions
    answered = await questions.answer(toolbox, q)  # .text for the person, .data the evidence

    asked             the eight families (Inventory, Access, History, Events, Logs, Capacity,
                      Overview, PolicyCheck) and `Answered`
    reading           the word grammar (`permissions` reads access and policy questions), over
                      `words` (tokens, windows, namespaces) and `vocabulary` (the synonyms);
                      `subjects` says who a question is about
    answering         the namespace made sure of, then the family's answer: `inventory` (and
                      `workload_checks`), `rights`, `history`, `events`, `logs`, `capacity`,
                      `overview`, `policy`, each gathering through `evidence` (bounded
                      reads, what was not seen) and finding named objects with `targets`
                      and `names`

Answers only read: every tool they call is a read-only tool of the kube, policy or gitops
server, and a policy question is a dry run (`evaluate_action`).

Must not know: any agent (import-linter holds that); the cluster only through the toolbox.
"""

from agents.runtime.questions.answering import answer
from agents.runtime.questions.asked import (
    Access,
    Answered,
    Capacity,
    Events,
    History,
    Inventory,
    Logs,
    Overview,
    PolicyCheck,
    Question,
)
from agents.runtime.questions.reading import read

__all__ = [
    "Access",
    "Answered",
    "Capacity",
    "Events",
    "History",
    "Inventory",
    "Logs",
    "Overview",
    "PolicyCheck",
    "Question",
    "answer",
    "read",
]
