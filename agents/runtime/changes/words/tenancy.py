"""Readers of a namespace's frame: creating one, its quota, its default limits, its pod
security level.

"create namespace team-a with a quota of 4 cpus, 8Gi memory and 20 pods", "set a quota of 10
pods on shop", "give containers in staging a default memory limit of 256Mi", "enforce
restricted pod security in shop". Who may do what in it is `access`'s. Must not know: any
agent.
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
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
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
            and NAME.match(before)
            and (before not in _FRAME_WORDS | FILLER and sentence.free(index - 1))
        ):
            sentence.take(index - 1, index)
            return before
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if word in ("called", "named") and NAME.match(following) and sentence.free(index + 1):
            sentence.take(index, index + 1)
            return following
    for index, word in enumerate(low):
        following = sentence.at(index + 1)
        if (
            word in ("namespace", "ns")
            and NAME.match(following)
            and following not in _FRAME_WORDS | FILLER
            and sentence.free(index + 1)
        ):
            sentence.take(index, index + 1)
            return following
    return ""


_UP_TO = frozenset({"to", "at", "of", "up", "most", "max", "maximum", "=", ":"})


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
        elif word in _COUNTED and low[index - 1 : index] != ["max"]:
            ahead = index + 1  # "pods 10", "pods to 10", "pods at most 10", "pods up to 10"
            while sentence.at(ahead) in _UP_TO and ahead < index + 4:
                ahead += 1
            if sentence.at(ahead).isdigit():
                hard[_COUNTED[word]] = sentence.at(ahead)
                sentence.take(*range(index, ahead + 1))
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
            and NAME.match(following)
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


def service_account(sentence: Sentence, at: int) -> Asked:
    """A new ServiceAccount: "create a service account ci-bot in namespace ci", "add a
    serviceaccount named deployer to shop", "make an sa called builder"."""
    low = sentence.low
    account = next(i for i, w in enumerate(low) if w in _ACCOUNT_WORDS)
    named = [i + 1 for i, w in enumerate(low) if w in ("named", "called")]
    after = named[0] if named else account + 1
    name = sentence.flags.get("name", "") or (
        sentence.at(after) if NAME.match(sentence.at(after)) and sentence.at(after) not in
        _FRAME_WORDS | FILLER | {"in", "to", "for", "on", "named", "called"} else ""
    )  # fmt: skip
    if name and not sentence.flags.get("name"):
        sentence.take(after)
    where = _namespace_named(sentence)
    sentence.take_words(_ACCOUNT_WORDS | {"service", "a", "an", "new", "named", "called",
                                          sentence.at(at)})  # fmt: skip
    if not name:
        return Asked("serviceaccount", problem="what should it be called? Say e.g. 'create a "
                     "service account ci-bot in ci'")  # fmt: skip
    return Asked("serviceaccount", {"name": name}, kind="ServiceAccount", namespace=where or None)


_ACCOUNT_WORDS = frozenset({"account", "serviceaccount", "sa"})


READERS: dict[str, Reader] = {
    "serviceaccount": service_account,
    "namespace": namespace,
    "quota": quota,
    "limitrange": limit_range,
    "podsecurity": pod_security,
}
