"""Readers of who may do what in a namespace: "let carol read logs in shop", "give bob edit
access to staging", "make dave an admin of shop", "allow the ci service account to deploy in
staging", "create a read-only role for pods bound to my reader-sa service account", "revoke
carol's access to shop". The namespace's own frame (quota, limits, pod security) is
`tenancy`'s. Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence
from agents.runtime.changes.words.tenancy import NAME

_ROLE_LEVELS = {
    "view": "view",
    "viewer": "view",
    "read-only": "view",
    "readonly": "view",
    "read": "view",
    "edit": "edit",
    "editor": "edit",
    "write": "edit",
    "admin": "admin",
    "administrator": "admin",
    "owner": "admin",
    "full": "admin",
}
_READ = ["get", "list", "watch"]
_VERBS: dict[str, list[str]] = {
    "read": _READ,
    "view": _READ,
    "see": _READ,
    "get": ["get"],
    "look": _READ,
    "inspect": _READ,
    "read-only": _READ,
    "readonly": _READ,
    "watch": ["watch"],
    "list": ["list"],
    "create": ["create"],
    "update": ["get", "update", "patch"],
    "edit": ["get", "update", "patch"],
    "modify": ["get", "update", "patch"],
    "change": ["get", "update", "patch"],
    "patch": ["patch"],
    "delete": ["delete"],
    "remove": ["delete"],
    "manage": ["*"],
    "write": ["create", "update", "patch", "delete"],
}
_RESOURCES = {
    "pods": "pods",
    "pod": "pods",
    "logs": "pods/log",
    "log": "pods/log",
    "deployments": "deployments",
    "deployment": "deployments",
    "deploy": "deployments",
    "services": "services",
    "service": "services",
    "svc": "services",
    "configmaps": "configmaps",
    "configmap": "configmaps",
    "secrets": "secrets",
    "secret": "secrets",
    "jobs": "jobs",
    "job": "jobs",
    "cronjobs": "cronjobs",
    "statefulsets": "statefulsets",
    "daemonsets": "daemonsets",
    "replicasets": "replicasets",
    "ingresses": "ingresses",
    "networkpolicies": "networkpolicies",
    "events": "events",
    "endpoints": "endpoints",
    "pvcs": "persistentvolumeclaims",
    "persistentvolumeclaims": "persistentvolumeclaims",
    "hpas": "horizontalpodautoscalers",
}
_SPECIAL = {  # what a person says -> (verbs, resources)
    "exec": (["create"], ["pods/exec"]),
    "port-forward": (["create"], ["pods/portforward"]),
    "scale": (["get", "update", "patch"], ["deployments/scale", "statefulsets/scale"]),
    "restart": (["get", "patch"], ["deployments", "statefulsets", "daemonsets"]),
    "deploy": (
        ["get", "list", "watch", "create", "update", "patch"],
        ["deployments", "services", "configmaps"],
    ),
    "tail": (["get"], ["pods/log"]),
}
_ACCESS_WORDS = frozenset(
    {
        "access",
        "permission",
        "permissions",
        "rights",
        "role",
        "roles",
        "rolebinding",
        "privileges",
        "binding",
        "bound",
        "bind",
        "grant",
        "give",
        "let",
        "allow",
        "permit",
        "make",
        "add",
        "create",
        "an",
        "a",
        "the",
        "to",
        "on",
        "in",
        "of",
        "for",
        "and",
        "or",
        "my",
        "only",
        "be",
        "able",
        "can",
        "so",
        "that",
        "them",
        "him",
        "her",
        "revoke",
        "remove",
        "take",
        "away",
        "from",
        "s",
        "all",
        "full",
        "control",
        "over",
        "authorize",
        "authorise",
        "enable",
        "namespace",
        "ns",
        "with",
        "new",
        "who",
        "is",
        "are",
    }
)


def grant(sentence: Sentence, at: int) -> Asked:
    subject = _subject(sentence, at)
    params: dict[str, Any] = {}
    if subject:
        params["subject"] = subject
    low = sentence.low
    said = _rights_words(sentence, at, subject)
    resources = [r for w in said if (r := _RESOURCES.get(w))]
    verbs: list[str] = []
    special: list[tuple[list[str], list[str]]] = []
    for word in said:
        if (word in _SPECIAL and word not in ("deploy",)) or (word == "deploy" and not resources):
            special.append(_SPECIAL[word])
        elif word in _VERBS and resources:
            verbs += [v for v in _VERBS[word] if v not in verbs]
    level = next((_ROLE_LEVELS[w] for w in said if w in _ROLE_LEVELS), "")
    if resources and not verbs and level:
        verbs = (
            list(_READ)
            if level == "view"
            else ["*"]
            if level == "admin"
            else ["get", "list", "watch", "create", "update", "patch", "delete"]
        )
    rules = (
        [{"verbs": verbs or list(_READ), "resources": sorted(set(resources))}] if resources else []
    )
    if "pods/log" in resources and "pods" not in resources:
        rules = [
            {"verbs": ["get"], "resources": ["pods/log"]},
            {"verbs": ["get", "list"], "resources": ["pods"]},
        ]
    rules += [{"verbs": v, "resources": r} for v, r in special]
    if rules:
        params["rules"] = rules
    elif level:
        params["role"] = level
    where = _where(sentence)
    sentence.take(*range(len(low)))  # subject, rights and namespace are all in params
    if not subject:
        return Asked(
            "grant",
            params,
            problem="for whom? Say e.g. 'let carol read logs in shop' "
            "or 'give the ci service account edit access to staging'",
        )
    if not rules and not level:
        return Asked(
            "grant",
            params,
            problem="to do what? Say e.g. 'view', 'edit', 'admin', or "
            "'read logs', 'list pods', 'scale deployments'",
        )
    return Asked("grant", params, namespace=where or None)


def _rights_words(sentence: Sentence, at: int, subject: dict[str, str]) -> list[str]:
    """The words that say what is granted: not the verb of the request ("create a role"), not
    the subject's own words ("service account reader-sa"), not the namespace."""
    low = sentence.low
    skip = {at}
    for index, word in enumerate(low):
        pair = f"{word} {sentence.at(index + 1)}"
        if pair in ("service account",):
            skip |= {index, index + 1}
        if subject and word == subject.get("name", "").lower():
            skip.add(index)
        if word in ("in", "namespace") and index + 1 < len(low):
            skip.add(index + 1)
    return [w for i, w in enumerate(low) if i not in skip]


def revoke(sentence: Sentence, at: int) -> Asked:
    subject = _subject(sentence, at)
    where = _where(sentence)
    sentence.take(*range(len(sentence.low)))
    if not subject:
        return Asked("revoke", problem="whose access? Say e.g. 'revoke carol's access to shop'")
    return Asked("revoke", {"subject": subject}, namespace=where or None)


def _subject(sentence: Sentence, at: int) -> dict[str, str]:
    """Who is given (or loses) access: a ServiceAccount ("the ci service account", "sa ci",
    "reader-sa serviceaccount"), a group ("group qa", "the qa group"), or a user (the name
    after the verb, or "user alice")."""
    low, text = sentence.low, " ".join(sentence.request)
    account = re.search(
        r"\b(?:service ?account|serviceaccount|sa)s? (?:named |called )?"
        r"([a-z0-9][-a-z0-9.]*)",
        text,
    )
    before = re.search(r"\b([a-z0-9][-a-z0-9.]*) (?:service ?account|serviceaccount|sa)\b", text)
    if before and before[1] not in _ACCESS_WORDS | {"my", "our", "your", "the"}:
        return {"kind": "ServiceAccount", "name": before[1]}
    if account and account[1] not in _ACCESS_WORDS | _ROLE_LEVELS.keys() | {"in"}:
        return {"kind": "ServiceAccount", "name": account[1]}
    group = re.search(
        r"\bgroup ([a-z0-9][-a-z0-9.:]*)|\bthe ([a-z0-9][-a-z0-9.:]*) (?:group|"
        r"team)\b",
        text,
    )
    if group:
        return {"kind": "Group", "name": group[1] or group[2]}
    user = re.search(r"\buser ([a-z0-9][-a-z0-9.@]*)", text)
    if user:
        return {"kind": "User", "name": user[1]}
    possessive = re.search(
        r"\b([a-z0-9][-a-z0-9.@]*) s (?:access|permissions?|rights|role)\b", text
    )
    if possessive:
        return {"kind": "User", "name": possessive[1]}
    everything = " ".join(low)
    receiver = re.search(
        r"\b(?:could|can|may|should) ([a-z0-9][-a-z0-9.@]*) (?:get|have|receive|be)\b", everything
    )
    losing = re.search(r"\b(?:take away|remove|revoke|strip|pull) ([a-z0-9][-a-z0-9.@]*) (?:s )?"
                       r"(?:access|rights|permissions?|role)\b", everything)  # fmt: skip
    if losing and losing[1] not in _ACCESS_WORDS | {"the", "all"}:
        return {"kind": "User", "name": losing[1]}
    if receiver and receiver[1] not in ("you", "we", "i", "u"):
        return {"kind": "User", "name": receiver[1]}
    for index in range(at + 1, min(len(low), at + 3)):
        word = low[index]
        if word in ("the", "to", "user", "from"):
            continue
        if (
            NAME.match(word)
            and word not in _ACCESS_WORDS | set(_ROLE_LEVELS) | set(_VERBS) | set(_SPECIAL)
            and word not in ("me", "us", "everyone", "everybody")
        ):
            return {"kind": "User", "name": word}
        break
    return {}


def _where(sentence: Sentence) -> str:
    """The namespace access is given in: "in shop", "to staging", "on the shop namespace",
    "the apps namespace"; read in the request's own words when context came first."""
    if sentence.flags.get("namespace"):
        return sentence.flags["namespace"]
    low = sentence.request

    def at(index: int) -> str:
        return low[index] if 0 <= index < len(low) else ""

    for index, word in enumerate(low):
        step = 2 if at(index + 1) == "the" else 1
        following = at(index + step)
        if following in ("namespace", "ns"):
            following = at(index + step + 1)
        if (
            word in ("in", "on", "to", "of", "for", "over", "namespace")
            and NAME.match(following)
            and following not in _ACCESS_WORDS | set(_RESOURCES) | set(_ROLE_LEVELS)
            and following not in ("namespace", "ns", "deploy", "read", "list", "pod", "the")
            and not (word == "to" and following in _VERBS | _SPECIAL.keys())
        ):
            return following
        previous = at(index - 1)
        named = previous not in _ACCESS_WORDS | set(_RESOURCES)
        if word == "namespace" and index and NAME.match(previous) and named:
            return previous
    return ""


READERS: dict[str, Reader] = {"grant": grant, "revoke": revoke}
