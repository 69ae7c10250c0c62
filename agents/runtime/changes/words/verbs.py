"""Which operation a request asks for: its verb, or the object a generic verb is applied to.

`operation(sentence)` returns (op, index, width): the operation and where its verb is. In
order, the first that matches decides:

0. Cordoning said without its verb: "mark node-2 unschedulable", "stop scheduling on node-2",
   "take node-3 out of rotation", "put node-3 back into service" (never said of a pod); and
   draining: "evict all pods from node-2", "move everything off node-3", "empty node-1".
1. A verb whose particle may come later ("take web down", "roll the api back") or a two-word
   verb ("scale up", "roll back", "spin down").
2. An object that names the operation whatever the verb (`named`): a probe ("add a readiness
   probe"), an autoscaler ("autoscale web", "add an HPA"), a disruption budget, a network policy
   ("only web may reach api", "deny all ingress"), an Ingress with a host or path, a toleration,
   a node selector, a spread over nodes or zones, a quota, a limit range, pod security, a
   ConfigMap, a taint, access for a person ("let carol read logs", "give bob edit access"), a
   volume's size ("resize the data pvc to 2Gi"), a Service's selector or target port, a new
   namespace, exposing a workload ("expose web on port 80", "create a service for web"), a new
   workload ("run redis:7 as cache", "create a cronjob that runs ... every night").
3. A verb that is the operation ("scale", "restart", "cordon", "drain", "delete", ...).
4. A generic verb ("set", "bump", "change", "give", "make", "add", "remove") takes its
   operation from what it is applied to: replicas, memory or CPU, the image, a variable, a label.

The words each step reads by are `vocabulary`'s. Must not know: any agent or cluster.
"""

from __future__ import annotations

import itertools
import re

from agents.runtime.changes.words.amounts import MEMORY_SIZE, PAIR, count
from agents.runtime.changes.words.named import named
from agents.runtime.changes.words.sentence import Sentence, kind_of
from agents.runtime.changes.words.vocabulary import (
    CPU_WORDS,
    DELETE_VERBS,
    ENV_WORDS,
    GENERIC,
    IMAGE_REF,
    IMAGE_WORDS,
    LABEL_WORDS,
    MEMORY_WORDS,
    REPLICA_WORDS,
    VERSION,
    Found,
    autoscaled,
    has_pairs,
)

_PHRASES: tuple[tuple[str, str], ...] = (
    ("rollout restart", "restart"),
    ("rolling restart", "restart"),
    ("roll back", "undo"),
    ("go back", "undo"),
    ("scale up", "scale"),
    ("scale down", "scale"),
    ("scale out", "scale"),
    ("scale in", "scale"),
    ("bring up", "scale"),
    ("bring down", "scale"),
    ("take down", "scale"),
    ("shut down", "scale"),
    ("turn off", "scale"),
    ("spin down", "scale"),
    ("switch off", "scale"),
    ("rid of", "delete"),  # "get rid of the old job"
)
# A verb whose particle may come after its object: "take web down", "roll the redis deployment
# back"; the particle is looked for in the four words after the verb.
_SPLIT: dict[str, tuple[frozenset[str], str]] = {
    **{v: (frozenset({"down", "up", "off"}), "scale") for v in ("take", "bring", "shut", "turn")},
    "scale": (frozenset({"down", "up"}), "scale"),
    "roll": (frozenset({"back"}), "undo"),
}
_VERBS = {
    "scale": "scale",
    "rescale": "scale",
    "stop": "scale",
    "restart": "restart",
    "bounce": "restart",
    "recycle": "restart",
    "redeploy": "restart",
    "reboot": "restart",
    "kick": "restart",
    "reload": "restart",
    "rollback": "undo",
    "revert": "undo",
    "undo": "undo",
    "downgrade": "image",
    "pause": "pause",
    "resume": "resume",
    "unpause": "resume",
    "suspend": "pause",
    "unsuspend": "resume",
    "cordon": "cordon",
    "uncordon": "uncordon",
    "drain": "drain",
    "evacuate": "drain",
    "untaint": "untaint",
    "label": "labels",
    "annotate": "labels",
    "unlabel": "labels",
    "upgrade": "image",
    "kill": "delete",
    "delete": "delete",
    "destroy": "delete",
    "rm": "delete",
    "purge": "delete",
    "double": "scale",
    "triple": "scale",
    "halve": "scale",
    "expose": "expose",
    "autoscale": "autoscale",
    "grant": "grant",
    "revoke": "revoke",
}


def operation(sentence: Sentence) -> Found | None:
    """The operation the request asks for, where its verb is and how many words it takes."""
    if sentence.focus > sentence.start:  # the request after its context: read it first
        context, sentence.start = sentence.start, sentence.focus
        found = _operation(sentence)
        sentence.start = context
        if found is not None:
            return found
    return _operation(sentence)


def _operation(sentence: Sentence) -> Found | None:
    found = _scheduling(sentence) or _emptying(sentence) or _particle(sentence) or _phrase(sentence)
    if found is not None:
        if found[0] == "scale" and autoscaled(sentence):
            return "autoscale", found[1], found[2]
        return found
    return named(sentence) or _verb(sentence)


_STOPS = frozenset({"stop", "prevent", "disable", "block", "halt", "no", "pause", "freeze"})
_STARTS = frozenset({"resume", "allow", "enable", "re-enable", "reenable", "restore", "unblock"})
_IN_SERVICE = frozenset({"rotation", "service"})
_HOLDS = _STOPS | {"t", "dont", "keep", "avoid"}  # what keeps new pods off ("don't": don, t)
_ANY_POD = (("new", "pods"), ("any", "pods"), ("new", "workloads"), ("anything",))


def _scheduling(sentence: Sentence) -> Found | None:
    """Whether the node takes new pods, said in words other than cordon: "unschedulable",
    "schedulable again", "(stop|resume) scheduling on", "out of / back into rotation"."""
    low = sentence.low
    kept_off = _new_pods_kept_off(sentence)
    if kept_off is not None:
        return kept_off
    if kind_of([w for w in low if w not in _IN_SERVICE], loose=True) not in ("", "Node"):
        return None  # "make the pod schedulable" asks about a pod, not a node
    for index in range(sentence.start, len(low)):
        word, before = low[index], sentence.at(index - 1)
        if word in ("unschedulable", "non-schedulable"):
            return "cordon", index, 1
        if word == "schedulable":
            return ("cordon" if before in ("not", "non") else "uncordon"), index, 1
        if word == "scheduling" and before in _STOPS | _STARTS:
            return ("cordon" if before in _STOPS else "uncordon"), index - 1, 2
        if word in _IN_SERVICE and before in ("of", "from") and sentence.at(index - 2) == "out":
            return "cordon", index - 2, 3
        if word in _IN_SERVICE and {"back", "return"} & set(low[max(0, index - 3) : index]):
            return "uncordon", index, 1
    return None


def _new_pods_kept_off(sentence: Sentence) -> Found | None:
    """ "prevent new pods from landing on node-3", "don't schedule anything on node-3": new pods
    in general (never one workload's, "keep web's pods off node-3") kept off a named node."""
    low = sentence.low
    if kind_of(low, loose=True) not in ("Node", "Pod") and not any(
        w.startswith("node-") for w in low
    ):
        return None
    for index in range(sentence.start, len(low)):
        if low[index] not in _HOLDS:
            continue
        after = low[index + 1 : index + 5]
        if any(all(w in after for w in words) for words in _ANY_POD):
            return "cordon", index, 1
    return None


def _particle(sentence: Sentence) -> Found | None:
    low = sentence.low
    if sentence.has("taint", "taints", "label", "labels", "probe", "toleration", "access"):
        return None  # "take the dedicated taint off node-1" removes a taint, scales nothing
    for index in range(sentence.start, len(low) - 1):
        particles, op = _SPLIT.get(low[index], (frozenset(), ""))
        if op and particles & set(low[index + 1 : index + 5]):
            return op, index, 1
    return None


def _phrase(sentence: Sentence) -> Found | None:
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentence.low)]
    for phrase, op in _PHRASES:
        if phrase in pairs[sentence.start :]:
            return op, pairs.index(phrase, sentence.start), 2
    return None


def _verb(sentence: Sentence) -> Found | None:
    low = sentence.low
    for index in range(sentence.start, len(low)):
        word = low[index]
        if word in _VERBS:
            op = _VERBS[word]
            if op == "labels" and not has_pairs(sentence) and word != "unlabel":
                continue
            if op == "delete" and _by_object(sentence, index, counts=False) in ("env", "labels"):
                return _by_object(sentence, index, counts=False) or op, index, 1
            return op, index, 1
        if word in GENERIC:
            meant = _by_object(sentence, index, counts=word not in ("add", "remove", "give"))
            if meant:
                return meant, index, 1
    return None


_EMPTYING = frozenset({"evict", "empty", "clear", "vacate", "move", "migrate", "reschedule"})


def _emptying(sentence: Sentence) -> Found | None:
    """Every pod taken off a node, said without "drain": "evict all pods from node-2", "move
    everything off node-3", "empty node-1"; never one pod or workload ("evict pod web-1",
    "move web to node-2")."""
    low = sentence.low
    for index in range(sentence.start, len(low)):
        if low[index] not in _EMPTYING:
            continue
        after = low[index + 1 :]
        if not any(w in ("node", "nodes") or w.startswith("node-") for w in after):
            return None
        everything = {"all", "every", "everything", "pods", "workloads"} & set(after)
        off = {"from", "off", "out", "on"} & set(after)
        if (everything and off) or low[index] in ("empty", "vacate"):
            return "drain", index, 1
        return None
    return None


def _by_object(sentence: Sentence, at: int, *, counts: bool) -> str | None:
    """What a generic verb changes, from the words after it; a bare number is a replica count
    only after a verb that can mean that (`counts`)."""
    after = sentence.low[at + 1 :]
    said = set(after)
    if said & LABEL_WORDS:
        return "labels"
    raw = sentence.raw
    keys = [PAIR.match(w)["key"] for w in raw if PAIR.match(w)]  # type: ignore[index]
    if (
        said & ENV_WORDS
        or any(k.isupper() for k in keys)
        or any(re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", w) for w in raw)
    ):
        return "env"
    if said & (CPU_WORDS | MEMORY_WORDS) or any(MEMORY_SIZE.match(w) for w in after):
        return "resources"
    if said & REPLICA_WORDS:
        return "scale"
    if said & IMAGE_WORDS or any(IMAGE_REF.match(w) or VERSION.match(w) for w in after):
        return "image"  # "move web to 1.27.3", "switch api to the newest 1.26 release"
    counted = any(
        w in ("to", "by") and n not in ("a", "an") and count(n) is not None
        for w, n in itertools.pairwise(after)
    ) or any(re.fullmatch(r"[+-]\d+", w) for w in after)
    if counts and counted:
        return "scale"  # "bump api by 2", "set web to 3", "increase api to 5"
    if sentence.low[at] in DELETE_VERBS and kind_of(after, loose=True):
        return "delete"  # "remove the api svc": a kind said, so an object, not a field
    return None
