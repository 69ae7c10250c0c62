"""What is stored and what uses it, the rules that recognize each (`named` tries them among its
own) and their readers: a ConfigMap made or its keys changed, a new
PersistentVolumeClaim or a bigger one, a ConfigMap, Secret or claim mounted into a workload (as
files or its environment), and a Secret from typed values, which is declined.

"create a configmap app-config with LOG_LEVEL=debug", "add key mode=fast to configmap
app-config", "remove key mode from configmap app-config"; "create a 1Gi pvc named data",
"resize the data pvc to 15Gi"; "mount configmap size-settings into web at /etc/sizes", "mount
secret creds into web at /etc/creds", "use configmap app-config as web's environment".
Must not know: any agent.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.amounts import MEMORY_SIZE
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.creating import NAME, NOT_NAMES, namespace_said
from agents.runtime.changes.words.sentence import Sentence, wordset
from agents.runtime.changes.words.vocabulary import (
    ACCESS_WORDS,
    CREATE_VERBS,
    DELETE_VERBS,
    GENERIC,
    Found,
    has_pairs,
    verb_index,
)
from agents.runtime.changes.words.workloads import LINKS

# -- the rules that say which of these a request asks for (tried by `named.named`) ------------

STORAGE_WORDS = wordset("pvc pvcs claim volume storage disk persistentvolumeclaim volumeclaim")
GROW_VERBS = wordset("resize expand grow increase extend enlarge bump set make give raise change")


def new_claim(sentence: Sentence) -> Found | None:
    """A new claim: "create a 1Gi pvc named data", "make a 5Gi volume claim called cache",
    "add a persistent volume claim of 10Gi named data": a verb of making and a claim word, said
    of a new one (an article or "new"; "make the data pvc 15Gi" is a resize)."""
    at = sentence.find(CREATE_VERBS | {"provision", "allocate"})
    text = " ".join(sentence.low)
    claimed = sentence.has("pvc", "persistentvolumeclaim", "volumeclaim") or re.search(
        r"\b(?:volume claim|persistent volume|persistent disk)\b", text
    )
    if at == -1 or not claimed or sentence.has("mount", "mounted", "into"):
        return None  # "mount a 1Gi volume into web": the workload's template, not a claim
    if sentence.find(GROW_VERBS) != -1 and not sentence.has("a", "an", "new", "another"):
        return None  # "make the data pvc 15Gi": a resize (`resized`)
    return "claim", at, 1


def resized(sentence: Sentence) -> Found | None:
    if not sentence.has(*STORAGE_WORDS):
        return None
    if not any(MEMORY_SIZE.match(w) for w in sentence.low) and not any(
        w.isdigit() and n in ("gi", "gb", "mi", "mb", "ti", "tb", "gig", "gigs")
        for w, n in itertools.pairwise(sentence.low)
    ):
        return None
    if sentence.has("memory", "mem", "ram") or sentence.has("limit", "limits", "request"):
        return None
    at = sentence.find(GROW_VERBS)
    return None if at == -1 else ("storage", at, 1)


def configmap_named(sentence: Sentence) -> Found | None:
    """A ConfigMap made, its keys changed, or it used by a workload (a delete is `workloads`')."""
    text = " ".join(sentence.low)
    at = sentence.find({"configmap", "configmaps", "cm"})
    if at == -1 and "config map" not in text:
        return None
    first = sentence.find(DELETE_VERBS | CREATE_VERBS | GENERIC)
    deletes = first != -1 and sentence.low[first] in DELETE_VERBS and not has_pairs(sentence)
    keyed = sentence.has("key", "keys", "entry", "entries", "from") or any(
        re.fullmatch(r"[A-Z][A-Z0-9_]+", w) for w in sentence.raw
    )  # "delete MODE from the app-config configmap": a key, not the ConfigMap
    if deletes and not keyed:
        return None  # "delete the configmap app-config": a delete
    if deletes:
        return "configmap", first, 1  # "remove key MODE from configmap app-config"
    if sentence.has("mount", "mounted", "mounts", "volume"):
        return "mount", verb_index(sentence, frozenset({"mount", "add", "use", "attach"})), 1
    variable = any(re.fullmatch(r"[A-Z][A-Z0-9_]*", w) for w in sentence.raw)
    into_env = sentence.has("env", "environment", "envfrom", "variables", "vars")
    if into_env or (variable and sentence.has("key", "from")) or sentence.has("load", "inject"):
        verbs = frozenset({"use", "load", "add", "set", "inject", "put"})
        return "mount", verb_index(sentence, verbs), 1
    if first == -1 and not has_pairs(sentence):
        return None  # "juggle the settings configmap": no verb of ours and no keys, no change
    return "configmap", first, 1


def mounted(sentence: Sentence) -> Found | None:
    """A Secret or a claim used by a workload: "mount secret creds into web at /etc/creds",
    "load the creds secret into web's env", "mount the data pvc into db at /var/lib/data"
    (a ConfigMap's are `configmap_named`'s)."""
    if not sentence.has("secret", "pvc", "claim"):
        return None
    if sentence.has("mount", "mounted", "mounts"):
        return "mount", verb_index(sentence, frozenset({"mount", "add", "use", "attach"})), 1
    if sentence.has("env", "environment", "envfrom", "variables", "vars", "load", "inject"):
        verbs = frozenset({"use", "load", "add", "set", "inject", "put"})
        return "mount", verb_index(sentence, verbs), 1
    return None


def new_secret(sentence: Sentence) -> Found | None:
    """A Secret made from values typed here ("create a secret db-pass with password=s3cret"),
    which the crew declines: the words stay in the conversation's history."""
    at = sentence.find(CREATE_VERBS - {"give", "put"})
    if at == -1 or not sentence.has("secret", "secrets") or sentence.has("into", "from"):
        return None
    if sentence.has(*ACCESS_WORDS, "role", "rolebinding", "permission", "permissions", "rights"):
        return None  # "create a role that can read secrets": access, the Platform's
    return "secret", at, 1


# -- readers ----------------------------------------------------------------------------------


def configmap(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    removing = sentence.at(at) in ("remove", "delete", "drop", "unset")
    data: dict[str, str | None] = dict(amounts.pairs(sentence, strip=True))
    for flag, value in sentence.flags.items():  # --from-literal=key=value
        if flag == "from-literal":
            key, _, val = value.partition("=")
            data[key] = val
    if removing:
        for index, word in enumerate(low):
            if word in ("key", "keys", "entry") and sentence.free(index + 1):
                data[sentence.raw[index + 1]] = None
                sentence.take(index, index + 1)
    if removing:  # "remove MODE from configmap app-config": its NAME is the key
        data |= {w: None for i, w in enumerate(sentence.raw)
                 if sentence.free(i) and re.fullmatch(r"[A-Z][A-Z0-9_]+", w)}  # fmt: skip
    name = sentence.flags.get("name", "") or _named_object(sentence, {"configmap", "cm"})
    params: dict[str, Any] = {"data": data}
    said_new = any(
        word in ("configmap", "cm", "config") and index and low[index - 1] in ("a", "an")
        for index, word in enumerate(low)
    )  # "put a configmap named flags in shop": an indefinite article asks for a new one
    if said_new or sentence.has("create", "make", "new", "need", "needs", "define"):
        params["create"] = True  # a new ConfigMap; otherwise keys of one that exists
    if name:
        params["name"] = name
    sentence.take(*range(len(low)))
    if not name:
        return Asked(
            "configmap",
            params,
            kind="ConfigMap",
            problem="which ConfigMap? Say e.g. "
            "'create a configmap app-config with LOG_LEVEL=debug'",
        )
    if not data:
        return Asked(
            "configmap",
            params,
            kind="ConfigMap",
            problem="with which keys? Say e.g. 'create a configmap app-config with mode=fast'",
        )
    return Asked("configmap", params, kind="ConfigMap", namespace=namespace_said(sentence))


_STORAGE_SAID = wordset(
    "persistent persistentvolume request requests capacity size its without creating resources "
    "there is with that can you"
)


def storage(sentence: Sentence, at: int) -> Asked:
    size = ""
    for index in range(len(sentence.low)):
        size = amounts.size_at(sentence, index) if sentence.free(index) else ""
        if size:
            break
    sentence.take_words(GROW_VERBS | STORAGE_WORDS | _STORAGE_SAID | LINKS)
    if not size:
        return Asked("storage", problem="to what size? Say e.g. 'resize the data pvc to 15Gi'")
    return Asked("storage", {"size": size})


def claim(sentence: Sentence, at: int) -> Asked:
    """A new PersistentVolumeClaim: its size, its name, a storage class when one is named,
    shared (ReadWriteMany) when said so."""
    size = ""
    for index in range(len(sentence.low)):
        size = amounts.size_at(sentence, index) if sentence.free(index) else ""
        if size:
            break
    low = sentence.low
    name = sentence.flags.get("name", "") or next(
        (low[i + 1] for i, w in enumerate(low[:-1])
         if w in ("named", "called") and NAME.match(low[i + 1])),
        "",
    ) or _named_object(sentence, _CLAIM_WORDS - {"volume", "persistent"})  # fmt: skip
    kept = next(
        (low[i + 1] for i, w in enumerate(low[:-1]) if w in ("class", "storageclass")
         and NAME.match(low[i + 1]) and low[i + 1] not in _LINKED),
        "",
    )  # fmt: skip
    params: dict[str, Any] = {"size": size, "name": name}
    if kept:
        params["storage_class"] = kept
    if sentence.has("rwx", "readwritemany", "shared") or "read write many" in " ".join(low):
        params["shared"] = True
    said = {name, kept} - {""}
    sentence.take_words(_CLAIM_WORDS | _CLAIM_SAID | said | {sentence.at(at)})
    if not size:
        return Asked("claim", params, problem="how big? Say e.g. 'create a 1Gi pvc named data'")
    if not name:
        return Asked("claim", params, problem="what should it be called? Say e.g. "
                     "'create a 1Gi pvc named data'")  # fmt: skip
    return Asked("claim", params, kind="PersistentVolumeClaim")


_CLAIM_WORDS = frozenset({"pvc", "claim", "disk", "persistentvolumeclaim", "volumeclaim"})
_CLAIM_SAID = frozenset(
    {"a", "an", "new", "persistent", "volume", "named", "called", "of", "with", "storage",
     "class", "storageclass", "shared", "rwx", "readwritemany", "read", "write", "many", "size",
     "please"}
)  # fmt: skip
_SOURCES = frozenset({"configmap", "cm", "secret", "pvc", "claim"})


def _named_object(sentence: Sentence, kinds: set[str] | frozenset[str]) -> str:
    """The name said beside a kind word: "configmap app-config", "the app-config configmap",
    "a configmap called app-config", "config map app-config"; "" when none. Marked read."""
    low = sentence.low
    for index, word in enumerate(low):
        if word == "map" and sentence.at(index - 1) == "config":
            word = "configmap"
        if word not in kinds:
            continue
        after, before = sentence.at(index + 1), sentence.at(index - 1)
        if after in ("called", "named"):
            after, index = sentence.at(index + 2), index + 1
            if NAME.match(after) and after not in _LINKED:  # said to be its name: it is
                sentence.take(index, index + 1)
                return after
        if NAME.match(after) and after not in NOT_NAMES | _LINKED and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return after
        articled = sentence.at(index - 2) in ("the", "my", "our", "its")  # "the data pvc"
        if (
            NAME.match(before)
            and (articled or before not in NOT_NAMES | _LINKED)
            and sentence.free(index - 1)
        ):
            sentence.take(index - 1, index)
            return before
    return ""


_LINKED = frozenset(
    {"into", "in", "under", "at", "available", "as", "holding", "with", "from", "for", "keys",
     "key", "values", "data", "and", "or", "is", "it", "them"}
)  # fmt: skip


def mount(sentence: Sentence, at: int) -> Asked:
    """A ConfigMap (or Secret, or claim) into a workload: as files at a path, or as its
    environment (every key, or one key as one variable: "COLOR from key color of colors")."""
    low = sentence.low
    params: dict[str, Any] = {}
    source_at = sentence.find(_SOURCES)
    source = _named_object(sentence, _SOURCES)
    if source:
        kinds = {
            "secret": "Secret",
            "pvc": "PersistentVolumeClaim",
            "claim": "PersistentVolumeClaim",
        }
        params["source"] = {"kind": kinds.get(low[source_at], "ConfigMap"), "name": source}
    path = amounts.path(sentence)
    if path:
        params["path"] = path
    variable = next((w for w in sentence.raw if re.fullmatch(r"[A-Z][A-Z0-9_]*", w)), "")
    key = re.search(r"\bkey '?(?!of\b|from\b|in\b)([A-Za-z0-9_.-]+)", " ".join(sentence.raw))
    if variable:
        params["variable"] = variable
    if key:
        params["key"] = key[1]
    if not path:
        params["as_env"] = True
    sentence.take_words(
        {
            "mount",
            "mounted",
            "mounts",
            "volume",
            "into",
            "at",
            "under",
            "as",
            "its",
            "env",
            "environment",
            "variables",
            "vars",
            "envfrom",
            "use",
            "load",
            "from",
            "key",
            "keys",
            "value",
            "all",
            "directory",
            "dir",
            "folder",
            "files",
            "file",
            "attach",
            "the",
            "config",
            "map",
        }
        | LINKS
        | {variable.lower(), (key[1].lower() if key else "")}
    )
    if "source" not in params:
        return Asked(
            "mount",
            params,
            problem="mount what? Say e.g. 'mount configmap app-config into web at /etc/config'",
        )
    return Asked("mount", params)


def secret(sentence: Sentence, at: int) -> Asked:
    sentence.take(*range(len(sentence.low)))  # its values must go nowhere, not even a subject
    return Asked(
        "secret",
        kind="Secret",
        problem="I do not make Secrets from values typed in a conversation, which keeps them "
        "in its history. Create it yourself (`kubectl create secret generic NAME "
        "--from-literal=KEY=VALUE -n NAMESPACE`), then ask me to use it ('mount secret NAME "
        "into web at /etc/creds', 'load secret NAME into web's env')",
    )


READERS: dict[str, Reader] = {
    "configmap": configmap,
    "storage": storage,
    "claim": claim,
    "mount": mount,
    "secret": secret,
}
