"""The intent grammar: what a person asks, and which object in the cluster they mean.

`parse` reads a question the way people type it ("why is web failing", "what's wrong with my
web service", "web keeps crashing, why?", "is checkout broken?", "diagnose web in shop",
"shop/web is down") into an `Intent`: its kind, the words that name the subject, and a namespace
hint. It is a word grammar, not a sentence grammar: cue words decide the kind, everything that is
neither a cue nor filler may be the subject, so a paraphrase still parses.

`resolve` then asks the cluster, through the agent's tools (never a client), what exists:
Deployments, StatefulSets and Services (pods only when nothing else matches), and picks the one
object meant. Exact names beat typos (one slip per five letters, a swap
counting once), which beat a word of a hyphenated
name ("checkout" for "checkout-api"). A Deployment and its Service of the same name are one
target (the workload). Two candidates, or none, give a `Clarify` with a question that lists what
exists, so the person answers with a name rather than the agent guessing.

"fix web", "heal web", "repair checkout" are the `heal` intent (the remediation loop); a heal
cue wins over a diagnose cue ("fix the crashing web"). "deploy web to staging", "ship
nginx:1.27 as checkout to staging" are the `deploy` intent, when no heal or diagnose cue is there
("why did the deploy fail" is a diagnosis); its app may not exist yet, so it is not resolved
here (agents/dev_team/deploy.py reads the rest).

Four task kinds name a workload and ask for one piece of work on it: `drift` ("has web drifted
from git?", "reconcile web"), `rightsize` ("right-size web", "are web's requests too big?"),
`probe` ("probe web", "write a prober for checkout") and `resilience` ("make checkout survive a
node failure", "harden web"). Their cues are specific, so they win over
the general ones ("fix web's drift" is drift work), except that a probe cue beside a diagnose
cue is a question about a failing probe ("why is web's readiness probe failing"). A diagnosis
that names no object but asks about "anything" ("is anything broken in shop?") is a `sweep` of
the namespace. The graph routes on `Intent.kind`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agents.runtime.spelling import close
from agents.runtime.toolbox import Toolbox

IntentKind = Literal[
    "diagnose",
    "heal",
    "deploy",
    "drift",
    "rightsize",
    "probe",
    "resilience",
    "change",
    "sweep",
    "unsupported",
]

_WORD = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?:/[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)?")
_DIAGNOSE_STEMS = (
    "fail", "crash", "broke", "break", "diagnos", "debug", "error", "unhealth", "restart",
    "troubleshoot", "wrong", "why", "down", "dead", "dying", "problem", "issue", "investigat",
    "health", "working", "works", "stuck", "flak", "pending", "oom", "crashloop", "oomkill",
    "backoff", "crashloopbackoff",
)  # fmt: skip
_HEAL_STEMS = ("fix", "heal", "repair", "remediat", "mend", "self-heal")  # "fix web", "heal web"
_DEPLOY_WORDS = frozenset(("deploy", "ship", "promote"))  # "deploy web to staging"
_TASK_STEMS: tuple[tuple[IntentKind, tuple[str, ...]], ...] = (
    ("drift", ("drift", "reconcil", "sync", "out-of-sync", "manual", "hand-edit", "edited",
               "hotfix")),
    ("rightsize", ("right-siz", "rightsiz", "resiz", "oversiz", "over-siz", "undersiz",
                   "overprovision", "over-provision", "sizing", "size")),
    ("probe", ("probe", "prober", "probing", "smoke")),
    ("resilience", ("toleran", "tolerat", "resilien", "surviv", "harden", "redundan", "pdb",
                    "node-failure", "highly-available", "spread")),
)  # fmt: skip
_FILLER_WORDS = """
    a an the is are was were be been my our your their its it this that what whats s how
    come does do did going on with of for to at from please can could you tell me us check so
    again still all time right now currently keeps keep kept why service services app apps
    application deployment deploy workload pod pods statefulset sts svc namespace ns wrong
    happening happened up here there and or but just anymore any some why's what's hey hi
    going has have had git write generate create make someone somebody by hand too big add node
    nodes small anything something everything nothing stuff things thing ones one"""
_FILLER = frozenset(_FILLER_WORDS.split())
_ANY = frozenset({"anything", "something", "everything", "all"})
# A Deployment or StatefulSet named like a Service is the thing to diagnose: the workload.
_PREFERENCE = {"Deployment": 0, "StatefulSet": 1, "DaemonSet": 2, "CronJob": 3, "Job": 4,
               "Service": 5, "PersistentVolumeClaim": 6, "ConfigMap": 7, "Pod": 8}  # fmt: skip
Listed = tuple[tuple[str, str], ...]  # (the tool's plural, the kind) of what may be meant
_LISTED: Listed = (("deployments", "Deployment"), ("statefulsets", "StatefulSet"),
                   ("services", "Service"))  # fmt: skip


@dataclass(frozen=True)
class Intent:
    kind: IntentKind
    subject: tuple[str, ...]  # the words that may name the object, in the order asked
    namespace: str | None  # "in shop", "shop/web", or the caller's --namespace
    question: str


@dataclass(frozen=True)
class Target:
    kind: str  # Deployment, StatefulSet, Service or Pod
    name: str
    namespace: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" + (f" in {self.namespace}" if self.namespace else "")


@dataclass(frozen=True)
class Clarify:
    question: str
    options: tuple[Target, ...]  # what the person may pick from (empty: nothing exists)


_API_SERVER = Target("Service", "kubernetes", "default")  # the API server itself, not a workload


def parse(question: str, *, namespace: str | None = None) -> Intent:
    words = _WORD.findall(question.lower().replace("\u2019", "'").replace("'", " "))
    hint = namespace
    subject: list[str] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        if "/" in word:
            hint, word = hint or word.split("/")[0], word.split("/")[1]
        elif word in ("in", "namespace", "ns") and index + 1 < len(words):
            following = words[index + 1]
            if following not in _FILLER:
                hint, skip = hint or following, True
            continue
        if word not in _FILLER and not _is_cue(word) and not _is_heal(word) and not _task(word):
            subject.append(word)
    kind = _kind(words)
    if kind == "diagnose" and not subject and _ANY & set(words):
        kind = "sweep"  # "is anything broken in shop?": the namespace, not one object
    return Intent(kind, tuple(subject), hint, question)


def _kind(words: list[str]) -> IntentKind:
    tasks = {_task(w) for w in words} - {None}
    diagnose = any(_is_cue(w) for w in words)
    for kind in ("drift", "rightsize", "resilience"):
        if kind in tasks:
            return kind
    if "probe" in tasks and not diagnose:
        return "probe"
    if any(_is_heal(w) for w in words):
        return "heal"
    if diagnose:
        return "diagnose"
    if any(w in _DEPLOY_WORDS for w in words):
        return "deploy"
    return "unsupported"


# What may follow a stem in the same word: inflections, never another word ("heal" is not in
# "healthy", "fix" is not in "prefix", "down" is not in "downtime").
_ENDINGS = frozenset(
    [
        "e",
        "s",
        "es",
        "ed",
        "d",
        "ing",
        "er",
        "ers",
        "or",
        "ors",
        "ure",
        "ures",
        "ures",
        "y",
        "ies",
        "ied",
        "ion",
        "ions",
        "ation",
        "ations",
        "ations",
        "n",
        "en",
        "ment",
        "ments",
        "ly",
        "is",
        "ose",
        "osis",
        "oses",
        "able",
        "al",
        "ally",
        "ging",
        "ged",
        "ping",
        "ped",
        "ting",
        "ted",
    ]
) | {""}


def _stem_of(word: str, stem: str) -> bool:
    return word.startswith(stem) and word[len(stem) :] in _ENDINGS


def _task(word: str) -> IntentKind | None:
    for kind, stems in _TASK_STEMS:
        if any(_stem_of(word, stem) for stem in stems):
            return kind
    return None


def _is_heal(word: str) -> bool:
    return any(_stem_of(word, stem) for stem in _HEAL_STEMS)


def _is_cue(word: str) -> bool:
    return word in _STATUS_WORDS or any(_stem_of(word, stem) for stem in _DIAGNOSE_STEMS)


# How a workload is doing, asked without a word of trouble ("is web up?", "status of api",
# "check web"): the same diagnosis, which says it is healthy when it is.
_STATUS_WORDS = frozenset({"status", "state", "running", "up", "alive", "ok", "okay", "fine",
                           "check", "doing", "going", "look", "looks", "looking"})  # fmt: skip


async def resolve(
    intent: Intent, toolbox: Toolbox, *, kinds: Listed = _LISTED, pods: bool = True
) -> Target | Clarify:
    """The one object the intent means among `kinds` (and pods, when nothing else matches),
    or the question to ask instead."""
    known = await _workloads(toolbox, intent.namespace, kinds)
    if intent.namespace and not known:  # "in shop" named no namespace with workloads: drop it
        known = await _workloads(toolbox, None, kinds)
    candidates = _phrases(intent.subject)
    if not candidates:
        return Clarify(f"Which workload do you mean? {_listing(known)}", tuple(known))
    matches = _best(candidates, known)
    if not matches and pods:
        found = await _objects(toolbox, "pods", "Pod", intent.namespace)
        matches = [pod for pod in found if pod.name in candidates]
    targets = _one_per_name(matches)
    if len(targets) == 1:
        return targets[0]
    asked = " ".join(intent.subject)
    if targets:
        options = ", or ".join(str(t) for t in targets)
        return Clarify(
            f"'{asked}' matches more than one object: {options}. Which one do you mean? "
            "Ask again with its namespace, e.g. 'why is "
            f"{targets[0].name} failing in {targets[0].namespace}'.",
            tuple(targets),
        )
    return Clarify(f"I found nothing called '{asked}'. {_listing(known)}", tuple(known))


def _phrases(subject: tuple[str, ...]) -> list[str]:
    """Each word, and adjacent words joined by '-' ("checkout api" may mean checkout-api)."""
    joined = ["-".join(subject[i : i + 2]) for i in range(len(subject) - 1)]
    return [*joined, *subject]


def _best(candidates: list[str], known: list[Target]) -> list[Target]:
    exact = [t for t in known if t.name in candidates]
    if exact:
        return exact
    typos = [t for t in known if any(close(c, t.name) for c in candidates)]
    if typos:
        return typos
    return [t for t in known if any(c in t.name.split("-") for c in candidates)]


def _one_per_name(targets: list[Target]) -> list[Target]:
    chosen: dict[tuple[str, str], Target] = {}
    for target in sorted(targets, key=lambda t: _PREFERENCE.get(t.kind, len(_PREFERENCE))):
        chosen.setdefault((target.namespace, target.name), target)
    return sorted(chosen.values(), key=lambda t: (t.namespace, t.name))


def _listing(known: list[Target]) -> str:
    if not known:
        return "I can see no Deployments, StatefulSets or Services here."
    shown = ", ".join(str(t) for t in _one_per_name(known)[:15])
    more = " (and more)" if len(known) > 15 else ""
    return f"What I can see: {shown}{more}."


async def _workloads(
    toolbox: Toolbox, namespace: str | None, kinds: Listed = _LISTED
) -> list[Target]:
    found: list[Target] = []
    for plural, kind in kinds:
        found.extend(await _objects(toolbox, plural, kind, namespace))
    return found


async def _objects(toolbox: Toolbox, plural: str, kind: str, namespace: str | None) -> list[Target]:
    arguments: dict[str, object] = {"kind": plural, "limit": 500}
    if namespace:
        arguments["namespace"] = namespace
    listed = await toolbox.call("list_resources", **arguments)
    found = [
        Target(kind, str(item["name"]), str(item.get("namespace", "")))
        for item in listed.get("items", [])
        if isinstance(item, dict) and "name" in item
    ]
    return [t for t in found if t != _API_SERVER]
