"""Objects that name the operation whatever the verb: "add a readiness probe" is a probe, "only
web may reach api" a network policy, "let carol read logs" access for a person.

`named(sentence)` tries each rule in order (the more specific object first: "remove the
liveness probe" is a probe, not a delete; "scale web automatically" an autoscaler, not a scale)
and returns (op, index, width) like `verbs.operation`, whose second step it is.

Must not know: any agent or cluster.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.runtime.changes.words import stored
from agents.runtime.changes.words.sentence import QUOTE, Sentence
from agents.runtime.changes.words.vocabulary import (
    ACCESS_WORDS,
    CPU_WORDS,
    CREATE_VERBS,
    DELETE_VERBS,
    GENERIC,
    IMAGE_REF,
    KNOWN_IMAGES,
    MEMORY_WORDS,
    PROBE_KINDS,
    WORKLOAD_KINDS,
    Found,
    autoscaled,
    has_pairs,
    verb_index,
    within,
)


def named(sentence: Sentence) -> Found | None:
    """The operation an object in the request names, with where its verb is; None if none."""
    for rule in _OBJECT_RULES:
        found = rule(sentence)
        if found is not None:
            return found
    return None


def _probe(sentence: Sentence) -> Found | None:
    probes = frozenset({"probe", "probes", "check", "checks", "healthcheck", "healthchecks"})
    at = within(sentence, PROBE_KINDS, probes, 2)
    if at == -1:
        at = within(
            sentence,
            frozenset({"health", "healthcheck"}),
            frozenset({"check", "checks", "probe", "endpoint"}),
            1,
        )
        if at == -1:
            at = sentence.find({"healthcheck", "healthchecks"})
    if at == -1:
        return None
    verbs = (
        GENERIC
        | CREATE_VERBS
        | DELETE_VERBS
        | {"needs", "need", "require", "requires", "disable", "enable", "point", "aim"}
    )
    verb = sentence.find(verbs)
    return None if verb == -1 else ("probe", verb, 1)  # "fix the health check" is a heal


def _autoscale(sentence: Sentence) -> Found | None:
    if not autoscaled(sentence) or (sentence.has("delete", "remove") and sentence.has("hpa")):
        return None
    word = sentence.find({"autoscale", "auto-scale", "scale"})
    return "autoscale", word, 1


def _budget(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    named = sentence.has("pdb", "poddisruptionbudget", "pdbs") or "disruption budget" in text
    kept = re.search(
        r"\bat least \S+ (?:\S+ )?(?:pods? |replicas? |instances? )?(?:stay|stays|remain|"
        r"remains|are|is|keep|be|available|running|up)\b.*\b(?:disruptions?|maintenance|drains?|"
        r"evictions?|upgrades?|available|up|running)\b"
        r"|\bat most \S+ (?:\S+ )?(?:pods? |replicas? |instances? )?(?:(?:is |are |be |go )?"
        r"(?:down|unavailable|missing|disrupted|evicted)|at a time|at once)\b"
        r"|\blose (?:at most |no more than |more than |only )?\S+ (?:\S+ )?"
        r"(?:pods?|replicas?|instances?)\b",
        text,
    )
    if not named and not kept:
        return None
    if named and sentence.find(DELETE_VERBS) != -1 and not kept:
        return None  # "delete the pdb of web": a delete
    return "pdb", verb_index(sentence, CREATE_VERBS | GENERIC), 1


_REACHING = re.compile(
    r"\b(?:reach|reaches|access|talk|talks|connect|connects|call|calls|send|"
    r"sends|contact|hit|speak|speaks|reachable|accessible|reached|accessed|contacted)\b"
)
_TRAFFIC = re.compile(
    r"\b(?:deny|block|forbid|isolate|disallow|restrict|lock down|allow|permit)\b.*\b(?:ingress|"
    r"egress|traffic|incoming|outgoing|connections?|inbound|outbound)\b"
)
_RIGHTS = frozenset(
    {
        "role",
        "rolebinding",
        "permission",
        "permissions",
        "rights",
        "admin",
        "edit",
        "view",
        "read",
        "logs",
        "exec",
        "secrets",
    }
)


def _network_policy(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    named = sentence.has("networkpolicy", "netpol", "networkpolicies") or "network polic" in text
    if named and sentence.find(DELETE_VERBS) == sentence.start:
        return None
    only = sentence.has("only", "except") and _REACHING.search(text) and not sentence.has(*_RIGHTS)
    if not (named or only or _TRAFFIC.search(text) or sentence.has("isolate")):
        return None
    if sentence.has("ingress") and (sentence.has("host", "path") or _host_like(sentence)):
        return None  # an Ingress object, read by `_ingress`
    verbs = frozenset(
        {
            "deny",
            "block",
            "allow",
            "permit",
            "isolate",
            "restrict",
            "only",
            "forbid",
            "disallow",
            "let",
            "create",
            "add",
        }
    )
    return "netpol", verb_index(sentence, verbs), 1


def _host_like(sentence: Sentence) -> bool:
    return any(
        re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", w) and not IMAGE_REF.match(w)
        for w in sentence.low
    )


def _ingress(sentence: Sentence) -> Found | None:
    routed = (
        sentence.has("route", "routing", "routes")
        and sentence.has("service", "svc")
        and (any(w.startswith("/") for w in sentence.low) or _host_like(sentence))
    )  # "create a route from path /app to service web"
    published = sentence.has("publish", "expose") and _host_like(sentence)
    if not sentence.has("ingress", "ingresses") and not routed and not published:
        return None
    if sentence.find(DELETE_VERBS) == sentence.start:
        return None
    text = " ".join(sentence.low)
    if (sentence.has("networkpolicy", "netpol") or "network polic" in text) and not (
        sentence.has("host", "path") or _host_like(sentence)
    ):
        return None  # a NetworkPolicy's ingress rules ("a network policy denying all ingress")
    if not (
        _host_like(sentence)
        or sentence.has("host", "path")
        or sentence.find(CREATE_VERBS) != -1
        or sentence.has("expose", "route", "publish")
    ):
        return None
    return "ingress", verb_index(sentence, CREATE_VERBS | {"expose", "route"}), 1


def _toleration(sentence: Sentence) -> Found | None:
    if sentence.has("failure", "failures", "outage", "outages", "loss", "downtime", "crashes"):
        return None  # "make web tolerate node failures": resilience work, not a taint's
    at = sentence.find({"toleration", "tolerations", "tolerate", "tolerates"})
    return None if at == -1 else ("tolerate", verb_index(sentence, GENERIC, at), 1)


def _node_selector(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    named = sentence.has("nodeselector", "node-selector") or "node selector" in text
    pinned = re.search(
        r"\b(?:pin|schedule|run|runs|place|put|keep|move|land|lands)\b.*\b(?:on|onto|to)\b\s+"
        r"(?:only\s+)?(?:the\s+)?(?:\S+\s+)?(?:nodes?\b|node-\S+)",
        text,
    )
    if not named and not (pinned and (has_pairs(sentence) or re.search(r"\bnode-\S+", text))):
        return None
    return (
        "node_selector",
        verb_index(sentence, GENERIC | {"pin", "schedule", "run", "place", "keep"}),
        1,
    )


_NODE_VERBS = frozenset({"cordon", "uncordon", "drain", "taint", "untaint", "label", "evict"})


def _spread(sentence: Sentence) -> Found | None:
    at = sentence.find({"spread", "distribute", "spreading"})
    if at == -1:
        text = " ".join(sentence.low)
        if not re.search(
            r"\b(?:different|separate|distinct|each|every)\s+(?:nodes?|zones?)\b", text
        ):
            return None
        if sentence.has(*_NODE_VERBS):
            return None  # "cordon every node": the nodes themselves, not pods over them
        at = -1
    return "spread", at, 1


def _quota(sentence: Sentence) -> Found | None:
    at = sentence.find({"quota", "quotas", "resourcequota", "resourcequotas"})
    capped = re.search(r"\b(?:cap|limit)\b.*\bat\s+\d+\s+(?:pods|services|configmaps|secrets|"
                       r"pvcs|claims|jobs|deployments)\b", " ".join(sentence.low))  # fmt: skip
    if at == -1 and capped:  # "cap staging at 10 pods": a namespace's object count
        return "quota", sentence.find({"cap", "limit"}), 1
    if at == -1:
        return None
    if sentence.find(GENERIC | CREATE_VERBS | {"cap", "limit", "restrict", "apply"}) == -1:
        return None  # "show the resource quotas in team-a": a question, no verb of ours
    if _new_namespace(sentence):
        return None  # a new namespace with a quota
    return "quota", verb_index(sentence, GENERIC | CREATE_VERBS, at), 1


def _new_namespace(sentence: Sentence) -> bool:
    """Whether the words create a namespace ("create namespace dev with a quota of 10 pods",
    "make a new ns for ci"), not a thing in one ("create a quota in namespace team-a")."""
    low = sentence.low
    for index, word in enumerate(low):
        if word not in ("namespace", "ns"):
            continue
        before = index - 1
        while before >= 0 and low[before] in ("a", "an", "the", "new", "fresh", "another"):
            if low[before] in ("new", "fresh", "another"):  # "new namespace team-a, quota ..."
                return True
            before -= 1
        if before >= 0 and low[before] in ("create", "make", "add", "provision", "set"):
            return True
    return False


def _limit_range(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    if not (
        sentence.has("limitrange", "limitranges")
        or "limit range" in text
        or re.search(r"\bdefault (?:cpu |memory |mem )?(?:limits?|requests?)\b", text)
        or re.search(r"\b(?:limits?|requests?) by default\b", text)
        or (re.search(r"\bdefaults? to\b", text) and sentence.has(*CPU_WORDS, *MEMORY_WORDS))
    ):
        return None
    if _new_namespace(sentence):
        return None
    valued = any(re.fullmatch(r"\d+(?:\.\d+)?[a-z]*", w) for w in sentence.low)
    if not valued and sentence.find((GENERIC | CREATE_VERBS | {"apply"}) - {"limit"}) == -1:
        return None  # "show the limit ranges in team-a": a question ("limit" is its noun)
    return "limitrange", verb_index(sentence, GENERIC | CREATE_VERBS), 1


def _pod_security(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    if "pod security" not in text and not sentence.has("pod-security", "podsecurity", "psa"):
        return None
    if sentence.find({"create", "new"}) != -1 and sentence.has("namespace"):
        return None
    return "podsecurity", verb_index(sentence, GENERIC | {"enforce"}), 1


def _taint(sentence: Sentence) -> Found | None:
    at = sentence.find({"taint", "taints", "tainted"})
    if at == -1:
        return None
    removing = sentence.find(DELETE_VERBS | {"untaint", "clear"}) != -1 or any(
        w.endswith("-") for w in sentence.low
    )
    return ("untaint" if removing else "taint"), at, 1


_PEOPLE_VERBS = frozenset(
    {
        "let",
        "allow",
        "permit",
        "grant",
        "give",
        "make",
        "add",
        "bind",
        "authorize",
        "authorise",
        "enable",
    }
)
RIGHTS_VERBS = frozenset(
    {
        "read",
        "view",
        "see",
        "list",
        "get",
        "watch",
        "edit",
        "write",
        "create",
        "update",
        "patch",
        "delete",
        "exec",
        "port-forward",
        "manage",
        "deploy",
        "scale",
        "restart",
        "modify",
        "change",
        "administer",
        "access",
        "look",
        "inspect",
        "tail",
    }
)
_SUBJECT_WORDS = frozenset({"user", "group", "team", "serviceaccount", "sa"})


def _service_account(sentence: Sentence) -> Found | None:
    """A new ServiceAccount ("create a service account ci-bot"), never access given to one
    ("give the service account ci-bot permission to list pods")."""
    text = " ".join(sentence.low)
    if not (sentence.has("serviceaccount", "sa") or "service account" in text):
        return None
    at = sentence.find(CREATE_VERBS - {"give", "set", "put"})
    if at == -1 or sentence.has(*ACCESS_WORDS, *_RIGHTS):
        return None
    return "serviceaccount", at, 1


def _access(sentence: Sentence) -> Found | None:
    low = sentence.low
    text = " ".join(low)
    revoke = sentence.find({"revoke", "unbind", "deny"})
    if revoke != -1 and (sentence.has(*ACCESS_WORDS) or "service account" in text):
        return "revoke", revoke, 1
    removing = sentence.find(DELETE_VERBS | {"take", "strip", "pull"})
    if (
        removing != -1
        and sentence.has("access", "rights", "permissions", "role")
        and (sentence.low[removing] != "take" or sentence.has("away", "back"))
    ):
        return "revoke", removing, 1  # "take away her access to staging"
    whose = re.search(r"\b\w+'?s (?:access|permissions?|rights|role)\b|\baccess (?:of|for)\b", text)
    access = sentence.has("access", "permission", "permissions", "rights", "role")
    if removing != -1 and access and (whose or sentence.has("from")):
        return "revoke", removing, 1
    receives = re.search(r"\b(?:could|can|may|should)\s+\S+\s+(?:get|have|receive|be given)\b.*"
                         r"\b(?:access|rights|permissions?|role)\b", text)  # fmt: skip
    if receives:  # "could she get read access to the pod logs": a request for someone
        return "grant", sentence.find({"get", "have", "receive", "given"}), 1
    role = sentence.find({"role", "rolebinding", "clusterrole", "roles"})
    creating = sentence.find({"create", "add", "make", "setup", "define"})
    if role != -1 and creating != -1 and creating < role:
        return "grant", creating, 1  # "create a read-only role for pods bound to reader-sa"
    verb = sentence.find(_PEOPLE_VERBS)
    if verb == -1 or (verb > sentence.start + 1 and low[sentence.start] not in _PEOPLE_VERBS):
        return None
    rest = set(low[verb + 1 :])
    if rest & ACCESS_WORDS or ("service account" in text and rest & RIGHTS_VERBS):
        return "grant", verb, 1
    if low[verb] in ("let", "allow", "permit", "authorize", "authorise", "enable"):
        # "let carol read logs in shop": a subject, then what they may do
        subject_then_right = any(
            low[i] in RIGHTS_VERBS for i in range(verb + 2, min(len(low), verb + 6))
        )
        if subject_then_right and low[verb + 1] not in ("me", "us"):
            return "grant", verb, 1
        if rest & _SUBJECT_WORDS and rest & RIGHTS_VERBS:
            return "grant", verb, 1
    return None


_SERVICE_TYPE = re.compile(r"\b(?:cluster ?ip|node ?port|load ?balancer|lb)\b")


def _service(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    switched = sentence.has("traffic") and re.search(
        r"\b(?:switch|shift|move|send|route|direct|cut|point|flip)\w*\b.*\b(?:to|over|towards)\b",
        text,
    )
    if switched and not sentence.has("ingress", "path", "egress", "deny", "block", "only"):
        verbs = frozenset(
            {"switch", "shift", "move", "send", "route", "direct", "cut", "point", "flip"}
        )
        return "service", verb_index(sentence, verbs), 1
    if not sentence.has("service", "svc", "services"):
        return None
    port = sentence.has("targetport", "target-port") or "target port" in text
    selector = sentence.has("selector", "selectors")
    typed = _SERVICE_TYPE.search(text) and not sentence.has("expose")
    if typed and sentence.find({"create", "new"}) == -1:  # "make web a NodePort service"
        return "service", verb_index(sentence, GENERIC | {"switch", "turn", "convert"}), 1
    pointed = re.search(
        r"\b(?:point|route|send|direct|redirect|aim|switch|shift|move|flip|repoint|retarget)\w*"
        r"\b.*\b(?:at|to|towards|onto)\b",
        text,
    )
    if not (port or selector or pointed):
        return None
    if sentence.has("expose") or sentence.find({"create", "new"}) != -1:
        return None
    verbs = GENERIC | {"point", "route", "fix", "send", "direct", "redirect", "aim", "switch",
                        "shift", "flip", "repoint", "retarget"}  # fmt: skip
    return "service", verb_index(sentence, verbs), 1


_ARTICLES = frozenset({"a", "an", "the", "new", "up", "fresh", "separate", "two", "three", "some"})


def _namespace(sentence: Sentence) -> Found | None:
    """ "create (a new) namespace X", "set up a namespace called X": the namespace is what the
    verb makes, not where something else goes ("create a pod in the X namespace")."""
    low = sentence.low
    for verb in range(sentence.start, len(low)):
        if low[verb] not in ("create", "make", "setup", "add", "provision", "set", "new"):
            continue
        if low[verb] == "set" and sentence.at(verb + 1) != "up":
            continue
        following = low[verb + 1 : verb + 5]
        for offset, word in enumerate(following):
            if word in ("namespace", "ns", "namespaces"):
                named = [w for w in following[:offset] if w not in _ARTICLES]
                if len(named) <= 1:  # "create a namespace", "create a team-a namespace"
                    return "namespace", verb, 1
                break
    return None


def _expose(sentence: Sentence) -> Found | None:
    low = sentence.low
    if _host_like(sentence):
        return None  # "publish web on shop.example.com": an Ingress route
    at = sentence.find({"expose", "publish"})
    if at != -1:
        return "expose", at, 1
    text = " ".join(low)
    if re.search(
        r"\b(?:create|add|make|give|put|set up|setup|need)\w*\b.*\b(?:service|svc)\b.*\b"
        r"(?:for|to|in front of|pointing|targeting)\b",
        text,
    ):
        verbs = {"create", "add", "make", "give", "put", "setup", "set", "need", "needs"}
        return "expose", sentence.find(verbs), 1
    if re.search(r"\bmake\b.*\b(?:reachable|accessible|available)\b", text):
        return "expose", sentence.find({"make"}), 1
    return None


def _create(sentence: Sentence) -> Found | None:
    low = sentence.low
    verbs = CREATE_VERBS - {"set", "give", "put", "configure", "add"} | {"add"}
    verb = sentence.find(verbs)
    kind = sentence.find(WORKLOAD_KINDS)
    image = next((i for i, w in enumerate(low) if IMAGE_REF.match(w) or w in KNOWN_IMAGES), -1)
    quoted = any(w.startswith(QUOTE[0]) for w in low)
    runs = sentence.has("runs", "running", "executes", "execute")
    if verb != -1 and low[verb] == "deploy" and kind == -1:
        return None  # "deploy web to staging": the deploy intent's (GitOps)
    if kind != -1 and (verb != -1 or runs or quoted) and low[kind] != "deploy":
        if verb != -1 and low[verb] in ("add",) and not (image != -1 or quoted):
            return None
        return "create", verb if verb != -1 else kind, 1
    if verb != -1 and low[verb] in ("run", "start", "launch", "spin") and (image != -1 or quoted):
        return "create", verb, 1
    return None


# Order matters: the more specific object first ("remove the liveness probe" is a probe, not a
# delete; "scale web automatically" an autoscaler, not a scale).
_OBJECT_RULES: tuple[Callable[[Sentence], Found | None], ...] = (
    _probe,
    _autoscale,
    _budget,
    _ingress,
    _network_policy,
    _toleration,
    _node_selector,
    _taint,
    _quota,
    _limit_range,
    _pod_security,
    stored.mounted,
    stored.new_secret,
    _service_account,
    _access,
    stored.new_claim,
    stored.resized,
    _service,
    stored.configmap_named,
    _namespace,
    _expose,
    _spread,
    _create,
)
