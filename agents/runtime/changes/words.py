"""Change requests as people type them: a verb, an object and a quantity, read as words.

`read(text)` finds what is asked ("scale web to 3", "bump api by 2", "take down the worker",
"set web's memory limit to 512Mi", "give api half a CPU", "upgrade web to 1.28", "roll back
checkout", "set LOG_LEVEL=debug on web", "label web tier=frontend", "cordon node-3") and
returns an `Asked`: the operation, its parameters, and the words left that may name the
object (the agent resolves those against the cluster). It is not a list of sentences: verbs
have synonyms, a generic verb ("set", "bump", "change", "give", "make") takes its operation from
what it is applied to (replicas, memory, the image, a variable), and quantities are read as
people write them ("two", "+2", "double", "by half", "2 cores", "half a CPU", "512MB").

A question is never a change: text that starts with a question word ("why did the scale
fail?", "is web scaled?", "what's wrong with the rollout?") reads as None here, as does text
with no change verb. A change that cannot be made precise (a quantity that does not parse, a
scale without a number) comes back with `problem` set, so the agent says exactly that and
changes nothing.

Must not know: any agent, the cluster, the servers.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(r"[A-Za-z0-9_@$+./:=-]*[A-Za-z0-9_/+=%]|[+-]?\d+")
_POLITE = {
    "please", "pls", "plz", "kindly", "hey", "hi", "ok", "okay", "so", "now", "then", "just",
    "kubecrew", "@kubecrew", "crew", "can", "could", "would", "will", "you", "u", "i", "we",
    "want", "wanna", "need", "like", "to", "let", "lets", "let's", "go", "ahead", "and", "d",
    "i'd", "id", "must", "should", "quickly", "also",
}  # fmt: skip
_QUESTION = {
    "why", "what", "whats", "what's", "is", "are", "was", "were", "does", "do", "did", "how",
    "which", "who", "whom", "when", "where", "has", "have", "had", "isn't", "isnt", "aren't",
    "doesn't", "didn't", "may", "might", "shall",
}  # fmt: skip
NUMBERS = {
    "zero": 0, "none": 0, "one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "couple": 2,
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
}  # fmt: skip
_REPLICAS = {
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
}  # fmt: skip  ("nodes" only as a count after scale: "3 nodes")
_CPU = {"cpu", "cpus", "core", "cores", "vcpu", "vcpus", "millicores", "millicpu"}
_MEMORY = {"memory", "mem", "ram"}
_IMAGE = {"image", "images", "tag", "version"}
_ENV_WORDS = {"env", "envs", "environment", "variable", "variables", "var", "vars", "envvar"}
_LABEL_WORDS = {"label", "labels", "annotation", "annotations", "annotate", "unlabel"}
_UP = {"up", "out", "more", "increase", "raise", "add", "grow", "bump", "double", "triple"}
_DOWN = {"down", "in", "fewer", "less", "decrease", "reduce", "lower", "remove", "shrink", "cut"}
_STOP = ("take down", "shut down", "turn off", "switch off", "spin down", "stop")
_GENERIC = {"set", "change", "bump", "increase", "raise", "decrease", "reduce", "lower", "make",
            "give", "update", "put", "adjust", "modify", "add", "remove", "drop", "unset",
            "delete", "use", "switch", "move", "allow", "cap", "limit"}  # fmt: skip
# Two words before one: the first that matches in the text decides the operation.
_PHRASES: tuple[tuple[str, str], ...] = (
    ("rollout restart", "restart"), ("rolling restart", "restart"), ("roll back", "undo"),
    ("go back", "undo"), ("scale up", "scale"), ("scale down", "scale"), ("scale out", "scale"),
    ("scale in", "scale"), ("bring up", "scale"), ("bring down", "scale"),
    ("take down", "scale"), ("shut down", "scale"), ("turn off", "scale"),
    ("spin down", "scale"), ("spin up", "scale"), ("switch off", "scale"),
)  # fmt: skip
# A verb whose particle may come after its object: "take web down", "roll the redis deployment
# back"; the particle is looked for in the four words after the verb.
_SPLIT: dict[str, tuple[frozenset[str], str]] = {
    **{v: (frozenset({"down", "up", "off"}), "scale")
       for v in ("take", "bring", "spin", "shut", "scale", "turn")},
    "roll": (frozenset({"back"}), "undo"),
}  # fmt: skip
_VERBS = {
    "scale": "scale", "rescale": "scale", "stop": "scale",
    "restart": "restart", "bounce": "restart", "recycle": "restart", "redeploy": "restart",
    "reboot": "restart", "kick": "restart", "reload": "restart",
    "rollback": "undo", "revert": "undo", "undo": "undo", "downgrade": "image",
    "pause": "pause", "resume": "resume", "unpause": "resume",
    "cordon": "cordon", "uncordon": "uncordon",
    "label": "labels", "annotate": "labels", "unlabel": "labels",
    "upgrade": "image", "kill": "delete", "delete": "delete", "destroy": "delete",
    "double": "scale", "triple": "scale", "halve": "scale",
}  # fmt: skip
_IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][A-Za-z0-9_.-]*$|^[a-z0-9._/-]+@sha256:[a-f0-9]{64}$"
)
_TAG = re.compile(r"^v?\d+(?:\.\d+){0,3}(?:[-+][A-Za-z0-9.]+)?$")
_PAIR = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_./-]*)=(?P<value>.*)$")
_MEMORY_SIZE = re.compile(
    r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[kmgt]i?b?|[KMGT]i?|[kmgt]i?b|Ki|Mi|Gi|Ti)$", re.I
)
_CPU_SIZE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>m|millicores?|cores?|cpus?)?$", re.I)


_YES = re.compile(
    r"^\s*(?:y|yes|yep|yeah|sure|ok|okay|confirm(?:ed)?|go(?: ahead)?|do it|proceed|"
    r"yes,? (?:please|go ahead|do it))\s*[.!]*\s*$",
    re.IGNORECASE,
)


def affirmative(text: str) -> bool:
    """Whether `text` says yes to a question asked before a change ("yes", "go ahead")."""
    return _YES.match(text) is not None


@dataclass(frozen=True)
class Asked:
    op: str  # scale, image, restart, undo, pause, resume, env, resources, labels, cordon,
    #          uncordon, delete
    params: dict[str, Any] = field(default_factory=dict)
    subject: tuple[str, ...] = ()  # the words left: they may name the object
    kind: str = ""  # the kind the words said ("deployment", "pod", "node"), if any
    problem: str = ""  # why the change is not precise enough to make (nothing changes)
    namespace: str | None = None  # "in shop", "-n shop", "shop/web"


def read(text: str) -> Asked | None:
    """The change `text` asks for, or None when it asks none (a question, or no change verb)."""
    raw: list[str] = [t for t in _TOKEN.findall(text.replace("\u2019", "'")) if t]
    words = [t.lower().rstrip(".,!?;") for t in raw]
    start = 0
    while start < len(words) and words[start] in _POLITE:
        start += 1
    if start < len(words) and words[start] in _QUESTION:
        return None
    if start >= len(words):
        return None
    op, at, width = _operation(raw, words, start)
    if op is None:
        return None
    asked = _ASKED[op](raw, words, at, width)
    return _placed(asked)


_FILLER = _POLITE | {
    "the", "a", "an", "to", "of", "s", "up", "down", "out", "my", "our", "its", "their", "it",
    "this", "that", "service", "app", "application", "workload", "deployment", "deploy",
    "statefulset", "sts", "daemonset", "ds", "pod", "pods", "on", "for", "from", "with",
    "again", "please", "thanks", "thank", "right", "away", "asap", "all", "by", "at", "more",
    "job", "node", "nodes", "instead", "back",
}  # fmt: skip


def _placed(asked: Asked) -> Asked:
    """The namespace the words name ("in shop", "-n shop", "namespace shop", "shop/web"), and
    the subject without filler and kind words (a kind said as "deployment/web" is kept)."""
    words, namespace, kind = list(asked.subject), asked.namespace, asked.kind
    subject: list[str] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("in", "-n", "--namespace", "namespace", "ns") and following:
            if following not in _FILLER:
                namespace, skip = namespace or following, True
            continue
        if "/" in word:
            left, _, right = word.partition("/")
            if left in _KIND_WORDS:
                kind = kind or _KIND_WORDS[left]
            else:
                namespace = namespace or left
            word = right
        if word and word not in _FILLER:
            subject.append(word)
    return Asked(asked.op, asked.params, tuple(subject), kind, asked.problem, namespace)


def _operation(raw: list[str], words: list[str], start: int) -> tuple[str | None, int, int]:
    for index in range(start, len(words) - 1):  # "take web down", "roll the api back"
        for verb, (particles, op) in _SPLIT.items():
            if words[index] == verb and particles & set(words[index + 1 : index + 5]):
                return op, index, 1
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    for phrase, op in _PHRASES:
        if phrase in pairs[start:]:
            return op, pairs.index(phrase, start), 2
    for index in range(start, len(words)):
        word = words[index]
        if word in _VERBS:
            verb = _VERBS[word]
            if verb == "labels" and _pairs(words) == {}:
                continue
            return verb, index, 1
        if word in _GENERIC:
            counts = word not in ("add", "remove", "give")
            meant = _by_object(words[index + 1 :], raw, counts=counts)
            if meant:
                return meant, index, 1
    return None, 0, 0


def _by_object(after: list[str], raw: list[str], *, counts: bool) -> str | None:
    """What a generic verb ("set", "bump", "give") changes, from the words after it; a bare
    number is a replica count only after a verb that can mean that (`counts`)."""
    said = set(after)
    if said & {"probe", "probes", "liveness", "readiness", "startup"}:
        return None  # probes are not in this vocabulary yet: never read as another change
    pairs = _pairs(raw)
    if said & _LABEL_WORDS:
        return "labels"
    if (
        said & _ENV_WORDS
        or any(k.isupper() for k in pairs)
        or any(re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", w) for w in raw)
    ):
        return "env"
    if said & (_CPU | _MEMORY) or any(_MEMORY_SIZE.match(w) for w in after):
        return "resources"
    if said & {"replica", "replicas", "instances", "instance", "copies", "copy"}:
        return "scale"
    if said & _IMAGE or any(_IMAGE_REF.match(w) for w in after):
        return "image"
    counted = any(
        w in ("to", "by") and n not in ("a", "an") and _count(n) is not None
        for w, n in itertools.pairwise(after)
    ) or any(re.fullmatch(r"[+-]\d+", w) for w in after)
    if counts and counted:
        return "scale"  # "bump api by 2", "set web to 3", "increase api to 5"
    return None


def _pairs(words: list[str]) -> dict[str, str]:
    return {m["key"]: m["value"] for w in words if (m := _PAIR.match(w)) and m["value"] != ""}


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return NUMBERS.get(word)


def _rest(words: list[str], used: set[int]) -> tuple[str, ...]:
    return tuple(w for i, w in enumerate(words) if i not in used)


# -- each operation ------------------------------------------------------------------------


def _scale(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    verb = " ".join(words[at : at + width])
    used = set(range(at, at + width))
    stops = any(verb.startswith(s) for s in _STOP) or (
        words[at] in ("take", "shut", "turn", "switch", "spin")
        and any(w in ("down", "off") for w in words[at + 1 : at + 4])
    )
    said = set(words)
    up = verb.endswith(("up", "out")) or bool(said & {"more", "double", "triple", "add"})
    down = verb.endswith(("down", "in")) or bool(said & _SHRINK)
    params = _replica_count(words, at, used, down=down)
    if stops and not params:
        params = {"replicas": 0}
    if not params and up:
        params = {"by": 1}
    if not params:
        problem = "to how many replicas? Say e.g. 'scale web to 3' or 'add 2 replicas to web'"
        return Asked("scale", {}, _rest(words, used), problem=problem)
    return Asked("scale", params, _rest(words, used), _kind_of(words))


_SHRINK = {"fewer", "less", "halve", "remove", "down", "decrease", "reduce", "lower", "shrink"}
_FACTORS = {"double": 2.0, "twice": 2.0, "triple": 3.0, "halve": 0.5, "half": 0.5}


def _replica_count(words: list[str], at: int, used: set[int], *, down: bool) -> dict[str, Any]:
    """{"replicas": n}, {"by": +-n} or {"factor": f} from the words, marking those it read."""
    params: dict[str, Any] = {"factor": _FACTORS[words[at]]} if words[at] in _FACTORS else {}
    relative = words[at] in ("add", "remove")
    for index, word in enumerate(words):
        if index in used:
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        count = _count(following)
        if word in _FACTORS and "factor" not in params:
            params = {"factor": _FACTORS[word]}
        elif word in ("to", "at") and count is not None:
            params = {"replicas": count}
            used.add(index + 1)
        elif word == "by" and count is not None:
            params = {"by": -count if down else count}
            used.add(index + 1)
        elif re.fullmatch(r"[+-]\d+", word):
            params = {"by": int(word)}
        elif word.isdigit() or (word in NUMBERS and following in _REPLICAS | {"more", "extra"}):
            if "replicas" not in params and "by" not in params:
                n = _count(word) or 0
                by = relative or following == "more" or words[index - 1 : index] == ["add"]
                params = {"by": -n if down else n} if by else {"replicas": n}
        elif word == "zero":
            params = {"replicas": 0}
        elif word not in _REPLICAS and word not in ("more", "fewer", "extra", "of", "the"):
            continue
        used.add(index)
    return params


def _restart(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = set(range(at, at + width)) | {
        i for i, w in enumerate(words) if w in ("rollout", "pods", "the", "all", "of")
    }
    return Asked("restart", {}, _rest(words, used), _kind_of(words))


def _undo(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = set(range(at, at + width))
    params: dict[str, Any] = {}
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("revision", "rev", "version") and following.isdigit():
            params = {"revision": int(following)}
            used |= {index, index + 1}
        elif re.fullmatch(r"(?:rev|r)\d+", word):
            params = {"revision": int(word.lstrip("rev"))}
            used.add(index)
        elif word in ("previous", "last", "prior", "earlier", "good", "working", "to", "the",
                      "version", "revision", "one", "it", "deploy", "deployment", "rollout",
                      "release", "change", "changes"):  # fmt: skip
            used.add(index)
    return Asked("undo", params, _rest(words, used), _kind_of(words))


def _pause(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at} | {i for i, w in enumerate(words) if w in ("rollout", "rollouts", "the", "of")}
    return Asked(
        words[at] if words[at] == "pause" else "resume", {}, _rest(words, used), _kind_of(words)
    )


def _image(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at}
    params: dict[str, Any] = {}
    for index, word in enumerate(raw):
        low = words[index]
        if _IMAGE_REF.match(low):
            params["image"] = word
            used.add(index)
        elif _TAG.match(low) and "image" not in params and index > at:
            params["tag"] = word
            used.add(index)
        elif low in _IMAGE or low in ("to", "the", "new", "latest", "of", "container", "on", "for"):
            used.add(index)
    if not params:
        return Asked(
            "image",
            {},
            _rest(words, used),
            problem="to which image or tag? Say e.g. 'set web's image to nginx:1.28'",
        )
    container = _container(words, used)
    if container:
        params["container"] = container
    return Asked("image", params, _rest(words, used), _kind_of(words))


def _env(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at}
    removing = words[at] in ("remove", "unset", "delete", "drop")
    env: dict[str, str | None] = {}
    for index, word in enumerate(raw):
        match = _PAIR.match(word)
        if match:
            env[match["key"]] = match["value"].strip("'\"")
            used.add(index)
        elif words[index] in _ENV_WORDS or words[index] in (
            "the",
            "to",
            "on",
            "from",
            "of",
            "in",
            "a",
            "an",
            "for",
        ):
            used.add(index)
        elif removing and re.fullmatch(r"[A-Z_][A-Z0-9_]*", word):
            env[word] = None
            used.add(index)
    if not env:
        return Asked(
            "env",
            {},
            _rest(words, used),
            problem="which variable? Say e.g. 'set LOG_LEVEL=debug on web'",
        )
    params: dict[str, Any] = {"env": env}
    container = _container(words, used)
    if container:
        params["container"] = container
    return Asked("env", params, _rest(words, used), _kind_of(words))


def _resources(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at}
    limit = any(w in ("limit", "limits", "cap", "max", "maximum") for w in words)
    request = any(w in ("request", "requests", "reservation", "reserve") for w in words)
    fields, problem = _sizes(words, used)
    if not fields and not problem:
        problem = "how much? Say e.g. 'set web's memory limit to 512Mi' or 'give web half a CPU'"
    params: dict[str, Any] = {}
    for what, value in fields.items():
        if limit:
            params[f"limit_{what}"] = value
        if request or not limit:
            params[what] = value
    container = _container(words, used)
    if container:
        params["container"] = container
    return Asked("resources", params, _rest(words, used), _kind_of(words), problem)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MEMORY_UNITS = {"mb", "mi", "mib", "gb", "gi", "gib", "kb", "ki"}
_SIZE_WORDS = _CPU | _MEMORY | {
    "limit", "limits", "request", "requests", "to", "of", "the", "a", "an", "and", "cap", "max",
    "maximum", "more", "its", "s", "at", "with", "container", "on", "for", "reservation",
    "reserve",
}  # fmt: skip


def _sizes(words: list[str], used: set[int]) -> tuple[dict[str, str], str]:
    """{"cpu": ..., "memory": ...} as Kubernetes quantities from the words, and a problem when a
    number has no unit it can be read by."""
    fields: dict[str, str] = {}
    problem = ""
    for index, word in enumerate(words):
        if index in used:
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        cpu = _CPU_SIZE.match(word)
        if word in ("half", "quarter") and _CPU & set(words[index + 1 : index + 3]):
            fields["cpu"] = "500m" if word == "half" else "250m"
            used.update(range(index, index + 3 if following in ("a", "an") else index + 2))
        elif (size := _MEMORY_SIZE.match(word)) and not cpu:
            fields["memory"] = _memory(size["n"], size["unit"])
        elif _NUMBER.fullmatch(word) and following in _MEMORY_UNITS:
            fields["memory"] = _memory(word, following)
            used.add(index + 1)
        elif _NUMBER.fullmatch(word) and following in _CPU:
            fields["cpu"] = f"{word}m" if following.startswith("milli") else word
            used.add(index + 1)
        elif cpu and cpu["unit"]:
            unit = cpu["unit"].lower()
            fields["cpu"] = f"{cpu['n']}m" if unit.startswith("m") else cpu["n"]
        elif _NUMBER.fullmatch(word) and _near(words, index, _CPU | _MEMORY) in _CPU:
            fields["cpu"] = word
        elif _NUMBER.fullmatch(word) and _near(words, index, _CPU | _MEMORY) in _MEMORY:
            problem = f"'{word}' of memory needs a unit: 512Mi, 1Gi"
        elif word not in _SIZE_WORDS:
            continue
        used.add(index)
    return fields, problem


def _labels(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at}
    annotations = any(w.startswith("annot") for w in words)
    removing = words[at] in ("remove", "delete", "drop", "unset", "unlabel")
    values: dict[str, str | None] = {}
    for index, word in enumerate(raw):
        match = _PAIR.match(word)
        low = words[index]
        if match:
            values[match["key"]] = match["value"].strip("'\"") or None
            used.add(index)
        elif low in _LABEL_WORDS or low in ("to", "the", "from", "on", "with", "a", "an", "of"):
            used.add(index)
        elif removing and low.endswith("-") and len(low) > 1:
            values[word[:-1]] = None
            used.add(index)
    if removing and not values:
        keys = [i for i, w in enumerate(words) if i not in used and i > at]
        if len(keys) >= 2:  # "remove label tier from web": the first word left is the key
            values[raw[keys[0]]] = None
            used.add(keys[0])
    if not values:
        return Asked(
            "labels",
            {},
            _rest(words, used),
            problem="which label? Say e.g. 'label web tier=frontend'",
        )
    field_name = "annotations" if annotations else "labels"
    return Asked(
        "labels", {"field": field_name, "values": values}, _rest(words, used), _kind_of(words)
    )


def _cordon(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at} | {i for i, w in enumerate(words) if w in ("node", "the", "nodes")}
    return Asked(words[at], {}, _rest(words, used), "Node")


def _delete(raw: list[str], words: list[str], at: int, width: int) -> Asked:
    used = {at} | {i for i, w in enumerate(words) if w in ("the", "a", "an")}
    return Asked("delete", {}, _rest(words, used), _kind_of(words))


_LINKS = {"the", "to", "on", "from", "of", "in", "a", "an", "for", "its"}
_ASKED = {
    "scale": _scale, "restart": _restart, "undo": _undo, "pause": _pause, "resume": _pause,
    "image": _image, "env": _env, "resources": _resources, "labels": _labels,
    "cordon": _cordon, "uncordon": _cordon, "delete": _delete,
}  # fmt: skip
_KIND_WORDS = {
    "deployment": "Deployment", "deploy": "Deployment", "deployments": "Deployment",
    "statefulset": "StatefulSet", "sts": "StatefulSet", "daemonset": "DaemonSet",
    "ds": "DaemonSet", "pod": "Pod", "node": "Node", "job": "Job",
}  # fmt: skip


def _kind_of(words: list[str]) -> str:
    for word in words:
        if word in _KIND_WORDS:
            return _KIND_WORDS[word]
    return ""


def _container(words: list[str], used: set[int]) -> str:
    """ "container sidecar" or "the sidecar container": the container named; "" for the only one."""
    for index, word in enumerate(words):
        if word == "container":
            for near in (index + 1, index - 1):
                if (
                    0 <= near < len(words)
                    and near not in used
                    and words[near] not in ("the", "a", "its", "of", "to", "on")
                ):
                    used.add(near)
                    return words[near]
    return ""


def _near(words: list[str], index: int, kinds: set[str]) -> str:
    """The closest word of `kinds` to words[index], or ""."""
    best, distance = "", len(words)
    for other, word in enumerate(words):
        if word in kinds and abs(other - index) < distance:
            best, distance = word, abs(other - index)
    return best


def _memory(number: str, unit: str) -> str:
    """People's memory sizes as Kubernetes writes them: MB and MiB are both read as Mi (as
    people mean it when they size a container), GB as Gi."""
    letter = unit[0].upper()
    return f"{number}{letter}i"
