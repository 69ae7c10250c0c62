"""Readers of the changes of a node (the Cluster Operator's): cordon, uncordon, drain, taint and
untaint ("taint node-1 dedicated=gpu:NoSchedule", "remove the dedicated taint from node-1",
"drain node-2 ignoring daemonsets", "evacuate node-3"). Labels of a node are the workloads'
`labels` reader with the kind Node. Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence

_EFFECTS = {
    "noschedule": "NoSchedule",
    "prefernoschedule": "PreferNoSchedule",
    "noexecute": "NoExecute",
}
_TAINT = re.compile(
    r"^(?P<key>[A-Za-z0-9][A-Za-z0-9./_-]*?)(?:=(?P<value>[A-Za-z0-9._-]*))?"
    r"(?::(?P<effect>[A-Za-z]+))?(?P<off>-)?$"
)
_NODE_WORDS = frozenset(
    {
        "node",
        "nodes",
        "the",
        "from",
        "of",
        "on",
        "off",
        "all",
        "pods",
        "everything",
        "move",
        "taint",
        "taints",
        "tainted",
        "with",
        "a",
        "an",
        "key",
        "effect",
        "untaint",
        "remove",
        "delete",
        "clear",
        "drop",
        "ignoring",
        "ignore",
        "daemonsets",
        "daemonset",
        "and",
        "to",
        "workloads",
        "its",
        "it",
        "add",
    }
)


# What is said around a node's scheduling besides its name: "mark node-2 as unschedulable",
# "stop scheduling new pods on node-2", "put node-3 back into service".
_SCHEDULING_WORDS = frozenset(
    {"node", "the", "nodes", "mark", "make", "set", "flag", "as", "again", "not", "non",
     "unschedulable", "non-schedulable", "schedulable", "scheduling", "pods", "new", "any",
     "workloads", "on", "onto", "to", "out", "of", "from", "rotation", "service", "back",
     "into", "put", "take", "return", "bring", "please", "for", "now", "more", "prevent",
     "stop", "keep", "avoid", "block", "don", "t", "dont", "let", "anything", "land", "landing",
     "going", "get", "getting", "schedule", "scheduled", "placed", "while", "a", "off"}
)  # fmt: skip


# What is said around a drain in other words: "evict all pods from node-2", "move everything
# off node-3 to other nodes", "reschedule the pods on node-1 elsewhere".
_EMPTYING_WORDS = frozenset(
    {"evict", "empty", "vacate", "move", "migrate", "reschedule", "all", "every", "everything",
     "pods", "pod", "from", "off", "out", "elsewhere", "other", "another", "onto", "please",
     "running", "on"}
)  # fmt: skip


def cordon(sentence: Sentence, at: int) -> Asked:
    sentence.take_words(_SCHEDULING_WORDS)
    return Asked("cordon", kind="Node")


def uncordon(sentence: Sentence, at: int) -> Asked:
    sentence.take_words(_SCHEDULING_WORDS)
    return Asked("uncordon", kind="Node")


def drain(sentence: Sentence, at: int) -> Asked:
    params: dict[str, Any] = {}
    if "force" in sentence.flags or sentence.has("force", "forcibly"):
        params["force"] = True
    if "delete-emptydir-data" in sentence.flags or sentence.has("emptydir"):
        params["delete_emptydir_data"] = True
    for index, word in enumerate(sentence.low):  # "... off node-2 to node-3": where pods go
        if word in ("to", "onto", "into") and index > at:  # is the scheduler's, never drained
            sentence.take(index + 1)
    sentence.take_words(_NODE_WORDS | _EMPTYING_WORDS | {"force", "forcibly", "emptydir", "data"})
    return Asked("drain", params, kind="Node")


def taint(sentence: Sentence, at: int) -> Asked:
    removing = (
        sentence.at(at) == "untaint"
        or sentence.has("remove", "delete", "clear", "drop", "untaint", "lift")
        or (sentence.has("take") and sentence.has("off", "away"))
        or any(w.endswith("-") for w in sentence.low)
    )
    params: dict[str, Any] = {}
    effect = next((_EFFECTS[w] for w in sentence.low if w in _EFFECTS), "")
    for index, word in enumerate(sentence.raw):
        if index in sentence.used or sentence.low[index] in _NODE_WORDS | set(_EFFECTS):
            continue
        match = _TAINT.match(word)
        spec = match is not None and ("=" in word or ":" in word or word.endswith("-"))
        if match and (spec or (removing and sentence.at(index + 1) in ("taint", "key"))):
            params = {"key": match["key"], "value": match["value"] or ""}
            effect = _EFFECTS.get((match["effect"] or "").lower(), effect)
            sentence.take(index)
            break
    if effect:
        params["effect"] = effect
    sentence.take_words(_NODE_WORDS | set(_EFFECTS))
    op = "untaint" if removing else "taint"
    if op == "taint" and ("key" not in params or "effect" not in params):
        return Asked(
            op,
            params,
            kind="Node",
            problem="which taint? Say e.g. 'taint node-1 dedicated=gpu:NoSchedule'",
        )
    return Asked(op, params, kind="Node")


READERS: dict[str, Reader] = {
    "cordon": cordon,
    "uncordon": uncordon,
    "drain": drain,
    "taint": taint,
    "untaint": taint,
}
