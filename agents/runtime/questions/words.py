"""The words questions are made of: tokens, the vocabulary with its synonyms, numbers, time
windows and the namespace a question names.

`Words` is a question as lower-case tokens (contractions opened: "don't" is "do not", "what's"
is "what is"; possessives dropped: "web's" is "web") with the helpers the grammar reads it by.
Vocabulary nouns are looked up with a little tolerance (`lookup`: plurals, one slip in a word
of five letters or more, "memroy", "deploymnets"), never function words, so a typo in a noun
still reads and "no" never becomes "node".

Must not know: the cluster, the servers, any agent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.runtime import numbers
from agents.runtime.spelling import slips


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CONTRACTIONS = (
    (r"\bcan't\b|\bcannot\b", "can not"),
    (r"\bwon't\b", "will not"),
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'m\b", " am"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
    (r"\b(what|who|where|how|that|it|there|here|which)'s\b", r"\1 is"),
    (r"'s\b", ""),
    (r"s'(?=\s|$)", "s"),
)
_TOKEN = re.compile(r"--?[a-z]+|:[a-z0-9][a-z0-9._-]*|[a-z0-9_@*][a-z0-9_:@*./-]*")

NUMBERS = {**numbers.WORDS, "few": 3}
# Words that carry no meaning for the grammar: skipped when looking for names and subjects.
FILLER = _words("""
    the a an of to for me us my our your their its it this that these those please pls plz
    hey hi ok okay so just kindly quickly now right currently there here and or but with
    by on at from into all any some every each be been being is are was were am do does did
    have has had kubecrew crew thanks thank you would will could can may might should shall
    let tell show give list know like want wanna need i we i'd id about than then too very
    also really actually exactly please in namespace ns cluster clusters whole entire
    k8s kubernetes one ones thing things stuff currently anything something everything
    nothing anyone someone going
""")
POLITE = _words(
    "please pls plz hey hi ok okay so just kindly quickly kubecrew @kubecrew crew hello"
)
QUESTION_WORDS = _words(
    "what which who whom how when where is are was were do does did can could may might would "
    "will shall am have has any"
)
READ_VERBS = _words(
    "list show display give tell count find print enumerate report name summarize summarise "
    "get check audit see"
)
ALL_NAMESPACES = frozenset({"everywhere", "cluster-wide", "clusterwide", "all-namespaces"})
_TIME_UNITS = {
    "second": 1,
    "sec": 1,
    "s": 1,
    "minute": 60,
    "min": 60,
    "m": 60,
    "hour": 3600,
    "hr": 3600,
    "h": 3600,
    "day": 86_400,
    "d": 86_400,
    "week": 604_800,
    "wk": 604_800,
    "w": 604_800,
}
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


# Two words people write for one: read as that one.
_COMPOUNDS = {
    ("health", "check"): "healthcheck", ("health", "checks"): "healthchecks",
    ("service", "account"): "serviceaccount", ("service", "accounts"): "serviceaccounts",
    ("disruption", "budget"): "pdb", ("disruption", "budgets"): "pdb",
    ("port", "forward"): "port-forward", ("stateful", "sets"): "statefulsets",
    ("stateful", "set"): "statefulset", ("daemon", "sets"): "daemonsets",
    ("daemon", "set"): "daemonset", ("config", "maps"): "configmaps",
    ("config", "map"): "configmap", ("cron", "jobs"): "cronjobs", ("cron", "job"): "cronjob",
}  # fmt: skip


def tokens(text: str) -> list[str]:
    lowered = text.lower().replace("\u2019", "'").replace("`", " ")
    for pattern, replacement in _CONTRACTIONS:
        lowered = re.sub(pattern, replacement, lowered)
    found: list[str] = []
    for token in _TOKEN.findall(lowered):
        if token.startswith("-") and token not in ("-n", "--namespace"):
            token = token.lstrip("-")
        token = token.rstrip(".:/-") if len(token) > 1 else token
        if token and found and (found[-1], token) in _COMPOUNDS:
            found[-1] = _COMPOUNDS[found[-1], token]
        elif token:
            found.append(token)
    return found


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def lookup(word: str, vocabulary: dict[str, str]) -> str | None:
    """The meaning of `word` in `vocabulary`: exact, as a singular, or with one slip when
    both are at least five letters long."""
    for form in (word, singular(word)):
        if form in vocabulary:
            return vocabulary[form]
    if len(word) < 5 or not word.isalpha():
        return None
    close = [v for k, v in vocabulary.items() if len(k) >= 5 and slips(word, k) <= 1]
    close += [v for k, v in vocabulary.items() if len(k) >= 5 and slips(singular(word), k) <= 1]
    return close[0] if close and len(set(close)) == 1 else None


def among(word: str, vocabulary: frozenset[str]) -> bool:
    """`word` is one of `vocabulary`, even misspelt ("presure"), but not a shorter word a
    member inflects ("update" is not "updated")."""
    if word in vocabulary:
        return True
    if any(member.startswith(word) for member in vocabulary):
        return False
    return lookup(word, dict.fromkeys(vocabulary, "")) is not None


def number(word: str) -> int | None:
    if word.isdigit() and len(word) < 7:
        return int(word)
    return NUMBERS.get(word)


@dataclass
class Words:
    """A question's tokens, and what has been taken from them (namespace, window)."""

    all: list[str]
    used: set[int]
    from_slash: bool = False  # the namespace came from a "namespace/name" word

    @classmethod
    def of(cls, text: str) -> Words:
        return cls(tokens(text), set())

    def __contains__(self, word: object) -> bool:
        return word in self.all

    def has(self, *words: str) -> bool:
        return any(w in self.all for w in words)

    def holds(self, vocabulary: frozenset[str]) -> set[str]:
        """The words of the question that belong to `vocabulary` (see `among`)."""
        return {w for w in self.all if among(w, vocabulary)}

    def phrase(self, *phrase: str) -> int:
        """Where the words of `phrase` stand together, or -1."""
        size = len(phrase)
        for index in range(len(self.all) - size + 1):
            if tuple(self.all[index : index + size]) == phrase:
                return index
        return -1

    def first(self) -> str:
        """The first word that is not a greeting or a politeness ("hey", "please")."""
        for index, word in enumerate(self.all):
            if word not in POLITE and not (
                word in ("can", "could", "would", "will")
                and self.all[index + 1 : index + 2] == ["you"]
            ):
                if word == "you" and index and self.all[index - 1] in ("can", "could", "would"):
                    continue
                return word
        return ""

    def rest(self) -> list[str]:
        """The words not taken yet, without filler: what may name an object or a subject."""
        return [w for i, w in enumerate(self.all) if i not in self.used and w not in FILLER]

    def namespace(self) -> tuple[str | None, bool]:
        """The namespace the words name ("in shop", "-n shop", "namespace shop", "in the shop
        namespace", "shop/web"), marking its words used; (None, True) for "all namespaces",
        "everywhere" or "across the cluster"; (None, False) when they name none."""
        if self._everywhere():
            return None, True
        for index in range(len(self.all)):
            found = self._named_at(index)
            if found:
                return found, True
        for word in self.all:
            space, slash, name = word.partition("/")
            if slash and is_label(space) and is_label(name) and space not in _KIND_PREFIXES:
                self.from_slash = True
                return space, True
        return None, False

    def _everywhere(self) -> bool:
        words = self.all
        for index, word in enumerate(words):
            following = words[index + 1 : index + 2]
            if word in ALL_NAMESPACES or (word == "all" and following in (["namespaces"], ["ns"])):
                self.used.update({index, index + 1})
                return True
            if word in ("across", "in", "over") and words[index + 1 : index + 3] in (
                ["the", "cluster"],
                ["the", "whole"],
                ["the", "entire"],
                ["every", "namespace"],
            ):
                self.used.update({index, index + 1, index + 2})
                return True
        return False

    def _named_at(self, index: int) -> str:
        words = self.all
        word = words[index]
        following, after = [*words[index + 1 : index + 3], "", ""][:2]
        if word in ("-n", "--namespace", "namespace", "ns") and is_label(following):
            self.used.update({index, index + 1})
            return following
        if (
            word in ("in", "from", "inside", "within")
            and is_label(following)
            and (following not in _NOT_NAMESPACES)
            and following not in ("namespace", "ns")  # "in namespace shop": read at "namespace"
        ):
            self.used.update({index, index + 1})
            return following
        if (
            word in ("in", "from")
            and following == "the"
            and is_label(after)
            and (words[index + 3 : index + 4] in (["namespace"], ["ns"]))
        ):
            self.used.update(range(index, index + 4))
            return after
        if (
            following in ("namespace", "ns")
            and is_label(word)
            and word not in _NOT_NAMESPACES
            and word not in ("in", "from", "inside", "within")
        ):
            self.used.update({index, index + 1})
            return word
        return ""

    def window(self) -> tuple[int, str, bool] | None:
        """The time window the words name: (seconds, in words, since midnight), or None.
        "today", "yesterday", "the last hour", "past 30 minutes", "last 2h", "within 3
        days", "2 hours ago"."""
        words = self.all
        if "today" in words:
            self.used.add(words.index("today"))
            return 86_400, "today", True
        if "yesterday" in words:
            self.used.add(words.index("yesterday"))
            return 2 * 86_400, "since yesterday began", False
        for index, word in enumerate(words):
            after = words[index + 1 : index + 3]
            if word in ("last", "past", "previous") and after:
                found = _amount(after) or _amount(["1", *after[:1]])
            elif word in ("within", "over", "for") or (after[1:2] == ["ago"]):
                found = _amount(
                    words[index + 1 : index + 3] if word in _LEADS else words[index : index + 2]
                )
            else:
                continue
            if found is None:
                continue
            seconds, unit = found
            self.used.update(range(max(0, index - 2), index + 3))
            count = seconds // _TIME_UNITS[unit]
            said = f"the last {count} {unit}s" if count != 1 else f"the last {unit}"
            return seconds, said, False
        return None


@dataclass
class Said:
    """A question's words with the namespace it applies to (from the words or the
    conversation), as each family's reader takes them."""

    words: Words
    text: str
    namespace: str | None
    said: bool  # the namespace came from the words


_LEADS = frozenset({"within", "over", "for"})


def _amount(words: list[str]) -> tuple[int, str] | None:
    """(seconds, unit name) of "2 hours", "2h", "a day", "1 week"; None otherwise."""
    if not words:
        return None
    joined = re.fullmatch(r"(\d+)([a-z]+)", words[0])
    if joined:
        count, unit = int(joined[1]), joined[2]
    elif len(words) > 1:
        count = 1 if words[0] in ("a", "an") else number(words[0])  # type: ignore[assignment]
        unit = words[1]
    else:
        return None
    seconds = _unit(unit)
    if count is None or seconds is None:
        return None
    return count * seconds, _UNIT_NAMES[seconds]


_UNIT_NAMES = {1: "second", 60: "minute", 3600: "hour", 86_400: "day", 604_800: "week"}
_KIND_PREFIXES = _words(
    "deployment deploy deployments pod pods po node nodes sts statefulset daemonset ds svc "
    "service job cronjob rs replicaset user group sa serviceaccount"
)
# Words after "in" that are never a namespace: "in the last hour", "in use", "in total".
_NOT_NAMESPACES = _words(
    "the a an last past use total memory cpu it them there here order my our your this that "
    "each every all any one two three"
)


def is_label(word: str) -> bool:
    return bool(word) and len(word) <= 63 and bool(_DNS_LABEL.match(word))


def _unit(word: str) -> int | None:
    if not word:
        return None
    return (
        _TIME_UNITS.get(word)
        or _TIME_UNITS.get(singular(word))
        or (_TIME_UNITS.get(word[:-1]) if word.endswith("s") and len(word) > 2 else None)
    )
