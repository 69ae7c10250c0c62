"""Answering a question: the namespace it names made sure of, then its family's answer.

A namespace the words named is checked against those that exist: a near miss ("shpo") is read
as the namespace meant, and the answer says so; one that matches nothing is answered with the
namespaces there are (for a history question, "what changed in web", the word may name an
object instead, and is read so). Then the family's module answers, through `Evidence`, with
read-only tools only. Nothing here or below writes.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from dataclasses import replace

from agents.runtime.questions import (
    capacity,
    events,
    history,
    inventory,
    logs,
    overview,
    policy,
    rights,
)
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
from agents.runtime.questions.evidence import Evidence
from agents.runtime.spelling import namespace_meant
from agents.runtime.toolbox import Toolbox


async def answer(toolbox: Toolbox, question: Question) -> Answered:
    """The answer to `question`, from the cluster, with its evidence; never a write."""
    evidence = Evidence(toolbox)
    note = ""
    if (
        not isinstance(question, Capacity | Overview)
        and question.namespace
        and question.said_namespace
    ):
        settled = await _settle(evidence, question)
        if isinstance(settled, Answered):
            return settled
        if settled.namespace and settled.namespace != question.namespace:
            note = f"(I read '{question.namespace}' as namespace {settled.namespace}.)\n"
        question = settled
    answered = await _answer(evidence, question)
    if note:
        answered = Answered(
            note + answered.text,
            {**answered.data, "read_namespace_as": getattr(question, "namespace", None)},
        )
    return answered


async def _answer(evidence: Evidence, question: Question) -> Answered:
    if isinstance(question, Inventory):
        return await inventory.answer(evidence, question)
    if isinstance(question, Access):
        return await rights.answer(evidence, question)
    if isinstance(question, History):
        return await history.answer(evidence, question)
    if isinstance(question, Events):
        return await events.answer(evidence, question)
    if isinstance(question, Logs):
        return await logs.answer(evidence, question)
    if isinstance(question, Capacity):
        return await capacity.answer(evidence, question)
    if isinstance(question, Overview):
        return await overview.answer(evidence, question)
    return await policy.answer(evidence, question)


async def _settle(
    evidence: Evidence, question: Inventory | Access | History | Events | Logs | PolicyCheck
) -> Inventory | Access | History | Events | Logs | PolicyCheck | Answered:
    said = question.namespace or ""
    listed = await evidence.call("list_resources", "the namespaces", kind="namespaces", limit=500)
    if listed is None:
        evidence.unseen.clear()  # not knowing the namespaces is no reason not to try the one said
        return question
    existing = [str(i.get("name")) for i in listed.get("items") or [] if isinstance(i, dict)]
    meant = namespace_meant(said, existing)
    if meant is not None:
        return replace(question, namespace=meant)
    if isinstance(question, History):  # "what changed in web": web is no namespace, an object
        return replace(question, namespace=None, names=(said, *question.names))
    shown = ", ".join(sorted(existing)[:20])
    return Answered(
        f"There is no namespace '{said}'. Namespaces I can see: {shown}.",
        {
            "family": type(question).__name__.lower(),
            "clarify": True,
            "options": existing[:50],
            "rows": [],
            "sure": False,
        },
    )
