"""Logs answers: the last lines a pod's container wrote, or those of every pod of a workload.

The name said is a pod's, or a workload's whose pods are `<name>-...` (as `kubectl logs
deploy/web` means its pods); up to `PODS` of them are read, running ones first, each through
the `logs` read tool with the lines, window, container, previous instance and error filter
asked for. What a container wrote is data: it is shown quoted ("| ") and cut to `WIDTH`
characters a line, never read as instructions.

Must not know: any agent; the cluster only through the toolbox's read tools.
"""

from __future__ import annotations

from agents.runtime.questions.asked import Answered, Logs
from agents.runtime.questions.evidence import Evidence, Json, finish, more, unanswered, where

PODS = 3  # pods whose logs one answer shows
WIDTH = 300  # characters of a log line shown


async def answer(evidence: Evidence, question: Logs) -> Answered:
    ns = question.namespace
    if not question.name:
        return Answered(
            "Whose logs? Name the pod or the workload, e.g. 'show me the logs of web in shop'.",
            {"family": "logs", "clarify": True, "rows": [], "sure": False},
        )
    listed = await evidence.scan("pods", f"the pods {where(ns)}", namespace=ns)
    if listed is None:
        return unanswered(evidence, "logs", f"whose logs {question.name} names {where(ns)}")
    pods = sorted(
        (p for p in listed.items if _of(str(p.get("name") or ""), question.name)),
        key=lambda p: (p.get("status") != "Running", str(p.get("name"))),
    )
    if not pods:
        head = f"No pod is called {question.name} or belongs to a workload so named {where(ns)}."
        return finish(evidence, "logs", head, [], f"read {len(listed.items)} pods", rows=[],
                      total=0, name=question.name)  # fmt: skip
    shown, lines, read = pods[:PODS], [], []
    for pod in shown:
        got = await _log(evidence, question, pod)
        if got is None:
            continue
        read.append(got)
        lines += _quoted(pod, got, question)
    head = _head(question, ns, len(read), len(pods)) + more(len(shown), len(pods), "pods")
    basis = f"read the logs of {len(read)} pod{'s' if len(read) != 1 else ''}"
    return finish(evidence, "logs", head, lines, basis, rows=read, total=len(pods),
                  namespace=ns, name=question.name)  # fmt: skip


def _of(pod: str, name: str) -> bool:
    return pod == name or pod.startswith(name + "-")


async def _log(evidence: Evidence, question: Logs, pod: Json) -> Json | None:
    arguments: Json = {"pod": pod["name"], "namespace": pod.get("namespace") or question.namespace,
                       "tail": question.lines}  # fmt: skip
    if question.container:
        arguments["container"] = question.container
    if question.previous:
        arguments["previous"] = True
    if question.since_seconds:
        arguments["since_seconds"] = question.since_seconds
    if question.grep:
        arguments["grep"] = question.grep
    return await evidence.call("logs", f"the logs of pod {pod['name']}", **arguments)


def _head(question: Logs, namespace: str | None, read: int, pods: int) -> str:
    which = "the previous instance's logs" if question.previous else "logs"
    filtered = f" holding '{question.grep}'" if question.grep else ""
    window = f" in {question.window}" if question.window else ""
    of = f"pod {question.name}" if pods == 1 and read <= 1 else f"the pods of {question.name}"
    lines = f"The last {question.lines} lines{filtered}"
    return f"{lines} of the {which} of {of} {where(namespace)}{window}:"


def _quoted(pod: Json, got: Json, question: Logs) -> list[str]:
    text = str(got.get("log") or "")
    written = [line[:WIDTH] + ("..." if len(line) > WIDTH else "") for line in text.splitlines()]
    said = f"{pod['name']} (container {got.get('container') or '?'})"
    if not written:
        nothing = f"no line holding '{question.grep}'" if question.grep else "nothing"
        return [f"- {said}: {nothing}"]
    return [f"- {said}, {len(written)} line{'s' if len(written) != 1 else ''}:"] + [
        f"  | {line}" for line in written
    ]
