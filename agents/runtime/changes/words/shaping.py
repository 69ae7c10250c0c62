"""Readers of changes to a workload's pod template beyond its containers' values: probes,
where its pods may run (node selector, tolerations) and how they spread over nodes or zones.

"add a readiness probe to web on /healthz port 8080", "give api a liveness probe that runs
`cat /tmp/healthy` every 5s", "remove the startup probe from worker", "set web's readiness
probe initial delay to 10s"; "run web only on nodes with disktype=ssd", "pin web to node-2",
"remove the node selector from web"; "let web tolerate dedicated=gpu:NoSchedule", "make web
tolerate the gpu taint"; "spread web across zones", "make sure web's pods land on different
nodes". Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import Sentence
from agents.runtime.changes.words.vocabulary import DELETE_VERBS, PROBE_KINDS
from agents.runtime.changes.words.workloads import LINKS, container_named

_EFFECTS = {
    "noschedule": "NoSchedule",
    "prefernoschedule": "PreferNoSchedule",
    "noexecute": "NoExecute",
}
_TAINT = re.compile(
    r"^(?P<key>[A-Za-z0-9./_-]+?)(?:=(?P<value>[A-Za-z0-9._-]*))?"
    r"(?::(?P<effect>NoSchedule|PreferNoSchedule|NoExecute))?(?P<off>-)?$",
    re.I,
)
_REMOVE = DELETE_VERBS | {"disable", "clear", "unset", "drop"}
_PROBE_WORDS = frozenset(
    {
        "probe",
        "probes",
        "check",
        "checks",
        "health",
        "healthcheck",
        "healthchecks",
        "endpoint",
        "http",
        "https",
        "get",
        "httpget",
        "hitting",
        "hits",
        "calling",
        "at",
        "path",
        "url",
        "against",
        "using",
        "via",
        "that",
        "which",
        "runs",
        "run",
        "command",
        "exec",
        "checking",
        "every",
        "and",
        "both",
    }
)


def probe(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    kinds = [k for k in ("liveness", "readiness", "startup") if k in low]
    if not kinds and sentence.has("health", "healthcheck", "healthchecks"):
        kinds = ["readiness"]
    sentence.take_words(PROBE_KINDS)
    removing = sentence.at(at) in _REMOVE or (
        sentence.find(_REMOVE) != -1 and not sentence.has("add")
    )
    params: dict[str, Any] = {"probes": kinds or ["readiness"]}
    if removing:
        sentence.take_words(_PROBE_WORDS | LINKS)
        return Asked("probe", params | {"remove": True})
    params |= _timings(sentence)
    if sentence.focus > sentence.start:  # "we're retiring /livez: could you point it at /healthz"
        sentence.take(*(i for i in range(sentence.focus) if sentence.low[i].startswith("/")))
    path = amounts.path(sentence)
    port = amounts.port(sentence)
    command = sentence.command()
    if command:
        params["command"] = command
        sentence.take_words({w for w in low if w.startswith("\u27e8q")})
    if path:
        params["path"] = path
        port = port or amounts.bare_number(
            sentence, after=low.index(path.lower()) if path.lower() in low else -1
        )
    if port:
        params["port"] = port
    if sentence.has("tcp", "socket", "tcpsocket"):
        params["handler"] = "tcp"
        sentence.take_words({"tcp", "socket", "tcpsocket"})
    elif command:
        params["handler"] = "exec"
    elif path or sentence.has("http", "https", "httpget"):
        params["handler"] = "http"
    if sentence.has("https"):
        params["scheme"] = "HTTPS"
    container = container_named(sentence)
    if container:
        params["container"] = container
    sentence.take_words(_PROBE_WORDS | LINKS | {"port"})
    return Asked("probe", params)


def _timings(sentence: Sentence) -> dict[str, int]:
    found: dict[str, int] = {}
    low = sentence.low
    text = " ".join(low)
    for key, cues in (
        ("initial_delay", {"delay", "after", "initialdelayseconds", "wait", "waits"}),
        ("period", {"every", "period", "interval", "periodseconds", "each"}),
        ("timeout", {"timeout", "timeoutseconds", "within"}),
    ):
        seconds = amounts.duration(sentence, after=frozenset(cues))
        if seconds:
            found[key] = seconds
    failures = re.search(
        r"\b(?:after|threshold(?: of)?|failurethreshold)\s+(\d+)\s*(?:failures|"
        r"failed|misses|tries|attempts)?\b",
        text,
    )
    if failures and ("fail" in text or "threshold" in text or "attempt" in text):
        found["failure_threshold"] = int(failures[1])
        sentence.take_words({failures[1], "failures", "failure", "threshold", "failurethreshold"})
    sentence.take_words({"initial", "seconds", "second", "sec", "secs", "s", "of"})
    return found


def node_selector(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    removing = sentence.find(_REMOVE) != -1
    values: dict[str, str | None] = dict(amounts.pairs(sentence))
    for index, word in enumerate(low):
        if index in sentence.used:
            continue
        if re.fullmatch(r"node-?[a-z0-9][a-z0-9.-]*", word) and word not in ("nodes", "node"):
            values["kubernetes.io/hostname"] = word  # "pin web to node-2"
            sentence.take(index)
    sentence.take_words(
        {
            "node",
            "nodes",
            "selector",
            "nodeselector",
            "node-selector",
            "only",
            "labelled",
            "labeled",
            "label",
            "with",
            "that",
            "have",
            "has",
            "onto",
            "pin",
            "schedule",
            "run",
            "place",
            "keep",
            "where",
        }
        | LINKS
    )
    if removing and not values:
        return Asked("node_selector", {"values": {}, "clear": True})
    if removing:
        return Asked("node_selector", {"values": {k: None for k in values}})
    if not values:
        return Asked(
            "node_selector",
            problem="on which nodes? Say e.g. 'run web only on nodes "
            "with disktype=ssd' or 'pin web to node-2'",
        )
    return Asked("node_selector", {"values": values})


def tolerate(sentence: Sentence, at: int) -> Asked:
    removing = sentence.find(_REMOVE) != -1
    params: dict[str, Any] = {}
    for index, word in enumerate(sentence.raw):
        if index in sentence.used:
            continue
        match = _TAINT.match(word)
        if match and ("=" in word or ":" in word):
            params = {
                "key": match["key"],
                "value": match["value"] or "",
                "effect": _EFFECTS.get((match["effect"] or "").lower(), ""),
            }
            sentence.take(index)
            break
    effect = next((_EFFECTS[w] for w in sentence.low if w in _EFFECTS), "")
    if effect and not params.get("effect"):
        params["effect"] = effect
    sentence.take_words(
        set(_EFFECTS)
        | {"toleration", "tolerations", "tolerate", "tolerates", "effect", "key", "any", "all"}
        | LINKS
    )
    if "key" not in params:  # "tolerate the gpu taint": the words beside "taint" name it
        params["hint"] = _beside(sentence, {"taint", "taints", "tainted"})
    if removing:
        params["remove"] = True
    return Asked("tolerate", params)


def _beside(sentence: Sentence, anchors: set[str]) -> list[str]:
    """The words right before or after an anchor word ("the gpu taint", "taint gpu"), read."""
    low = sentence.low
    for index, word in enumerate(low):
        if word not in anchors:
            continue
        sentence.take(index)
        for near in (index - 1, index + 1):
            if sentence.free(near) and low[near] not in LINKS | {"in"}:
                sentence.take(near)
                return [low[near]]
    return []


def spread(sentence: Sentence, at: int) -> Asked:
    low = sentence.low
    zones = any(w.startswith("zone") for w in low) or sentence.has("az", "azs", "region")
    params: dict[str, Any] = {
        "topology": "topology.kubernetes.io/zone" if zones else "kubernetes.io/hostname",
        "hard": sentence.has("must", "strictly", "require", "required", "always", "never"),
    }
    skew = re.search(
        r"\b(?:skew|apart|difference)\D{0,12}(\d+)|\b(\d+)\s+(?:apart|skew)\b", " ".join(low)
    )
    if skew:
        params["max_skew"] = int(skew[1] or skew[2])
        sentence.take_words({skew[1] or skew[2]})
    sentence.take_words(
        {
            "spread",
            "distribute",
            "spreading",
            "across",
            "over",
            "between",
            "among",
            "evenly",
            "zones",
            "zone",
            "nodes",
            "node",
            "hosts",
            "host",
            "different",
            "separate",
            "distinct",
            "each",
            "every",
            "land",
            "lands",
            "sure",
            "make",
            "its",
            "must",
            "should",
            "strictly",
            "skew",
            "max",
            "maximum",
            "apart",
            "az",
            "azs",
            "availability",
            "topology",
            "run",
            "runs",
            "are",
            "is",
            "be",
            "so",
            "that",
        }
        | LINKS
    )
    return Asked("spread", params)


READERS: dict[str, Reader] = {
    "probe": probe,
    "node_selector": node_selector,
    "tolerate": tolerate,
    "spread": spread,
}
