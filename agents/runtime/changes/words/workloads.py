"""Readers of the changes of a workload that exists: scale, restart, undo, pause and resume,
image, environment, requests and limits, labels and annotations, delete.

Each takes the sentence and where its verb is, reads the parameters it needs and marks them,
and returns an `Asked`; the words left may name the object. Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.amounts import NUMBERS, PAIR, count
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence, kind_of
from agents.runtime.changes.words.vocabulary import ENV_WORDS, IMAGE_REF, IMAGE_WORDS, LABEL_WORDS

_STOP = ("take down", "shut down", "turn off", "switch off", "spin down", "stop")
_REPLICAS = frozenset(
    {
        "replica",
        "replicas",
        "pod",
        "pods",
        "instance",
        "instances",
        "copy",
        "copies",
        "node",
        "nodes",
    }
)  # fmt: skip  ("nodes" as a count: "3 nodes")
_SHRINK = frozenset(
    {"fewer", "less", "halve", "remove", "down", "decrease", "reduce", "lower", "shrink"}
)
_FACTORS = {"double": 2.0, "twice": 2.0, "triple": 3.0, "halve": 0.5, "half": 0.5}
_TAG = re.compile(r"^v?\d+(?:\.\d+){0,3}(?:[-+][A-Za-z0-9.]+)?$")
# Words that link parts of a request; "in" is not one: it says the namespace ("in shop").
LINKS = frozenset({"the", "to", "on", "from", "of", "a", "an", "for", "its", "with"})


def scale(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    verb = " ".join(w for i, w in enumerate(low) if i in sentence.used and i >= at)
    stops = any(verb.startswith(s) for s in _STOP) or (
        sentence.at(at) in ("take", "shut", "turn", "switch", "spin")
        and any(w in ("down", "off") for w in low[at + 1 : at + 4])
    )
    said = set(low)
    up = verb.endswith(("up", "out")) or bool(said & {"more", "double", "triple", "add", "up"})
    down = verb.endswith(("down", "in")) or bool(said & _SHRINK)
    params = _replica_count(sentence, at, down=down)
    if stops and not params:
        params = {"replicas": 0}
    if not params and up:
        params = {"by": 1}
    if not params:
        problem = "to how many replicas? Say e.g. 'scale web to 3' or 'add 2 replicas to web'"
        return Asked("scale", problem=problem)
    if "replicas" in sentence.flags and sentence.flags["replicas"].isdigit():
        params = {"replicas": int(sentence.flags["replicas"])}
    return Asked("scale", params)


def _replica_count(sentence: Sentence, at: int, *, down: bool) -> dict[str, Any]:
    """{"replicas": n}, {"by": +-n} or {"factor": f} from the words, marking those it read."""
    if sentence.flags.get("replicas", "").isdigit():
        return {"replicas": int(sentence.flags["replicas"])}
    verb = sentence.at(at)
    params: dict[str, Any] = {"factor": _FACTORS[verb]} if verb in _FACTORS else {}
    relative = verb in ("add", "remove")
    for index, word in enumerate(sentence.low):
        if index in sentence.used:
            continue
        found = _relative(sentence, index, down=down, known=params) or _absolute(
            sentence, index, down=down, relative=relative, known=params
        )
        if found is not None:
            params = found
        elif word not in _REPLICAS and word not in ("more", "fewer", "extra", "of", "the"):
            continue
        sentence.take(index)
    return params


def _relative(
    sentence: Sentence, index: int, *, down: bool, known: dict[str, Any]
) -> dict[str, Any] | None:
    """A change relative to now: "double", "by 2", "by 50%", "+2", "-50%"."""
    word, following = sentence.at(index), sentence.at(index + 1)
    if word in _FACTORS and "factor" not in known:
        return {"factor": _FACTORS[word]}
    share = _percent(following, sentence.at(index + 2)) if word == "by" else None
    if share is not None:  # "by 100%", "down by 50 percent"
        spelled = sentence.at(index + 2) in ("percent", "pct", "%")
        sentence.take(index + 1, *([index + 2] if spelled else []))
        return {"factor": max(0.0, 1 - share) if down else 1 + share}
    if word == "by" and (number := count(following)) is not None:
        sentence.take(index + 1)
        return {"by": -number if down else number}
    if re.fullmatch(r"[+-]\d+%", word):
        share = int(word[1:-1]) / 100
        return {"factor": 1 - share if word[0] == "-" else 1 + share}
    if re.fullmatch(r"[+-]\d+", word):
        return {"by": int(word)}
    return None


def _absolute(
    sentence: Sentence, index: int, *, down: bool, relative: bool, known: dict[str, Any]
) -> dict[str, Any] | None:
    """A count said as such: "to 3", "3 replicas", "two more" (relative after "add")."""
    word, following = sentence.at(index), sentence.at(index + 1)
    said = 2 if following in ("a", "an") and sentence.at(index + 2) in NUMBERS else 1
    if word in ("to", "at") and (number := count(sentence.at(index + said))) is not None:
        sentence.take(*range(index + 1, index + said + 1))  # "to a single replica"
        return {"replicas": number}
    if word == "zero":
        return {"replicas": 0}
    counted = word.isdigit() or (word in NUMBERS and following in _REPLICAS | {"more", "extra"})
    if not counted or "replicas" in known or "by" in known:
        return None
    n = count(word) or 0
    by = relative or following == "more" or sentence.at(index - 1) == "add"
    return {"by": -n if down else n} if by else {"replicas": n}


def _percent(word: str, following: str) -> float | None:
    """A share said as "50%" or "50 percent"."""
    if re.fullmatch(r"\d+%", word):
        return int(word[:-1]) / 100
    if word.isdigit() and following in ("percent", "pct", "%"):
        return int(word) / 100
    return None


def restart(sentence: Sentence, at: int) -> Asked:
    sentence.take_words({"rollout", "pods", "the", "all", "of"})
    return Asked("restart")


def undo(sentence: Sentence, at: int) -> Asked:
    params: dict[str, Any] = {}
    for index, word in enumerate(sentence.low):
        following = sentence.at(index + 1)
        if word in ("revision", "rev", "version") and following.isdigit():
            params = {"revision": int(following)}
            sentence.take(index, index + 1)
        elif re.fullmatch(r"(?:rev|r)\d+", word):
            params = {"revision": int(word.lstrip("rev"))}
            sentence.take(index)
    sentence.take_words(
        {
            "previous",
            "last",
            "prior",
            "earlier",
            "good",
            "working",
            "to",
            "the",
            "version",
            "revision",
            "one",
            "it",
            "deploy",
            "deployment",
            "rollout",
            "release",
            "change",
            "changes",
        }
    )
    return Asked("undo", params)


def pause(sentence: Sentence, at: int) -> Asked:
    sentence.take_words({"rollout", "rollouts", "the", "of", "schedule", "scheduling"})
    word = sentence.at(at)
    return Asked("pause" if word in ("pause", "suspend") else "resume")


def image(sentence: Sentence, at: int) -> Asked:
    params: dict[str, Any] = {}
    if "image" in sentence.flags:
        params["image"] = sentence.flags["image"]
    for index, word in enumerate(sentence.raw):
        low = sentence.low[index]
        if IMAGE_REF.match(low) and "image" not in params:
            params["image"] = word
            sentence.take(index)
        elif _TAG.match(low) and "image" not in params and index > at:
            params["tag"] = word
            sentence.take(index)
        elif low in IMAGE_WORDS or low in (
            "to",
            "the",
            "new",
            "latest",
            "of",
            "container",
            "on",
            "for",
        ):
            sentence.take(index)
    if (
        "tag" in params
        and sentence.has("latest", "newest", "last")
        and sentence.has("patch", "release", "minor", "version", "build")
    ):
        params["latest"] = True  # "the latest 1.27 patch": the newest 1.27.x the registry has
        sentence.take_words({"patch", "release", "minor", "build", "newest", "last"})
    if not params:
        return Asked(
            "image", problem="to which image or tag? Say e.g. 'set web's image to nginx:1.28'"
        )
    container = container_named(sentence)
    if container:
        params["container"] = container
    return Asked("image", params)


def env(sentence: Sentence, at: int) -> Asked:
    removing = sentence.at(at) in ("remove", "unset", "delete", "drop")
    values: dict[str, str | None] = dict(amounts.pairs(sentence))
    for index, word in enumerate(sentence.raw):
        if index in sentence.used:
            continue
        if sentence.low[index] in ENV_WORDS or sentence.low[index] in LINKS:
            sentence.take(index)
        elif removing and re.fullmatch(r"[A-Z_][A-Z0-9_]*", word):
            values[word] = None
            sentence.take(index)
    if not values:
        return Asked("env", problem="which variable? Say e.g. 'set LOG_LEVEL=debug on web'")
    params: dict[str, Any] = {"env": values}
    container = container_named(sentence)
    if container:
        params["container"] = container
    return Asked("env", params)


def resources(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    limit = any(w in ("limit", "limits", "cap", "max", "maximum") for w in low)
    request = any(w in ("request", "requests", "reservation", "reserve") for w in low)
    links = frozenset(
        {
            "limit",
            "limits",
            "request",
            "requests",
            "to",
            "of",
            "the",
            "a",
            "an",
            "and",
            "cap",
            "max",
            "maximum",
            "more",
            "its",
            "s",
            "at",
            "with",
            "container",
            "on",
            "for",
            "reservation",
            "reserve",
        }
    )
    container = container_named(sentence)
    fields, problem = amounts.sizes(sentence, links=links)
    for flag in ("requests", "limits"):  # kubectl set resources --requests=cpu=100m,memory=..
        for part in sentence.flags.get(flag, "").split(","):
            key, _, value = part.partition("=")
            if key in ("cpu", "memory") and value:
                fields[f"limit_{key}" if flag == "limits" else key] = value
    if not fields and not problem:
        problem = "how much? Say e.g. 'set web's memory limit to 512Mi' or 'give web half a CPU'"
    params: dict[str, Any] = {}
    for what, value in fields.items():
        if what.startswith("limit_"):
            params[what] = value
            continue
        if limit:
            params[f"limit_{what}"] = value
        if request or not limit:
            params[what] = value
    if container:
        params["container"] = container
    return Asked("resources", params, problem=problem)


def labels(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    annotations = any(w.startswith("annot") for w in low)
    removing = sentence.at(at) in ("remove", "delete", "drop", "unset", "unlabel")
    values: dict[str, str | None] = {}
    for index, word in enumerate(sentence.raw):
        match = PAIR.match(word)
        if match:
            values[match["key"]] = match["value"].strip("'\"") or None
            sentence.take(index)
        elif low[index] in LABEL_WORDS or low[index] in LINKS:
            sentence.take(index)
        elif removing and low[index].endswith("-") and len(low[index]) > 1:
            values[word[:-1]] = None
            sentence.take(index)
    if removing and not values:
        keys = [i for i in range(at + 1, len(low)) if i not in sentence.used]
        if len(keys) >= 2:  # "remove label tier from web": the first word left is the key
            values[sentence.raw[keys[0]]] = None
            sentence.take(keys[0])
    if not values:
        return Asked("labels", problem="which label? Say e.g. 'label web tier=frontend'")
    return Asked("labels", {"field": "annotations" if annotations else "labels", "values": values})


def delete(sentence: Sentence, at: int) -> Asked:
    named = at + 2 if sentence.at(at + 1) in ("the", "a") else at + 1
    if sentence.at(named) in ("namespace", "ns") and sentence.free(named + 1):
        name = sentence.at(named + 1)  # "delete the namespace shop": the namespace itself
        sentence.take(named, named + 1)
        return Asked("delete", {"name": name}, kind="Namespace")
    sentence.take_words({"the", "a", "an", "old", "stale", "completed", "failed", "finished"})
    params = {"force": True} if "force" in sentence.flags else {}
    # What a delete removes is exactly the kind said: "delete the worker service" is the
    # Service, never the Deployment of the same name a looser reading would find; and never
    # the namespace it is said to be in ("delete the pods in namespace jobs").
    free = [w for i, w in enumerate(sentence.low) if sentence.free(i) and not _where(sentence, i)]
    for word in free:  # several objects of a kind ("delete all failed pods"): not one delete
        if kind_of([word], loose=True):
            break
        if word.endswith("s") and (many := kind_of([word[:-1]], loose=True)):
            return Asked(
                "delete",
                kind=many,
                problem=f"I delete one object at a time: name the {many} ('delete "
                f"{many.lower()} NAME'); nothing was deleted",
            )
    return Asked("delete", params, kind=kind_of(free, loose=True))


def _where(sentence: Sentence, index: int) -> bool:
    """Whether the word at `index` is the "namespace" of a phrase saying where ("in namespace
    jobs", "in the jobs namespace"), not an object to act on."""
    if sentence.at(index) not in ("namespace", "ns"):
        return False
    return sentence.at(index - 1) in ("in", "from", "within", "inside") or (
        sentence.at(index - 3) in ("in", "from", "within", "inside")
        and sentence.at(index - 2) == "the"
    )


def container_named(sentence: Sentence) -> str:
    """ "container sidecar", "the sidecar container", "-c sidecar": the container named; ""
    for the only one (the agent picks it)."""
    if "container" in sentence.flags:
        return sentence.flags["container"].lower()
    low = sentence.low
    for index, word in enumerate(low):
        if word != "container":
            continue
        for near in (index + 1, index - 1):
            if sentence.free(near) and low[near] not in (
                "the",
                "a",
                "its",
                "of",
                "to",
                "on",
                "each",
                "every",
                "my",
                "that",
            ):
                sentence.take(index, near)
                return low[near]
    return ""


READERS: dict[str, Reader] = {
    "scale": scale,
    "restart": restart,
    "undo": undo,
    "pause": pause,
    "resume": pause,
    "image": image,
    "env": env,
    "resources": resources,
    "labels": labels,
    "delete": delete,
}
