"""Reading a question: which family it belongs to and its parameters, from its words.

`read(text, namespace=...)` is a word grammar, not a list of sentences. A text that opens with
"why" (a diagnosis) or with a command verb ("scale web to 3", "fix web", "restart api") is no
question of these families: None, so the agent tries its other intents. Otherwise the readers
are tried from the most specific cue to the most general:

- access and policy (`permissions`): "who can delete pods", "what can alice do", "can bob
  scale deployments?", "may I scale web to 1?";
- the cluster at a glance: an overview, a summary, the cluster's state or health ("how is the
  cluster doing?"); about one namespace, what runs there;
- events: "events", "warnings" ("show me the warnings in shop", "events of web in the last
  hour"), of an object when one is named;
- history: changed, happened, history, recent, rollout revisions, "who changed ...";
- capacity: how full, pressure, free, headroom, or ranking the nodes;
- inventory: images, the heaviest pods, what workloads lack (limits, probes, a PDB) or do (run
  as root, use :latest), restarts, counts and lists of a kind, in a state.

The namespace comes from the words ("in shop", "-n shop", "the shop namespace", "shop/web"),
else from the conversation (`namespace`); "everywhere", "all namespaces" or "across the
cluster" mean every namespace. Names stay words here: the answer resolves them against what
exists, typos included.

Must not know: the cluster, the servers, any agent's code.
"""

from __future__ import annotations

import re

from agents.runtime.questions import vocabulary as v
from agents.runtime.questions.asked import (
    MAX_TOP,
    TOP,
    Capacity,
    Check,
    Events,
    History,
    HistoryTopic,
    Inventory,
    InventoryTopic,
    Logs,
    Metric,
    Overview,
    Question,
    State,
)
from agents.runtime.questions.permissions import read_permission
from agents.runtime.questions.words import (
    FILLER,
    QUESTION_WORDS,
    READ_VERBS,
    Said,
    Words,
    among,
    is_label,
    lookup,
    number,
    tokens,
)

_HISTORY_DROP = (
    v.HISTORY
    | v.ROLLOUT
    | v.PAST_CHANGES
    | QUESTION_WORDS
    | READ_VERBS
    | {"what", "who", "ago", "since", "last", "past", "today", "yesterday", "tonight"}
    | {"morning", "afternoon", "evening", "night", "lunch", "noon", "midnight", "weekend"}
)
_CHECKS: dict[str, Check] = {
    "limits": "limits",
    "requests": "requests",
    "probes": "probes",
    "readiness": "readiness",
    "liveness": "liveness",
    "startup": "startup",
    "pdb": "pdb",
}
_METRICS: dict[str, Metric] = {"cpu": "cpu", "memory": "memory"}
_STATES: dict[str, State] = {
    "running": "running",
    "pending": "pending",
    "failed": "failed",
    "succeeded": "succeeded",
    "ready": "ready",
    "not-ready": "not-ready",
    "crashing": "crashing",
}


def read(text: str, *, namespace: str | None) -> Question | None:
    """The question `text` asks, or None when it asks none of these families."""
    words = Words.of(text)
    first = words.first()
    if not first or first == "why" or _commanding(words, first):
        return None
    if (
        any(w in v.DIAGNOSIS for w in words.all)
        and not words.has("which", "how", "who")
        and not words.has(*_LOG_WORDS)
    ):
        return None  # "what's wrong with web": a diagnosis, the agent's own; its logs are read
    named, said = words.namespace()
    asked = Said(words, text, named if said else namespace, said)
    for reader in (read_permission, _overview, _logs, _events, _history, _capacity, _inventory):
        question = reader(asked)
        if question is not None:
            return question
    return None


def _commanding(words: Words, first: str) -> bool:
    if first == "rollout":  # "rollout history of web" asks; "rollout restart web" commands
        return not words.has("history", "status", "revisions")
    if first == "give" and words.all[1:2] in (["me"], ["us"]) and words.holds(_REPORTS):
        return False  # "give me an overview", "give us the events of web": a report asked for
    return first in v.COMMANDS


_REPORTS = frozenset({"overview", "summary", "rundown", "report", "picture", "status", "events",
                      "warnings", "list", "breakdown", "update"})  # fmt: skip


# -- the cluster at a glance -----------------------------------------------------------------

_GLANCE = frozenset({"overview", "summary", "summarize", "summarise", "rundown", "glance"})
_STANDING = frozenset({"status", "state", "health", "healthy", "doing", "look", "looking",
                       "shape", "condition"})  # fmt: skip
_THE_CLUSTER = frozenset({"cluster", "k8s", "kubernetes"})
# The Cluster Operator's own subjects: "the cluster upgrade's status" is its report, not this.
_OPERATORS = frozenset({"upgrade", "upgrading", "patch", "patching", "version", "versions",
                        "drain", "maintenance", "cost", "costs", "clusters", "fleet", "pool",
                        "pools", "nodes", "node"})  # fmt: skip


def _overview(asked: Said) -> Question | None:
    words = asked.words
    said = set(words.all)
    if said & _OPERATORS or said & v.IMAGES or _check(words) is not None or _kind(words):
        return None  # "a summary of the pods in shop" lists pods
    glance = bool(said & _GLANCE) or words.phrase("big", "picture") >= 0
    standing = bool(said & _THE_CLUSTER) and bool(said & _STANDING)
    if not (glance or standing):
        return None
    if asked.said and asked.namespace:  # "an overview of shop": what runs there
        return _listing(asked, "list", "workloads")
    return Overview(asked.text)


# -- events ----------------------------------------------------------------------------------

_EVENT_WORDS = frozenset({"event", "events", "warning", "warnings"})
_NOT_EVENT_NAMES = _EVENT_WORDS | _HISTORY_DROP | frozenset(
    {"latest", "newest", "new", "recent", "last", "only", "type", "types", "reported", "about",
     "involving", "related", "regarding", "concerning", "happened", "seen", "got", "get",
     "kubectl", "describe", "sorted", "sort", "by", "time", "oldest"}
)  # fmt: skip


def _event_word(word: str) -> bool:
    """ "events", "warnings", misspelt too ("evnets")."""
    return word in _EVENT_WORDS or bool(
        lookup(word, _WARNINGS) or (len(word) > 3 and lookup(word, v.KINDS) == "events")
    )


_WARNINGS = {"warning": "warning", "warnings": "warning"}


def _events(asked: Said) -> Events | None:
    words = asked.words
    if not any(_event_word(w) for w in words.all):
        return None
    warnings = any(lookup(w, _WARNINGS) for w in words.all)
    window = words.window()
    kind = ""
    names: list[str] = []
    for index, word in enumerate(words.all):
        if index in words.used or word in FILLER or word in _NOT_EVENT_NAMES:
            continue
        if number(word) is not None or _event_word(word):
            continue
        found = lookup(word, v.KINDS) if len(word) > 3 or word in v.KINDS else None
        if found:
            kind = kind or found
        elif is_label(name := _named(word).rpartition("/")[2]):  # shop/api names api
            names.append(name)
    return Events(
        asked.text,
        asked.namespace,
        name=names[0] if len(names) == 1 else "",
        kind="" if kind == "events" else kind,
        warnings=warnings,
        since_seconds=window[0] if window else None,
        window=window[1] if window else "",
        count=_count(words),
        said_namespace=asked.said,
    )


# -- logs ------------------------------------------------------------------------------------

_LOG_WORDS = frozenset({"log", "logs", "logfile", "output", "stdout", "stderr"})
_PREVIOUS = frozenset({"previous", "crashed", "prior", "earlier", "before", "restarted", "-p"})
_ERRORS = {"error": "error", "errors": "error", "exception": "exception",
           "exceptions": "exception", "failure": "fail", "failures": "fail",
           "panic": "panic", "panics": "panic", "fatal": "fatal"}  # fmt: skip
_NOT_LOG_NAMES = _LOG_WORDS | _HISTORY_DROP | _PREVIOUS | frozenset(_ERRORS) | frozenset(
    {"logged", "logging", "been"}
) | frozenset(
    {"tail", "follow", "line", "lines", "container", "pod", "pods", "its", "their", "only",
     "any", "some", "lately", "run", "instance", "crash", "crashes", "restart", "latest",
     "recent", "last", "first", "print", "dump", "fetch", "grab", "pull", "-c", "-n", "kubectl",
     "there", "them", "got", "produced", "wrote", "written", "saying", "says", "said"}
)  # fmt: skip


def _logs(asked: Said) -> Logs | None:
    """ "show me the logs of web", "last 50 lines of api's logs in shop", "errors in the logs of
    web", "logs of the sidecar container of web", "the previous logs of api" (before it
    crashed), "web's logs from the last 10 minutes"."""
    words = asked.words
    wrote = words.has("logged") or words.phrase("been", "logging") >= 0  # "what has web logged"
    if not (words.has(*_LOG_WORDS) or wrote) or (
        words.has("output") and not words.has("log", "logs")
    ):
        return None
    window = words.window()
    container, lines, names = "", 30, []
    for index, word in enumerate(words.all):
        if index in words.used or word in FILLER:
            continue
        before = words.all[index - 1] if index else ""
        after = words.all[index + 1] if index + 1 < len(words.all) else ""
        if is_label(word) and (
            before in ("container", "-c") or (after == "container" and word not in _NOT_LOG_NAMES)
        ):
            container = word
        elif (count := number(word)) is not None and 0 < count <= 1000:
            lines = (
                int(count) if after in ("line", "lines") or before in ("last", "tail") else lines
            )
        elif word not in _NOT_LOG_NAMES and is_label(name := _named(word).rpartition("/")[2]):
            names.append(name.removesuffix("'s"))
    errors = next((_ERRORS[w] for w in words.all if w in _ERRORS), "")
    namespace, said = asked.namespace, asked.said
    if (
        said
        and namespace
        and re.search(
            rf"\b(?:in|from) {re.escape(namespace)} (?:logs?|output)\b", " ".join(words.all)
        )
    ):  # "errors in api logs": api is whose logs, not a namespace; "... in shop" may follow
        whose = namespace
        names, namespace, said = [whose, *names], None, False
        for index, word in enumerate(words.all[:-1]):
            following = words.all[index + 1]
            if word in ("in", "-n") and following != whose and following in names:
                names.remove(following)
                namespace, said = following, True
    return Logs(
        asked.text,
        namespace,
        name=next((n for n in names if n != container), ""),
        container=container,
        previous=words.has(*_PREVIOUS) and not words.has("minutes", "hours", "seconds"),
        lines=lines,
        grep=errors,
        since_seconds=window[0] if window else None,
        window=window[1] if window else "",
        said_namespace=said,
    )


# -- history ---------------------------------------------------------------------------------


def _history(asked: Said) -> History | None:
    words = asked.words
    past = words.has("who") and any(w in v.PAST_CHANGES for w in words.all)
    if not past and not any(_cue(w) for w in words.all):
        return None
    window = words.window()
    seconds, said, midnight = window or (86_400, "the last day", False)
    topic: HistoryTopic = "rollout" if any(w in v.ROLLOUT for w in words.all) else "changes"
    names, kind = _names(words)
    names = _in_cue_clauses(names, asked.text)
    return History(
        topic,
        asked.text,
        asked.namespace,
        tuple(names[:3]),
        kind,
        seconds,
        midnight,
        said,
        asked.said,
    )


_HISTORY_CUES = v.HISTORY | v.ROLLOUT


def _cue(word: str) -> bool:
    """A history cue, even misspelt ("recnt", "chnaged")."""
    return among(word, _HISTORY_CUES)


def _in_cue_clauses(names: list[str], text: str) -> list[str]:
    """The names said in a clause that asks about change: "something feels different in
    staging, what changed there?" names nothing; the preamble is colour, not an object."""
    clauses = [tokens(part) for part in re.split(r"[,;.!?]+\s", text + " ")]
    asking = {
        w.rpartition("/")[2] for clause in clauses if any(_cue(w) for w in clause) for w in clause
    }
    if asking & _POINTING_BACK:  # "web is slow. what changed to it?": it is web
        return names
    return [name for name in names if name in asking]


_POINTING_BACK = frozenset({"it", "its", "them", "they", "their"})


def _names(words: Words) -> tuple[list[str], str]:
    """The words that may name an object, and the kind the words say it is."""
    kind = ""
    names: list[str] = []
    for index, word in enumerate(words.all):
        if index in words.used or word in FILLER or word in _HISTORY_DROP or _cue(word):
            continue
        if number(word) is not None:
            continue
        found = lookup(word, v.KINDS) if len(word) > 3 or word in v.KINDS else None
        if found:
            kind = kind or found
        else:
            names.append(word.rpartition("/")[2])
    return names, kind


# -- capacity --------------------------------------------------------------------------------


def _capacity(asked: Said) -> Capacity | None:
    words = asked.words
    said = set(words.all)
    nodes = bool(words.holds(v.NODE_WORDS))
    metric = _metric(words)
    down = words.phrase("not", "ready") >= 0 or "down" in said
    pressure = words.holds(v.PRESSURE)
    if (pressure or down) and (nodes or pressure & {"pressure", "pressured"}):
        return Capacity("pressure", asked.text)
    if said & (v.RANKING | v.FEWEST) and words.holds(frozenset({"node", "nodes"})):
        measure: Metric = metric or ("cpu" if "busiest" in said else "pods")
        return Capacity("rank", asked.text, measure, most=not said & v.FEWEST, count=_count(words))
    if words.holds(v.FREE) and (nodes or metric or words.phrase("how", "much") >= 0):
        return Capacity("free", asked.text, metric)
    if words.holds(v.FULLNESS) and (nodes or metric or not said & set(v.KINDS)):
        return Capacity("fullness", asked.text, metric)
    return None


def _metric(words: Words) -> Metric:
    for word in words.all:
        found = _METRICS.get(lookup(word, v.METRICS) or "")
        if found:
            return found
    return ""


# -- inventory -------------------------------------------------------------------------------


_CLUSTERS_OWN = frozenset({"control", "plane", "kubelet", "kubelets", "api", "apiserver", "we"})


def _inventory(asked: Said) -> Inventory | None:
    words = asked.words
    said = set(words.all)
    kind = _kind(words)
    count = _count(words)
    check = _check(words)
    if check is not None:
        return _listing(asked, "check", _workload_kind(kind), check=check, count=count)
    if said & v.IMAGES or any(lookup(w, {"images": "images"}) for w in words.all):
        return _listing(asked, "images", kind or "pods", count=count, owner=_owner(words))
    if said & {"version", "versions"} and not said & (
        _OPERATORS - {"version", "versions"} | _THE_CLUSTER | _CLUSTERS_OWN
    ):
        # "what version of nginx is web running?": its image's tag (the cluster's own version
        # is the Cluster Operator's); "of nginx" names the image, not whose pods
        for index, word in enumerate(words.all[:-2]):
            if word in ("version", "versions") and words.all[index + 1] == "of":
                words.used.update({index + 1, index + 2})
        return _listing(asked, "images", kind or "pods", count=count, owner=_owner(words))
    metric = _metric(words)
    if metric and (said & v.RANKING or words.phrase("how", "much") >= 0) and kind != "nodes":
        return _listing(asked, "top", "pods", metric=metric, count=count)
    if said & v.RESTARTS and (said & (v.RANKING | {"which", "what"}) or kind == "pods"):
        return _listing(asked, "restarts", "pods", count=count)
    if not kind and _what_runs(words):
        return _listing(asked, "list", "workloads", count=count)
    if not kind or kind in ("containers", "events"):
        return None
    counting = (
        words.phrase("how", "many") >= 0
        or words.phrase("number", "of") >= 0
        or (words.first() == "count")
    )
    topic: InventoryTopic = "count" if counting else "list"
    owner = _owner(words) if kind == "pods" else ""
    return _listing(asked, topic, kind, state=_state(words), count=count, owner=owner)


_RUNNING = frozenset({"running", "runs", "run", "deployed", "live", "everything", "anything"})
_LOOKING = frozenset({"what", "which", "show", "list", "anything"})


def _what_runs(words: Words) -> bool:
    """ "what is running in shop?", "what's in shop", "show me everything in shop": the
    workloads there, whatever their state."""
    rest = words.rest()
    return words.first() in _LOOKING and (
        (bool(set(words.all) & _RUNNING) and set(rest) <= _RUNNING | _LOOKING)
        or rest in ([], ["what"])
    )


# Words that never name the workload whose pods are asked about: the rest of such a question.
_NOT_OWNERS = (
    QUESTION_WORDS | READ_VERBS | v.COUNTING | v.NEGATIONS | v.RANKING | set(v.STATES) | v.IMAGES
    | set(v.KINDS) | {"there", "total", "altogether", "right", "currently", "belong", "belongs",
                      "belonging", "owned", "run", "runs", "live", "living", "up", "left", "got",
                      "use", "uses", "used", "using", "version", "versions"}
    | {"sort", "sorted", "order", "ordered", "by", "age", "status", "statuses", "names", "ip",
       "ips", "labels", "wide", "details", "detail", "info", "their", "with"}
    | _GLANCE | _REPORTS
)  # fmt: skip


def _owner(words: Words) -> str:
    """The workload whose pods are asked about: the one word left that names nothing else
    ("how many pods does the frontend have", "web's pods", "pods belonging to api"); "" when
    none is left, or more than one (then the question is about all the pods)."""
    left = [
        _named(w)
        for w in words.rest()
        if w not in _NOT_OWNERS and number(w) is None and not lookup(w, {"images": "images"})
    ]  # "imags in shpo" names no workload
    return left[0] if len(left) == 1 and is_label(left[0]) else ""


def _named(word: str) -> str:
    """`deploy/web` names web."""
    kind, slash, name = word.partition("/")
    return name if slash and kind in v.KINDS else word


def _listing(
    asked: Said,
    topic: InventoryTopic,
    kind: str,
    *,
    check: Check | None = None,
    metric: Metric = "",
    state: State = "",
    count: int = TOP,
    owner: str = "",
) -> Inventory:
    return Inventory(
        topic, asked.text, asked.namespace, kind, check, metric, state, count, asked.said, owner
    )


def _kind(words: Words) -> str:
    """The kind the words name; two workload kinds ("deployments and statefulsets") are the
    workloads."""
    found: list[str] = []
    for index, word in enumerate(words.all):
        if index in words.used:
            continue
        kind = lookup(word, v.KINDS) if len(word) > 3 or word in v.KINDS else None
        if kind and kind != "pdb" and kind not in found:
            found.append(kind)
    if len(set(found) & {*v.WORKLOADS, "workloads"}) > 1:
        return "workloads"
    return found[0] if found else ""


def _workload_kind(kind: str) -> str:
    return kind if kind in v.WORKLOADS else "workloads"


def _check(words: Words) -> Check | None:
    """What workloads are asked to lack ("no limits", "without a readiness probe", "don't have
    a PDB") or do ("run as root", "use :latest", "privileged")."""
    if words.phrase("as", "root") >= 0 or words.has("root", "rootful"):
        return "root"
    if words.has("privileged"):
        return "privileged"
    if words.has(":latest", "latest", "untagged"):
        return "latest"
    said = words.all
    negated = next((i for i, w in enumerate(said) if w in v.NEGATIONS), -1)
    if negated < 0:
        return None
    found = [c for w in said[negated + 1 :] if (c := _CHECKS.get(lookup(w, v.CHECKS) or ""))]
    specific = [c for c in found if c in ("readiness", "liveness", "startup")]
    return (specific or found or [None])[0]


def _state(words: Words) -> State:
    if words.phrase("not", "ready") >= 0:
        return "not-ready"
    if words.phrase("crash", "loop") >= 0:
        return "crashing"
    for word in words.all:
        found = _STATES.get(v.STATES.get(word, ""))
        if found:
            return found
    return ""


def _count(words: Words) -> int:
    """The number of rows asked for ("top 5", "the 3 biggest", "first ten"), else TOP."""
    for index, word in enumerate(words.all):
        count = number(word)
        if count is None or not 0 < count <= MAX_TOP:
            continue
        before = words.all[index - 1] if index else ""
        after = words.all[index + 1] if index + 1 < len(words.all) else ""
        if before in ("top", "first", "the", "bottom") or (
            after in v.RANKING | v.FEWEST or lookup(after, v.KINDS)
        ):
            return count
    return TOP
