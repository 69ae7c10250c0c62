"""A request as words: its tokens, which of them a reader has used, and where it applies.

`Sentence.of(text)` splits a request the way people type it: quoted text and commands
("`python report.py`", "-- sleep 3600", "'echo hi'") and cron schedules ("*/5 * * * *") are
taken out whole first, since their words are not the request's words; kubectl-style flags
("--replicas=3", "--image nginx:1.27") become `flags`; the rest are tokens, kept as typed
(`raw`) and lowercased without trailing punctuation (`low`). Readers mark the tokens they read
(`take`), so what is left (`rest`) may name the object.

`subject(sentence)` then reads where the request applies ("in shop", "-n shop", "namespace
shop", "shop/web") and which words are left to name the object, without filler and kind words
(a kind said as "deployment/web" is kept as the kind).

Must not know: any operation, agent or cluster.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from agents.runtime.spelling import slips

_TOKEN = re.compile(r"[A-Za-z0-9_@$+./:=*%-]*[A-Za-z0-9_/+=%*]|[+-]?\d+")
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|(?<![A-Za-z0-9])'([^']*\s[^']*)'(?![A-Za-z0-9])")
_CRON_FIELD = r"(?:\*|\d+)(?:[-,/]\d+)*(?:/\d+)?"
_CRON = re.compile(rf"(?<![\w*/])((?:{_CRON_FIELD}\s+){{4}}{_CRON_FIELD})(?![\w*/])")
_FLAG = re.compile(r"^(?:--(?P<name>[a-z][a-z-]*)|-(?P<short>n))(?:=(?P<value>.*))?$")
QUOTE = "\u27e8q{}\u27e9"  # the token that stands for quoted text number {}
CRON = "\u27e8cron\u27e9"
_SWITCHES = frozenset(
    {
        "force",
        "overwrite",
        "ignore-daemonsets",
        "delete-emptydir-data",
        "dry-run",
        "all",
        "record",
        "rm",
        "stdin",
        "tty",
        "it",
    }
)


def wordset(text: str) -> frozenset[str]:
    """A vocabulary written as one string of words."""
    return frozenset(text.split())


POLITE = wordset(
    """please pls plz kindly hey hi ok okay so now then just kubecrew @kubecrew crew can could
    would will you u i we want wanna need like to let lets let's go ahead and d i'd id must
    should quickly also kubectl k"""
)
QUESTION = wordset(
    """why what whats what's is are was were does do did how which who whom when where has have
    had isn't isnt aren't doesn't didn't may might shall"""
)
FILLER = POLITE | wordset(
    """the a an to of s up down out my our its their it this that service app application
    workload deployment deploy statefulset sts daemonset ds pod pods on for from with again
    please thanks thank right away asap all by at more job node nodes instead back called
    named new one namespace namespaces ns cluster kubernetes k8s may might shall him her them
    his he she they there is are was were be been being has have had do does did get got
    too now today"""
)
# A request said after its context ("node-3 is due for a kernel upgrade, can you drain it?"):
# the words that open the request itself, and the pronouns that point back to the context.
_ASKING = (("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"), ("can", "we"),
           ("could", "we"), ("please",), ("pls",), ("kindly",))  # fmt: skip
PRONOUNS = wordset("it him her them he she they its his their")
_ONLY = (("nothing", "but"), ("no", "one", "but"), ("nobody", "but"), ("none", "but"),
         ("nothing", "except"), ("no", "one", "except"), ("nobody", "except"))  # fmt: skip
KIND_WORDS: dict[str, str] = {
    "deployment": "Deployment",
    "deploy": "Deployment",
    "deployments": "Deployment",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "daemonset": "DaemonSet",
    "daemonsets": "DaemonSet",
    "ds": "DaemonSet",
    "pod": "Pod",
    "node": "Node",
    "job": "Job",
    "cronjob": "CronJob",
    "cronjobs": "CronJob",
    "service": "Service",
    "svc": "Service",
    "configmap": "ConfigMap",
    "cm": "ConfigMap",
    "pvc": "PersistentVolumeClaim",
    "claim": "PersistentVolumeClaim",
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "namespace": "Namespace",
    "ingress": "Ingress",
    "networkpolicy": "NetworkPolicy",
    "netpol": "NetworkPolicy",
    "pdb": "PodDisruptionBudget",
    "poddisruptionbudget": "PodDisruptionBudget",
    "hpa": "HorizontalPodAutoscaler",
    "horizontalpodautoscaler": "HorizontalPodAutoscaler",
    "secret": "Secret",
    "pool": "MachineDeployment",
    "pools": "MachineDeployment",
    "nodepool": "MachineDeployment",
    "nodepools": "MachineDeployment",
    "machinedeployment": "MachineDeployment",
    "machinedeployments": "MachineDeployment",
    "md": "MachineDeployment",
}
# Kind words that name the object only in "kind/name" or right before a name; a bare
# "service" or "app" is also filler ("my web service", "the checkout app").
_LOOSE_KINDS = frozenset({"service", "svc", "node", "claim", "namespace", "ingress", "secret"})
# Names that are nodes' by the way clusters name them: node-3, kind-worker2, ip-10-0-1-23...
_NODE_NAME = re.compile(
    r"^(?:node-?\d+|[a-z0-9-]+-(?:node|worker|control-plane)-?\d*|"
    r"ip-\d+-\d+-\d+-\d+(?:\..+)?|gke-.+-pool-.+)$"
)


@dataclass
class Sentence:
    raw: list[str]  # the tokens as typed
    low: list[str]  # lowercased, without trailing punctuation
    quoted: list[str]  # quoted text and commands, in order (QUOTE.format(i) stands for each)
    flags: dict[str, str]  # kubectl-style flags: "--replicas=3" -> {"replicas": "3"}
    start: int = 0  # the first token after polite words
    used: set[int] = field(default_factory=set)
    cron: str = ""  # a cron schedule written out ("*/5 * * * *")
    focus: int = 0  # where the request itself starts, after its context ("..., can you ...")
    stops: tuple[int, ...] = ()  # tokens a sentence ends after (". ", "? ", "! ")

    @classmethod
    def of(cls, text: str) -> Sentence:
        text = text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
        quoted: list[str] = []
        command = ""
        head, dashes, tail = text.partition(" -- ")
        if dashes:  # kubectl's "-- command args": the rest is the command
            text, command = head, tail.strip()
        cron = _CRON.search(text)
        if cron:
            text = text[: cron.start()] + f" {CRON} " + text[cron.end() :]

        def keep(match: re.Match[str]) -> str:
            quoted.append(next(g for g in match.groups() if g is not None).strip())
            return f" {QUOTE.format(len(quoted) - 1)} "

        text = _QUOTED.sub(keep, text)
        if command:
            quoted.append(command)
            text += f" {QUOTE.format(len(quoted) - 1)}"
        raw, flags, breaks, stops = _tokens(text)
        low = [_spelled(t.lower().rstrip(".,!?;")) for t in raw]
        _say_only(raw, low)
        start = 0
        while start < len(low) and low[start] in POLITE:
            start += 1
        focus = _request_start(low, breaks, start)
        if focus > start:
            _point_back(raw, low, focus, flags)
        return cls(raw, low, quoted, flags, start, set(), cron[1] if cron else "", focus,
                   tuple(stops))  # fmt: skip

    def __len__(self) -> int:
        return len(self.low)

    @property
    def asks(self) -> bool:
        """Whether it starts with a question word ("why did the scale fail?"): never a change."""
        return self.start < len(self.low) and self.low[self.start] in QUESTION

    @property
    def empty(self) -> bool:
        return self.start >= len(self.low)

    def at(self, index: int) -> str:
        return self.low[index] if 0 <= index < len(self.low) else ""

    def has(self, *words: str) -> bool:
        return any(w in self.low for w in words)

    def find(self, words: Iterable[str], *, after: int = -1) -> int:
        """The index of the first of `words` after `after`, or -1."""
        wanted = set(words)
        return next((i for i in range(after + 1, len(self.low)) if self.low[i] in wanted), -1)

    def take(self, *indices: int) -> None:
        self.used.update(i for i in indices if 0 <= i < len(self.low))

    def free(self, index: int) -> bool:
        return 0 <= index < len(self.low) and index not in self.used

    def take_words(self, words: Iterable[str]) -> None:
        """Mark every token that is one of `words` as read (links and filler of a reader)."""
        wanted = set(words)
        self.take(*(i for i, w in enumerate(self.low) if w in wanted))

    def command(self) -> str:
        """The first quoted text or command, or ""."""
        return self.quoted[0] if self.quoted else ""

    def rest(self) -> tuple[str, ...]:
        return tuple(w for i, w in enumerate(self.low) if i not in self.used)

    @property
    def request(self) -> list[str]:
        """The words of the request itself: after its context when context came first."""
        return self.low[self.focus :] if self.focus > self.start else self.low


def _tokens(text: str) -> tuple[list[str], dict[str, str], set[int], list[int]]:
    """The tokens as typed, the kubectl-style flags, and the tokens a clause ends after
    (breaks: , ; : . ? !) and a sentence ends after (stops: . ? !)."""
    raw: list[str] = []
    flags: dict[str, str] = {}
    breaks: set[int] = set()
    stops: list[int] = []
    tokens = [t for t in re.split(r"\s+", text) if t]
    index = 0
    while index < len(tokens):
        token = tokens[index]
        flag = _FLAG.match(token)
        if flag:
            name = "namespace" if flag["short"] else flag["name"]
            value = flag["value"]
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            switch = name in _SWITCHES
            if value is None and following and not following.startswith("-") and not switch:
                value, index = following, index + 1
            flags[name] = (value or "true").strip("'\".,;!?")
        elif token.startswith("\u27e8"):
            raw.append(token.rstrip(".,;!?"))
        else:
            raw.extend(t for t in _TOKEN.findall(token) if t)
        if raw and token[-1:] in ",;:.?!" and not flag:
            breaks.add(len(raw) - 1)  # a clause ends after this token
        ends = token[-1:] in ".?!" and not re.search(r"\.\w+\.?$|^\(?\d+[.)]$", token)
        if raw and ends and not flag:  # not "1." of a list, nor "example.com."
            stops.append(len(raw) - 1)  # and a sentence
        index += 1
    return raw, flags, breaks, stops


def _say_only(raw: list[str], low: list[str]) -> None:
    """ "nothing but web", "no one except web": said as "only web"."""
    for index in range(len(low)):
        for phrase in _ONLY:
            if tuple(low[index : index + len(phrase)]) == phrase:
                low[index + len(phrase) - 1] = raw[index + len(phrase) - 1] = "only"
                for filler in range(index, index + len(phrase) - 1):
                    low[filler] = raw[filler] = "so"


def _request_start(low: list[str], breaks: set[int], start: int) -> int:
    """Where the request starts when context comes first: after "can you", "could you",
    "please" said after the first words ("could she" starts at "she", who is meant); else
    `start`. A marker at the very end ("..., two replicas please") starts nothing."""
    for index in range(start + 1, len(low)):
        for marker in _ASKING:
            end = index + len(marker)
            if tuple(low[index:end]) == marker and end < len(low):
                return end
        if low[index] in ("could", "can", "may") and low[index + 1 : index + 2] in (
            ["she"],
            ["he"],
            ["they"],
        ):
            return index + 1
    return start


_CONTEXT_SKIP = wordset(
    "the a an our my your if when since because as so we i this that nothing nobody no"
)


def _point_back(raw: list[str], low: list[str], focus: int, flags: dict[str, str]) -> None:
    """Pronouns in the request ("drain it", "give him edit rights", "its pods") stand for the
    context's subject, its first word ("node-3 is due for a kernel upgrade"); "there" for the
    place the context names ("the staging team", "in staging")."""
    said = [(raw[i], w) for i, w in enumerate(low[:focus]) if w not in _CONTEXT_SKIP
            and w not in POLITE | QUESTION and re.fullmatch(r"[a-z0-9][-a-z0-9.]*", w)]  # fmt: skip
    # A variable's NAME, else a name with a dash or a digit (node-3, app-config), else the first
    ranked = ([r for r, _ in said if re.fullmatch(r"[A-Z][A-Z0-9_]+", r)]
              + [w for _, w in said if re.search(r"[-0-9]", w)] + [w for _, w in said])  # fmt: skip
    antecedent = ranked[0] if ranked else ""
    if not antecedent or antecedent in PRONOUNS:
        return
    for index in range(focus, len(low)):
        if low[index] in PRONOUNS:
            low[index], raw[index] = antecedent.lower(), antecedent
    if "there" in low[focus:] and "namespace" not in flags:
        place = next(
            (low[i] for i in range(focus) if (i + 1 < focus and low[i + 1] in _PLACES)
             or (i > 0 and low[i - 1] in ("in", "to", "into") and low[i] not in _CONTEXT_SKIP)),
            "",
        )  # fmt: skip
        if place:
            flags["namespace"] = place


_PLACES = wordset("team namespace env environment cluster")


# The request's own words people misspell ("deploymnet", "restrat", "statefullset"): one slip (a
# swap counts once) in a word of six letters or more is read as the word. Object names are
# never corrected here: they are matched against the cluster, which knows them.
VOCABULARY = frozenset(
    (
        "deployment", "deployments", "statefulset", "statefulsets", "daemonset", "daemonsets",
        "cronjob", "cronjobs", "configmap", "configmaps", "namespace", "namespaces", "service",
        "services", "ingress", "replicas", "replica", "readiness", "liveness", "startup",
        "autoscale", "autoscaler", "rollback", "restart", "expose", "cordon", "uncordon",
        "tolerate", "toleration", "network", "policy", "networkpolicy", "persistentvolumeclaim",
        "container", "containers", "selector",
    )
)  # fmt: skip


def _spelled(word: str) -> str:
    if len(word) < 6 or word in VOCABULARY or not word.isalpha():
        return word
    for known in VOCABULARY:
        if abs(len(known) - len(word)) <= 1 and slips(word, known) <= 1:
            return known
    return word


def _nodeish(word: str) -> bool:
    """A node's name with a slip in "node" ("nod-2", "ndoe-3")."""
    prefix, dash, number = word.partition("-")
    return bool(dash) and number.isdigit() and prefix != "node" and slips(prefix, "node") <= 1


def kind_of(words: Iterable[str], *, loose: bool = False) -> str:
    """The first kind the words name ("deployment" -> Deployment), or ""; a loose kind word
    ("service", "node") counts only when `loose`."""
    for word in words:
        if word in KIND_WORDS and (loose or word not in _LOOSE_KINDS):
            return KIND_WORDS[word]
    return ""


def subject(sentence: Sentence) -> tuple[tuple[str, ...], str | None, str]:
    """The words left that may name the object, the namespace the words name, and the kind a
    "kind/name" word names."""
    first = sentence.focus if sentence.focus > sentence.start else 0
    words = [w for i, w in enumerate(sentence.low) if i not in sentence.used and i >= first]
    if first and not any(w not in FILLER for w in words):  # the request named nothing itself
        words = [w for i, w in enumerate(sentence.low) if i not in sentence.used]
    namespace = sentence.flags.get("namespace")
    kind = ""
    left: list[str] = []
    skip = False
    for index, word in enumerate(words):
        if skip:
            skip = False
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("in", "namespace", "ns") and following:
            if following not in FILLER and following not in KIND_WORDS:
                namespace, skip = namespace or following, True
            continue
        if "/" in word and not word.startswith("/"):
            left_part, _, right = word.partition("/")
            if left_part in KIND_WORDS:
                kind = kind or KIND_WORDS[left_part]
            else:
                namespace = namespace or left_part
            word = right
        named = index > 0 and words[index - 1] in ("named", "called")  # "the deployment named app"
        kind_word = word in KIND_WORDS and not named  # a kind said beside the name
        if (
            word
            and (named or word not in FILLER)
            and not kind_word
            and not word.startswith("\u27e8")
        ):
            left.append(word)
    if not kind and any(_NODE_NAME.match(w) or _nodeish(w) for w in left):
        kind = "Node"
    return tuple(left), namespace, kind
