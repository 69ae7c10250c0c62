"""Who a question is about: a person, a group, a ServiceAccount, one of the crew's agents, or
the person asking ("I", "we").

`subject_of(words, namespace)` turns the words that name a subject into the string the kube
server's `access_review` takes (`alice`, `group:shop-admins`, `shop/robot`) or `agent:NAME`
for an agent of the crew ("the dev-team agent", "dev team", "cluster operator"), matched
against the agents the registry lists, and `me` for the person asking, whom the crew cannot
name. None when the words name no one it can tell.

Must not know: the cluster, the servers, any agent's code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.runtime import registry
from agents.runtime.questions import vocabulary as v
from agents.runtime.questions.words import FILLER

_NAME = re.compile(r"^[a-z0-9][a-z0-9@._:-]*$")
_SLASHED = re.compile(r"^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9.-]*$")
ME = "me"


def subject_of(words: list[str], namespace: str | None) -> str | None:
    said = [w for w in words if w not in FILLER or w in v.PEOPLE_SELF]
    if any(w in v.PEOPLE_SELF for w in said):
        return ME
    slashed = [w for w in said if _SLASHED.match(w)]
    if slashed:
        return slashed[0]  # NAMESPACE/NAME: a ServiceAccount
    agent = agent_named(said)
    if agent:
        return f"agent:{agent}"
    said = _joined(w for w in said if w not in v.AGENT_WORDS)
    roles = [v.SUBJECT_NOUNS[w] for w in said if w in v.SUBJECT_NOUNS]
    names = [w for w in said if w not in v.SUBJECT_NOUNS]
    if len(names) != 1 or not _NAME.match(names[0]):
        return None
    name = names[0]
    if "group" in roles:
        return f"group:{name}"
    if "serviceaccount" in roles:
        return f"{namespace or 'default'}/{name}"
    return name


def agent_named(words: list[str]) -> str | None:
    """The crew's agent these words name: "dev-team", "dev team", "the dev_team agent",
    "cluster operator"; a part of a name ("operator") only beside the word "agent"."""
    parts = [p for w in words if w not in v.AGENT_WORDS for p in re.split(r"[-_]", w) if p]
    if not parts:
        return None
    explicit = any(w in v.AGENT_WORDS for w in words)
    known = registry.names()
    for name in known:
        pieces = name.split("_")
        if parts == pieces or "".join(parts) == "".join(pieces):
            return name
    partial = [n for n in known if set(parts) <= set(n.split("_"))]
    return partial[0] if explicit and len(partial) == 1 else None


def _joined(words: Iterable[str]) -> list[str]:
    """ "service account" is one word, as "serviceaccount" is."""
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] == "service" and word in ("account", "accounts"):
            joined[-1] = "serviceaccount"
        else:
            joined.append(word)
    return joined
