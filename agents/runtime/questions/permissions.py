"""Reading the questions about what someone may do: access (RBAC) and policy (a dry run).

The two look alike and differ in their object. A permission verb on a resource *type* is an
access question: "who can delete pods", "can bob scale deployments?", "is alice allowed to
read secrets in staging". An action on a *named* object is a policy question: "may I scale web
to 1?", "would policy allow deleting web in shop?", "can the dev team restart api?". What a
subject may do at all is an access question too: "what can alice do in shop", "what may the
dev-team agent do", "what permissions does bob have".

Must not know: the cluster, the servers, any agent's code.
"""

from __future__ import annotations

from agents.runtime.questions import vocabulary as v
from agents.runtime.questions.asked import Access, PolicyCheck, Question
from agents.runtime.questions.subjects import ME, subject_of
from agents.runtime.questions.words import (
    FILLER,
    POLITE,
    QUESTION_WORDS,
    READ_VERBS,
    Said,
    Words,
    lookup,
    number,
)

MODALS = frozenset(
    {"can", "may", "could", "might", "is", "are", "am", "does", "do", "would", "will", "should"}
)
_NOT_ACTOR = v.PERMISSION_WORDS | {
    "policy",
    "policies",
    "allow",
    "let",
    "ok",
    "okay",
    "it",
    "have",
    "has",
    "to",
    "be",
    "fine",
    "safe",
    "possible",
}
_NOT_OBJECT = frozenset(
    {
        "to",
        "by",
        "down",
        "up",
        "replica",
        "replicas",
        "instances",
        "copies",
        "on",
        "into",
        "over",
        "other",
        "people",
        "again",
        "now",
        "back",
        "allowed",
        "permitted",
        "ok",
        "okay",
        "fine",
        "safe",
        "off",
    }
)
_RIGHTS = frozenset({"permissions", "permission", "rights", "privileges", "access"})
_NOT_SUBJECT = frozenset({"what", "do", "doing", "does", "got", "hold", "holds", "own"})
_AS_ACTION = {"delete": "delete", "patch": "patch", "update": "patch", "create": "apply"}
_POLITE_TAIL = POLITE | {"thanks", "thx", "now", "exactly", "actually", "here", "there"}
_PARTICLES = frozenset({"roll", "rolling", "take", "taking", "shut", "turn"})


def read_permission(asked: Said) -> Question | None:
    words = asked.words
    if words.has("who", "whom"):
        if any(w in v.PAST_CHANGES for w in words.all):
            return None  # "who changed web?": history
        verb, resource = permission(words, words.all.index("who" if "who" in words else "whom"))
        if verb and resource:
            return Access(
                "who",
                asked.text,
                asked.namespace,
                verb=verb,
                resource=resource,
                said_namespace=asked.said,
            )
        return None
    rights = _rights(asked)
    if rights is not None:
        return rights
    if words.first() not in MODALS and not words.has("policy", "policies", "allowed"):
        return None
    return _modal(asked)


def permission(words: Words, start: int) -> tuple[str, str]:
    """(Kubernetes verb, resource) of the first permission verb after `start`: "delete pods",
    "read logs", "exec into pods", "scale deployments" (deployments/scale)."""
    for index in range(start + 1, len(words.all)):
        word = words.all[index]
        if index in words.used or word not in v.ACCESS_VERBS:
            continue
        verb, sub = v.ACCESS_VERBS[word]
        objects = _objects(words, index)
        logs = any(o in v.LOG_WORDS for o in objects)  # "the pod logs", "logs of pods"
        resource = "logs" if logs else next((_resource(o) for o in objects), "")
        if sub and sub != "scale":
            resource = f"pods/{sub}"
        elif sub and resource:
            resource = f"{resource}/scale"
        return verb, resource
    return "", ""


def _resource(word: str) -> str:
    if word in v.LOG_WORDS:
        return "logs"
    kind = lookup(word, v.KINDS) or word
    return {"workloads": "deployments", "containers": "pods"}.get(kind, kind)


def _objects(words: Words, verb: int) -> list[str]:
    """The words after the verb at `verb` that may name what it acts on."""
    return [
        w
        for i, w in enumerate(words.all)
        if i > verb
        and i not in words.used
        and w not in FILLER
        and w not in _NOT_OBJECT
        and w not in v.PERMISSION_WORDS
        and _amount(w) is None
        and not w.lstrip("+-").isdigit()
    ]


def _rights(asked: Said) -> Access | None:
    """ "what can alice do", "what is the dev-team agent allowed to do", "what permissions does
    bob have", "the permissions of group:shop-admins", "bob's rights"."""
    words = asked.words
    content = [
        w
        for i, w in enumerate(words.all)
        if i not in words.used and w not in _POLITE_TAIL and not _told(words, i)
    ]
    ends_in_do = content[-1:] == ["do"] and words.has("what")
    nouns = [i for i, w in enumerate(content) if w in _RIGHTS]
    before = content[nouns[0] - 1] if nouns and nouns[0] else ""
    owned = bool(nouns) and (
        words.has("have", "has", "of", "for", "hold", "holds")
        or (before != "" and before not in FILLER | QUESTION_WORDS)
    )
    verbs = any(w in v.ACCESS_VERBS and w != "access" for w in content[1:])
    if not ends_in_do and not (owned and not verbs):
        return None
    said = [
        w
        for w in content
        if w not in _NOT_ACTOR and w not in QUESTION_WORDS and w not in _NOT_SUBJECT
    ]
    subject = subject_of(said, asked.namespace)
    if subject is None:
        return None
    return Access(
        "rights",
        asked.text,
        _subject_namespace(asked, subject),
        subject=subject,
        said_namespace=asked.said,
    )


def _told(words: Words, index: int) -> bool:
    """ "me" in "tell me", "show us", "let me know": the one told, not the subject."""
    before = words.all[index - 1] if index else ""
    return words.all[index] in ("me", "us") and before in {*READ_VERBS, "let"}


def _subject_namespace(asked: Said, subject: str) -> str | None:
    """A "namespace/name" subject is a ServiceAccount, not the namespace asked about."""
    if asked.words.from_slash and "/" in subject:
        return None
    return asked.namespace


def _modal(asked: Said) -> Question | None:
    """A modal, who would act, a verb and its object: access for a resource type, policy
    for a named object."""
    words = asked.words
    start = next((i for i, w in enumerate(words.all) if w in MODALS or w == "policy"), -1)
    at = _action_at(words, start)
    if at < 0:  # the action first, the modal after: "scaling web to 1, would that be ok?"
        start, at = -1, _action_at(words, -1)
    if at < 0:
        return None
    actor = [
        w
        for w in words.all[start + 1 : at]
        if (w not in _NOT_ACTOR and w not in FILLER) or w in v.PEOPLE_SELF
    ]
    objects = _objects(words, at)
    kinds = [o for o in objects if lookup(o, v.KINDS) or o in v.LOG_WORDS]
    names = [o for o in objects if o not in kinds and o not in v.ACTIONS]
    if kinds and not names and words.all[at] in v.ACCESS_VERBS:
        verb, resource = permission(words, at - 1)
        subject = subject_of(actor, asked.namespace) or ME
        return Access(
            "may",
            asked.text,
            _subject_namespace(asked, subject),
            verb=verb,
            resource=resource,
            subject=subject,
            said_namespace=asked.said,
        )
    action = _action(words, at)
    if not names or not action:
        return None
    kind = next((lookup(k, v.KINDS) or "" for k in kinds), "")
    if action in ("drain", "cordon", "uncordon") and not kind:
        kind = "nodes"
    replicas, by = _replicas(words, at) if action == "scale" else (None, None)
    return PolicyCheck(
        asked.text,
        asked.namespace,
        action,
        tuple(names[:3]),
        kind,
        replicas,
        by,
        " ".join(actor),
        asked.said,
    )


def _action_at(words: Words, start: int) -> int:
    for index in range(start + 1, len(words.all)):
        word = words.all[index]
        if index in words.used:
            continue
        if word in v.ACTIONS or word in v.ACCESS_VERBS or word in v.STOPPING:
            return index
        if word in _PARTICLES and {"back", "down", "off"} & set(_after(words, index, 4)):
            return index
    return -1


def _after(words: Words, at: int, count: int) -> list[str]:
    """The `count` words after `at` that are not the namespace's ("take web in shop down")."""
    return [w for i, w in enumerate(words.all) if i > at and i not in words.used][:count]


def _action(words: Words, at: int) -> str:
    """The policy store's action type the verb at `at` asks for ("" for a read)."""
    word, after = words.all[at], _after(words, at, 4)
    if word in ("roll", "rolling") and "back" in after:
        return "rollback"
    if word in v.STOPPING or (word in _PARTICLES and {"down", "off"} & set(after)):
        return "scale"
    if word in v.ACTIONS:
        return v.ACTIONS[word]
    return _AS_ACTION.get(v.ACCESS_VERBS.get(word, ("", ""))[0], "")


_ONE = {"single": 1, "pair": 2}  # "down to a single replica", "a pair of pods"


def _amount(word: str) -> int | None:
    found = number(word)
    return _ONE.get(word) if found is None else found


def _replicas(words: Words, at: int) -> tuple[int | None, int | None]:
    """(to, by) for a scale: "to 1", "down to zero", "by 2", "+2", "3 replicas"; a stop
    ("take web down", "stop web") is to 0."""
    after = [w for i, w in enumerate(words.all) if i > at and i not in words.used]
    down = any(w in ("down", "fewer", "less") for w in after)
    for index, word in enumerate(after):
        following = _amount(after[index + 1]) if index + 1 < len(after) else None
        if word in ("to", "at") and following is not None:
            return following, None
        if word == "by" and following is not None:
            return None, -following if down else following
        if word[:1] in "+-" and word[1:].isdigit():
            return None, int(word)
    counted = [n for w in after if (n := _amount(w)) is not None]
    if counted:
        return counted[0], None
    verb = words.all[at]
    if verb in v.STOPPING or (verb in _PARTICLES and {"down", "off"} & set(after[:3])):
        return 0, None
    return None, None
