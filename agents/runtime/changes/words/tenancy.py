"""Readers of a namespace's frame: creating one, its quota, its default limits, its pod
security level, and who may do what in it.

"create namespace team-a with a quota of 4 cpus, 8Gi memory and 20 pods", "set a quota of 10
pods on shop", "give containers in staging a default memory limit of 256Mi", "enforce
restricted pod security in shop"; "let carol read logs in shop", "give bob edit access to
staging", "make dave an admin of shop", "allow the ci service account to deploy in staging",
"create a read-only role for pods bound to my reader-sa service account", "revoke carol's
access to shop". Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import FILLER, Sentence
from agents.runtime.changes.words.vocabulary import CPU_WORDS, MEMORY_WORDS
from agents.runtime.changes.words.workloads import LINKS

_COUNTED = {
    "pods": "pods",
    "pod": "pods",
    "services": "services",
    "service": "services",
    "configmaps": "configmaps",
    "secrets": "secrets",
    "pvcs": "persistentvolumeclaims",
    "claims": "persistentvolumeclaims",
    "jobs": "count/jobs.batch",
    "deployments": "count/deployments.apps",
    "loadbalancers": "services.loadbalancers",
    "nodeports": "services.nodeports",
}
_LEVELS = frozenset({"privileged", "baseline", "restricted"})
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_FRAME_WORDS = (
    frozenset(
        {
            "namespace",
            "ns",
            "quota",
            "quotas",
            "resourcequota",
            "limit",
            "limits",
            "range",
            "limitrange",
            "default",
            "defaults",
            "request",
            "requests",
            "max",
            "maximum",
            "min",
            "minimum",
            "of",
            "and",
            "with",
            "create",
            "make",
            "new",
            "setup",
            "provision",
            "add",
            "set",
            "cap",
            "at",
            "per",
            "container",
            "containers",
            "pod",
            "pods",
            "memory",
            "mem",
            "cpu",
            "cpus",
            "labelled",
            "labeled",
            "label",
            "labels",
            "called",
            "named",
            "security",
            "pod-security",
            "level",
            "enforce",
            "enforced",
            "mode",
            "warn",
            "audit",
            "total",
            "hard",
            "up",
            "than",
            "no",
            "more",
            "should",
            "be",
            "allowed",
            "allow",
            "only",
        }
    )
    | LINKS
)


def namespace(sentence: Sentence, at: int) -> Asked:
    name = _new_name(sentence, at)
    params: dict[str, Any] = {"name": name} if name else {}
    quota = _quota_fields(sentence)
    if sentence.has("quota", "quotas", "capped", "cap", "limited"):
        quota |= {_QUOTA_KEYS.get(k, k): v for k, v in amounts.pairs(sentence).items()
                  if k in _QUOTA_KEYS or "." in k}  # fmt: skip
    if quota:
        params["quota"] = quota
    labels = amounts.pairs(sentence)
    if labels:
        params["labels"] = labels
    level = next((w for w in sentence.low if w in _LEVELS), "")
    if level:
        params["pod_security"] = level
    sentence.take_words(_FRAME_WORDS | _LEVELS)
    if not name:
        return Asked(
            "namespace",
            params,
            kind="Namespace",
            problem="what should it be called? Say e.g. 'create namespace team-a'",
        )
    return Asked("namespace", params, kind="Namespace", namespace=name)


def _new_name(sentence: Sentence, at: int) -> str:
    low = sentence.low
    for index, word in enumerate(low):  # "create a team-a namespace"
        before = sentence.at(index - 1)
        if (
            word in ("namespace", "ns")
            and index > at + 1
            and _NAME.match(before)
            and (before not in _FRAME_WORDS | FILLER and sentence.free(index - 1))
        ):
            sentence.take(index - 1, index)
            return before
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if word in ("called", "named") and _NAME.match(following) and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return following
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if (
            word in ("namespace", "ns")
            and _NAME.match(following)
            and following not in _FRAME_WORDS | FILLER
            and sentence.free(index + 1)
        ):
            sentence.take(index, index + 1)
            return following
    return ""


def _quota_fields(sentence: Sentence) -> dict[str, str]:
    hard: dict[str, str] = {}
    low = sentence.low
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        following = sentence.at(index + 1)
        if (word.isdigit() or word in amounts.NUMBERS) and following in _COUNTED:
            hard[_COUNTED[following]] = str(amounts.count(word))
            sentence.take(index, index + 1)
        elif (
            word in _COUNTED
            and sentence.at(index + 1).isdigit()
            and low[index - 1 : index] != ["max"]
        ):
            hard[_COUNTED[word]] = sentence.at(index + 1)
            sentence.take(index, index + 1)
    sizes, _ = amounts.sizes(sentence)
    for key, value in sizes.items():
        limit = amounts.near(
            low,
            low.index(value.lower()) if value.lower() in low else 0,
            frozenset({"limit", "limits"}),
        )
        hard[f"limits.{key}" if limit else f"requests.{key}"] = value
    for flag in ("hard",):  # kubectl create quota --hard=cpu=1,pods=10
        for part in sentence.flags.get(flag, "").split(","):
            key, _, value = part.partition("=")
            if key and value:
                hard[key] = value
    return hard


_QUOTA_KEYS = {"cpu": "requests.cpu", "memory": "requests.memory", "pods": "pods",
               "services": "services", "configmaps": "configmaps", "secrets": "secrets",
               "pvcs": "persistentvolumeclaims"}  # fmt: skip


def quota(sentence: Sentence, at: int) -> Asked:
    hard = _quota_fields(sentence)
    name = sentence.flags.get("name", "")
    where = _namespace_named(sentence)
    sentence.take_words(_FRAME_WORDS)
    params: dict[str, Any] = {"hard": hard}
    if name:
        params["name"] = name
    if not hard:
        return Asked(
            "quota",
            params,
            kind="Namespace",
            problem="a quota of what? Say e.g. 'set "
            "a quota of 4 cpu, 8Gi memory and 20 pods on shop'",
        )
    return Asked("quota", params, kind="Namespace", namespace=where or None)


def _namespace_named(sentence: Sentence) -> str:
    """The namespace a frame change is about: "on shop", "for shop", "of shop", "in shop",
    "namespace shop", "shop's quota"."""
    for index, word in enumerate(sentence.low):
        following = sentence.at(index + 1)
        if following in ("namespace", "ns"):
            following, index = sentence.at(index + 2), index + 1
        if (
            word in ("on", "for", "of", "in", "to", "namespace", "ns")
            and _NAME.match(following)
            and following not in _FRAME_WORDS | FILLER | _LEVELS
            and not following.isdigit()
            and sentence.free(index + 1)
        ):
            sentence.take(index, index + 1)
            return following
    return sentence.flags.get("namespace", "")


def limit_range(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    fields: dict[str, dict[str, str]] = {}
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        size = amounts.size_at(sentence, index)
        what = "memory" if size else ""
        if not size:
            following = sentence.at(index + 1)
            cpu = re.fullmatch(r"(\d+(?:\.\d+)?)(m)?", word)
            if cpu and (
                cpu[2]
                or following in CPU_WORDS
                or amounts.near(low, index, CPU_WORDS | MEMORY_WORDS) in CPU_WORDS
            ):
                size, what = (word if cpu[2] else cpu[1]), "cpu"
                sentence.take(index)
        if not size:
            continue
        before = " ".join(low[:index])  # the last cue said so far holds until another one
        cue = re.findall(r"\b(request|requests|limit|limits|max|maximum|min|minimum)\b", before)
        last = cue[-1] if cue else ""
        slot = {
            "request": "default_request",
            "requests": "default_request",
            "limit": "default",
            "limits": "default",
            "max": "max",
            "maximum": "max",
            "min": "min",
            "minimum": "min",
        }.get(last, "")
        for each in [slot] if slot else ["default_request", "default"]:
            fields.setdefault(each, {})[what] = size
    where = _namespace_named(sentence)
    sentence.take_words(_FRAME_WORDS | {"containers", "container", "get", "gets"})
    if not fields:
        return Asked(
            "limitrange",
            {},
            kind="Namespace",
            problem="which defaults? Say e.g. "
            "'set default limits in shop to 500m cpu and 512Mi memory'",
        )
    return Asked("limitrange", {"limits": fields}, kind="Namespace", namespace=where or None)


def pod_security(sentence: Sentence, at: int) -> Asked:
    level = next((w for w in sentence.low if w in _LEVELS), "")
    said = " ".join(sentence.low)
    modes = [
        m for m in ("warn", "audit") if re.search(rf"\b(?:{m} (?:mode|only)|mode {m})\b", said)
    ]
    mode = modes[0] if modes else "enforce"
    where = _namespace_named(sentence)
    sentence.take_words(
        _FRAME_WORDS | _LEVELS | {"psa", "podsecurity", "standard", "standards", "policy"}
    )
    if not level:
        return Asked(
            "podsecurity",
            kind="Namespace",
            problem="which level? privileged, baseline or restricted",
        )
    return Asked(
        "podsecurity", {"level": level, "mode": mode}, kind="Namespace", namespace=where or None
    )


# -- access ---------------------------------------------------------------------------------

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
            _NAME.match(word)
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
            and _NAME.match(following)
            and following not in _ACCESS_WORDS | set(_RESOURCES) | set(_ROLE_LEVELS)
            and following not in ("namespace", "ns", "deploy", "read", "list", "pod", "the")
            and not (word == "to" and following in _VERBS | _SPECIAL.keys())
        ):
            return following
        previous = at(index - 1)
        named = previous not in _ACCESS_WORDS | set(_RESOURCES)
        if word == "namespace" and index and _NAME.match(previous) and named:
            return previous
    return ""


READERS: dict[str, Reader] = {
    "namespace": namespace,
    "quota": quota,
    "limitrange": limit_range,
    "podsecurity": pod_security,
    "grant": grant,
    "revoke": revoke,
}
