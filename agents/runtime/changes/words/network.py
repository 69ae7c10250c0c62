"""Readers of networking changes: exposing a workload as a Service, pointing a Service at other
pods or another port, network policies, and Ingress routes.

"expose web on port 80", "expose web as a LoadBalancer on 8080", "create a service for api
targeting port 8080"; "point the web service at the green deployment", "switch traffic to the
green version", "set the selector of service web to app=web", "set the target port of
service web to 8080"; "only web may reach api", "deny all ingress in shop", "web may only talk
to the db", "allow egress only to DNS and pods in namespace data", "isolate the db"; "create
an ingress for web at shop.example.com/", "route /app to service web-service".

A network policy's parties are read as roles, not positions: the pods it selects (`target`)
and the peers it allows (`peers`), by direction. With no direction word, the place of "only"
decides: "only web may reach api" limits who reaches api (ingress of api), "web may only
reach api" limits where web goes (egress of web). Must not know: any agent.
"""

from __future__ import annotations

import re
from typing import Any

from agents.runtime.changes.words import amounts
from agents.runtime.changes.words.asked import Asked, Reader
from agents.runtime.changes.words.sentence import FILLER, Sentence
from agents.runtime.changes.words.workloads import LINKS

_TYPES = {
    "clusterip": "ClusterIP",
    "nodeport": "NodePort",
    "loadbalancer": "LoadBalancer",
    "lb": "LoadBalancer",
}
_PUBLIC = frozenset({"publicly", "externally", "internet", "outside", "public", "external"})
_NAMED = frozenset({"named", "called", "as", "name"})
_REACH = frozenset(
    {
        "reach",
        "reaches",
        "access",
        "accesses",
        "talk",
        "talks",
        "connect",
        "connects",
        "call",
        "calls",
        "send",
        "sends",
        "contact",
        "hit",
        "hits",
        "go",
        "goes",
        "get",
        "speak",
        "egress",
        "ingress",
        "traffic",
    }
)
# "api should only be reachable from frontend": what comes before is reached, what follows
# ("from", "by") reaches it
_PASSIVE = frozenset({"reachable", "accessible", "reached", "accessed", "contacted"})
_INGRESS = frozenset({"ingress", "incoming", "inbound"})
_EGRESS = frozenset({"egress", "outgoing", "outbound"})
_DNS = frozenset({"dns", "kube-dns", "coredns"})
_EVERYWHERE = frozenset({"anywhere", "everything", "everyone", "internet", "world"})
_DENY = re.compile(
    r"\b(?:den(?:y|ies|ying|ied)|block(?:s|ing|ed)?|forbid(?:s|ding)?|disallow(?:s|ing|ed)?|"
    r"isolat(?:e|es|ing|ed)|lock(?:s|ing)? down|default[ -]deny)\b"
)
_CIDR = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}$")
_NOISE = (
    FILLER
    | LINKS
    | {
        "nothing",
        "nobody",
        "else",
        "default",
        "only",
        "may",
        "can",
        "should",
        "be",
        "is",
        "are",
        "allowed",
        "and",
        "or",
        "except",
        "but",
        "all",
        "other",
        "any",
        "traffic",
        "pods",
        "pod",
        "network",
        "policy",
        "policies",
        "networkpolicy",
        "netpol",
        "that",
        "which",
        "allows",
        "allow",
        "permit",
        "permits",
        "deny",
        "denies",
        "block",
        "blocks",
        "isolate",
        "restrict",
        "lock",
        "let",
        "create",
        "add",
        "make",
        "plus",
        "also",
        "rest",
        "everything",
        "not",
        "affected",
        "unaffected",
        "stays",
        "stay",
        "open",
        "namespace",
        "ns",
        "tcp",
        "udp",
        "port",
        "ports",
        "inside",
        "within",
        "same",
        "connections",
        "connection",
        "in",
        "label",
        "labelled",
        "labeled",
        "forbid",
        "disallow",
        "able",
        "permitted",
        "by",
        "allowing",
        "permitting",
        "denying",
        "denied",
        "blocking",
        "blocked",
        "forbids",
        "forbidding",
        "disallows",
        "disallowing",
        "isolates",
        "isolating",
        "restricts",
        "restricting",
    }
    | _REACH
    | _PASSIVE
    | _INGRESS
    | _EGRESS
)


def expose(sentence: Sentence, at: int) -> Asked:
    flags = sentence.flags
    params: dict[str, Any] = {}
    port = int(flags["port"]) if flags.get("port", "").isdigit() else 0
    target = int(flags["target-port"]) if flags.get("target-port", "").isdigit() else 0
    for index, word in enumerate(sentence.low):  # "80:8080", "80->8080"
        pair = re.fullmatch(r"(\d{1,5})(?::|->)(\d{1,5})", word)
        if pair and index not in sentence.used:
            port, target = int(pair[1]), int(pair[2])
            sentence.take(index)
    text = " ".join(sentence.low)
    aimed = re.search(
        r"\b(?:target(?:ing)?|forward(?:ing|s)?|to container|target port|"
        r"targetport)\s+(?:port\s+)?(\d{1,5})\b",
        text,
    )
    if aimed and not target:
        target = int(aimed[1])
        sentence.take_words(
            {aimed[1], "target", "targeting", "forwarding", "forward", "forwards", "targetport"}
        )
    port = port or amounts.port(sentence) or amounts.bare_number(sentence, after=at)
    if port:
        params["port"] = port
    if target:
        params["target_port"] = target
    kind = flags.get("type", "").lower().replace("-", "")
    kind = kind or next((w for w in sentence.low if w in _TYPES), "")
    if kind in _TYPES:
        params["type"] = _TYPES[kind]
    elif sentence.has(*_PUBLIC):
        params["type"] = "LoadBalancer"
    elif "node port" in text:
        params["type"] = "NodePort"
    name = (
        flags.get("name")
        or _name_after(sentence, _NAMED)
        or _name_after(sentence, frozenset({"service", "svc"}))
    )  # "a NodePort service web-np"
    if name:
        params["name"] = name
    if sentence.has("udp"):
        params["protocol"] = "UDP"
    sentence.take_words(
        set(_TYPES)
        | _PUBLIC
        | {
            "service",
            "svc",
            "port",
            "ports",
            "type",
            "reachable",
            "accessible",
            "available",
            "cluster",
            "inside",
            "front",
            "pointing",
            "targeting",
            "node",
            "udp",
            "tcp",
            "expose",
            "publish",
            "create",
            "make",
            "need",
            "needs",
            "and",
        }
        | LINKS
    )
    return Asked("expose", params)


def service(sentence: Sentence, at: int) -> Asked:
    """A Service pointed elsewhere: a new selector (key=value words), other pods ("at the green
    deployment", "to the green version"), or another target port."""
    text = " ".join(sentence.low)
    params: dict[str, Any] = {}
    selector = amounts.pairs(sentence)
    if selector:
        params["selector"] = selector
    port = re.search(
        r"\b(?:target ?port|targetport)\b\D{0,40}?(\d{1,5})\b|\bto port (\d{1,5})", text
    )
    if port:
        params["target_port"] = int(port[1] or port[2])
        sentence.take_words({port[1] or port[2]})
    kind = re.search(r"\b(cluster ?ip|node ?port|load ?balancer|lb)\b", text)
    if kind:  # "change the web service to a NodePort", "make api a load balancer"
        params["type"] = _TYPES[kind[1].replace(" ", "")]
        said = {"type", "a", "an", "to", "into", "change", "switch", "turn", "convert", "make"}
        sentence.take_words(set(kind[1].split()) | said)
    if not selector and not port and not kind:
        towards = sentence.find({"at", "to", "towards", "onto", "over"}, after=at)
        while towards != -1 and sentence.at(towards + 1) in ("the", "over", "to", "new"):
            towards += 1
        words = [
            w
            for i, w in enumerate(sentence.low)
            if (
                i > towards
                and w not in _NOISE
                and w
                not in ("version", "deployment", "pods", "release", "now", "live", "green", "blue")
            )
            or (i > towards and w in ("green", "blue"))
        ]
        if towards != -1 and words:
            params["to"] = [w for w in words if w not in ("version", "release", "now", "live")]
            sentence.take(*range(towards, len(sentence.low)))
    sentence.take_words(
        {
            "selector",
            "selectors",
            "targetport",
            "target",
            "port",
            "point",
            "route",
            "send",
            "direct",
            "redirect",
            "aim",
            "switch",
            "shift",
            "move",
            "traffic",
            "all",
            "live",
            "fix",
            "cut",
            "over",
        }
        | LINKS
    )
    if not params:
        return Asked(
            "service",
            kind="Service",
            problem="point it where? Say e.g. 'set the "
            "selector of service web to app=web', 'point the web service at the green "
            "deployment' or 'set the target port of service web to 8080'",
        )
    return Asked("service", params, kind="Service")


def network_policy(sentence: Sentence, at: int) -> Asked:
    ends = [i for i in sentence.stops if i > max(at, 0)]
    if ends:  # "...? we'll open things up one by one": a later sentence says no more of it
        sentence.take(*range(ends[0] + 1, len(sentence.low)))
    low = sentence.low
    text = " ".join(low)
    params: dict[str, Any] = {}
    where = _home(sentence)
    name = sentence.flags.get("name") or _name_after(sentence, frozenset({"named", "called"}))
    if name:
        params["name"] = name
    params["ports"] = _ports(sentence)
    target, peers, direction = _roles(sentence, text)
    deny = bool(_DENY.search(text))
    params["direction"] = direction
    params["target"] = [p["word"] for p in target if "word" in p]
    params["peers"] = [{k: v for k, v in p.items() if k != "at"} for p in peers]
    params["deny"] = deny and not peers
    sentence.take(*range(len(low)))  # the parties are in params; nothing names one object
    if not params["target"] and not peers and not deny:
        return Asked(
            "netpol",
            params,
            problem="allow what? Say e.g. 'only web may reach api', "
            "'deny all ingress in shop' or 'allow egress from web only to DNS'",
        )
    return Asked("netpol", params, namespace=where or None)


Party = dict[str, Any]


def _roles(sentence: Sentence, text: str) -> tuple[list[Party], list[Party], str]:
    """(the pods the policy selects, the peers it allows, its direction), from who sends to
    whom, a guarding verb ("lock api down"), and where "only" stands."""
    direction = _direction(sentence)
    guarded = _guarded(sentence)  # "lock api down", "restrict web's outgoing traffic"
    source, destination = _parties(sentence)
    if guarded:
        source = [p for p in source if p.get("word") != guarded]
        destination = [p for p in destination if p.get("word") != guarded]
        if direction == "egress":
            source = [{"word": guarded, "at": -1}]
        else:
            destination, direction = [{"word": guarded, "at": -1}], "ingress"
    if direction == "":
        first_source = min((p["at"] for p in source), default=len(sentence.low))
        only = next((i for i, w in enumerate(sentence.low) if w == "only"), -1)
        if re.search(r"\b(?:traffic|connections?) from\b", text) and not destination:
            direction = "egress"
        elif source and destination:  # "web may only talk to db" limits where web goes
            direction = "egress" if only > first_source else "ingress"
        else:
            direction = "ingress"
    target, peers = (source, destination) if direction == "egress" else (destination, source)
    if sentence.has("isolate") and not target and peers:
        target, peers = peers, []
    return target, peers, direction


def _home(sentence: Sentence) -> str:
    """Where a policy lives: "in [namespace] X" not said of its peers ("pods in namespace X"
    is a peer), or "-n X"; the words are marked read."""
    if sentence.flags.get("namespace"):
        return sentence.flags["namespace"]
    low = sentence.low
    for index, word in enumerate(low):
        peer = low[index - 1 : index] in (["pods"], ["pod"], ["workloads"]) and sentence.at(
            index + 1
        ) in ("namespace", "ns")  # "pods in namespace data" is a peer; "the pods in shop" here
        if word != "in" or peer:
            continue
        skip = 2 if sentence.at(index + 1) in ("namespace", "ns") else 1
        name = sentence.at(index + skip)
        if name and name not in _NOISE and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
            sentence.take(*range(index, index + skip + 1))
            return name
    return ""


_GUARDS = frozenset({"lock", "restrict", "protect", "isolate", "secure", "shield", "firewall"})


def _guarded(sentence: Sentence) -> str:
    """The workload a guarding verb is said of ("lock api down", "restrict web's traffic"):
    the policy selects its pods, whatever the other words say of its peers."""
    low = sentence.low
    for index, word in enumerate(low):
        if word not in _GUARDS:
            continue
        for near in range(index + 1, min(len(low), index + 4)):
            said = low[near]
            if said in ("the", "down", "off") or said in _GUARDS:
                continue
            if said not in _NOISE and not said.isdigit() and not said.startswith("\u27e8"):
                return said
            break
    return ""


def _direction(sentence: Sentence) -> str:
    ingress = sentence.find(_INGRESS)
    egress = sentence.find(_EGRESS)
    if ingress != -1 and (egress == -1 or ingress < egress):
        return "ingress"
    if egress != -1:
        return "egress"
    return ""


def _parties(sentence: Sentence) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(sources, destinations): who sends and who receives, as peers: {"word": name} for a
    workload, {"namespace": ns}, {"dns": True}, {"everywhere": True} or {"cidr": c}."""
    low = sentence.low
    sources: list[dict[str, Any]] = []
    destinations: list[dict[str, Any]] = []
    side = sources
    index = 0
    while index < len(low):
        word = low[index]
        if index in sentence.used:
            index += 1
            continue
        if word in _PASSIVE:
            destinations.extend(sources)  # said before the passive verb: the one reached
            sources.clear()
            side = sources
        elif word in ("from", "by"):
            side = sources
        elif word in ("to", "into", "towards") or (
            word in _REACH and word not in ("traffic", "egress", "ingress")
        ):
            side = destinations
        elif word in ("namespace", "ns", "namespaces") and index + 1 < len(low):
            following = low[index + 1]
            if following not in _NOISE:
                side.append({"namespace": following, "at": index})
                index += 2
                continue
            before = low[index - 1] if index else ""
            if before not in _NOISE and side and side[-1].get("word") == before:
                side[-1] = {"namespace": before, "at": index - 1}  # "the monitoring namespace"
        elif (peer := _peer(low, index)) is not None:
            side.append(peer)
        index += 1
    return _first_word_is_source(sentence, sources, destinations)


def _peer(low: list[str], index: int) -> dict[str, Any] | None:
    """The party one word names: DNS, everywhere, a CIDR, or a workload by name."""
    word = low[index]
    if word in _DNS:
        return {"dns": True, "at": index}
    if word in _EVERYWHERE or (word == "all" and low[index + 1 : index + 2] == ["namespaces"]):
        return {"everywhere": True, "at": index}
    if _CIDR.match(word):
        return {"cidr": word, "at": index}
    named = (
        word not in _NOISE
        and not word.isdigit()
        and not word.startswith("\u27e8")
        and not re.fullmatch(r"\d+/(tcp|udp)", word)
        and low[index - 1 : index] not in (["named"], ["called"], ["in"], ["port"])
    )
    return {"word": word, "at": index} if named else None


def _first_word_is_source(
    sentence: Sentence, sources: list[dict[str, Any]], destinations: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ "only web may reach api": web was read before any "from", so it landed with the
    sources, as it should; "web can only talk to db" likewise. Namespace words right after
    "in" at the end ("in shop") name where the policy lives, not a party."""
    ns = sentence.find({"in"})
    trailing = sentence.at(ns + 1) if ns != -1 else ""
    sources = [p for p in sources if p.get("word") != trailing]
    destinations = [p for p in destinations if p.get("word") != trailing]
    return sources, destinations


def _ports(sentence: Sentence) -> list[dict[str, Any]]:
    low = sentence.low
    ports: list[dict[str, Any]] = []
    for index, word in enumerate(low):
        if word in ("port", "ports") or re.fullmatch(r"\d{1,5}/(tcp|udp)", word):
            numbers = [word] if "/" in word else []
            look = index + 1
            while look < len(low) and (
                low[look].isdigit()
                or low[look] in ("and", ",", "or")
                or re.fullmatch(r"\d{1,5}/(tcp|udp)", low[look])
            ):
                if low[look] != "and" and low[look] != "or":
                    numbers.append(low[look])
                look += 1
            protocols = [p.upper() for p in ("tcp", "udp") if p in low[index : look + 4]]
            for number in numbers:
                value, _, proto = number.partition("/")
                for protocol in [proto.upper()] if proto else protocols or ["TCP"]:
                    entry = {"port": int(value), "protocol": protocol}
                    if entry not in ports:
                        ports.append(entry)
    return ports


def ingress(sentence: Sentence, at: int) -> Asked:
    params: dict[str, Any] = {}
    for index, word in enumerate(sentence.low):  # "shop.example.com/web"
        match = re.fullmatch(r"([a-z0-9-]+(?:\.[a-z0-9-]+)+)(/[A-Za-z0-9._~/-]*)", word)
        if match and index not in sentence.used:
            params["host"], params["path"] = match[1], sentence.raw[index][len(match[1]) :]
            sentence.take(index)
    params.setdefault("host", amounts.host(sentence))
    params.setdefault("path", amounts.path(sentence))
    port = amounts.port(sentence)
    if port:
        params["port"] = port
    name = sentence.flags.get("name") or _name_after(sentence, frozenset({"named", "called"}))
    if name:
        params["name"] = name
    klass = sentence.find({"class", "ingressclass"})
    if klass != -1 and sentence.free(klass + 1):
        params["class"] = sentence.at(klass + 1)
        sentence.take(klass, klass + 1)
    service_at = sentence.find({"service", "svc"})
    for near in (service_at + 1, service_at - 1) if service_at != -1 else ():
        named = sentence.at(near)  # "to service web-service", "for the web service"
        if sentence.free(near) and named not in _NOISE and not named.startswith(("/", "\u27e8")):
            params["service"] = named
            sentence.take(service_at, near)
            break
    params = {k: v for k, v in params.items() if v}
    sentence.take_words(
        {
            "ingress",
            "route",
            "routing",
            "routes",
            "rule",
            "host",
            "path",
            "traffic",
            "for",
            "at",
            "expose",
            "create",
            "add",
            "new",
            "url",
            "requests",
            "request",
            "send",
            "sends",
        }
        | LINKS
    )
    return Asked("ingress", params)


def _name_after(sentence: Sentence, cues: frozenset[str]) -> str:
    for index, word in enumerate(sentence.low):
        following = sentence.at(index + 1)
        named = word in cues and sentence.free(index + 1) and following not in _NOISE
        if named and re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", following):
            sentence.take(index, index + 1)
            return following
    return ""


READERS: dict[str, Reader] = {
    "expose": expose,
    "service": service,
    "netpol": network_policy,
    "ingress": ingress,
}
