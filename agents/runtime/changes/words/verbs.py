"""Which operation a request asks for: its verb, or the object a generic verb is applied to.

`operation(sentence)` returns (op, index, width): the operation and where its verb is. In
order, the first that matches decides:

1. A verb whose particle may come later ("take web down", "roll the api back") or a two-word
   verb ("scale up", "roll back", "spin down").
2. An object that names the operation whatever the verb: a probe ("add a readiness probe"), an
   autoscaler ("autoscale web", "add an HPA"), a disruption budget, a network policy ("only web
   may reach api", "deny all ingress"), an Ingress with a host or path, a toleration, a node
   selector, a spread over nodes or zones, a quota, a limit range, pod security, a ConfigMap,
   a taint, access for a person ("let carol read logs", "give bob edit access"), a volume's
   size ("resize the data pvc to 2Gi"), a Service's selector or target port, a new namespace,
   exposing a workload ("expose web on port 80", "create a service for web"), a new workload
   ("run redis:7 as cache", "create a cronjob that runs ... every night").
3. A verb that is the operation ("scale", "restart", "cordon", "drain", "delete", ...).
4. A generic verb ("set", "bump", "change", "give", "make", "add", "remove") takes its
   operation from what it is applied to: replicas, memory or CPU, the image, a variable, a label.

Must not know: any agent or cluster.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from agents.runtime.changes.words.amounts import MEMORY_SIZE, PAIR, count
from agents.runtime.changes.words.sentence import QUOTE, Sentence, kind_of, wordset

Found = tuple[str, int, int]

CPU_WORDS = frozenset({"cpu", "cpus", "core", "cores", "vcpu", "vcpus", "millicores", "millicpu"})
MEMORY_WORDS = frozenset({"memory", "mem", "ram"})
IMAGE_WORDS = frozenset({"image", "images", "tag", "version"})
ENV_WORDS = frozenset(
    {"env", "envs", "environment", "variable", "variables", "var", "vars", "envvar"}
)
LABEL_WORDS = frozenset(
    {"label", "labels", "annotation", "annotations", "annotate", "unlabel", "labelled", "labeled"}
)
REPLICA_WORDS = frozenset({"replica", "replicas", "instances", "instance", "copies", "copy"})
DELETE_VERBS = frozenset({"delete", "remove", "kill", "destroy", "rm", "drop", "purge", "erase"})
CREATE_VERBS = frozenset(
    {
        "create",
        "add",
        "make",
        "run",
        "start",
        "launch",
        "set",
        "setup",
        "put",
        "spin",
        "new",
        "give",
        "deploy",
        "configure",
        "define",
        "schedule",
    }
)
WORKLOAD_KINDS = frozenset(
    {"deployment", "deploy", "pod", "job", "cronjob", "statefulset", "sts", "daemonset", "cron"}
)
PROBE_KINDS = frozenset({"liveness", "readiness", "startup"})
_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:-[a-z0-9.]+)?$")
IMAGE_REF = re.compile(
    r"^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9_][A-Za-z0-9_.-]*$|^[a-z0-9._/-]+@sha256:[a-f0-9]{64}$"
)

# Images people name by their repository alone ("a nginx pod", "run busybox").
KNOWN_IMAGES = frozenset(
    {
        "nginx",
        "redis",
        "busybox",
        "postgres",
        "mysql",
        "alpine",
        "httpd",
        "memcached",
        "ubuntu",
        "python",
        "node",
        "mongo",
        "rabbitmq",
        "debian",
        "curl",
        "golang",
        "mariadb",
    }
)

_GENERIC = frozenset(
    {
        "set",
        "change",
        "bump",
        "increase",
        "raise",
        "decrease",
        "reduce",
        "lower",
        "make",
        "give",
        "update",
        "put",
        "adjust",
        "modify",
        "add",
        "remove",
        "drop",
        "unset",
        "delete",
        "use",
        "switch",
        "move",
        "allow",
        "cap",
        "limit",
        "configure",
    }
)
_PHRASES: tuple[tuple[str, str], ...] = (
    ("rollout restart", "restart"),
    ("rolling restart", "restart"),
    ("roll back", "undo"),
    ("go back", "undo"),
    ("scale up", "scale"),
    ("scale down", "scale"),
    ("scale out", "scale"),
    ("scale in", "scale"),
    ("bring up", "scale"),
    ("bring down", "scale"),
    ("take down", "scale"),
    ("shut down", "scale"),
    ("turn off", "scale"),
    ("spin down", "scale"),
    ("switch off", "scale"),
    ("rid of", "delete"),  # "get rid of the old job"
)
# A verb whose particle may come after its object: "take web down", "roll the redis deployment
# back"; the particle is looked for in the four words after the verb.
_SPLIT: dict[str, tuple[frozenset[str], str]] = {
    **{v: (frozenset({"down", "up", "off"}), "scale") for v in ("take", "bring", "shut", "turn")},
    "scale": (frozenset({"down", "up"}), "scale"),
    "roll": (frozenset({"back"}), "undo"),
}
_VERBS = {
    "scale": "scale",
    "rescale": "scale",
    "stop": "scale",
    "restart": "restart",
    "bounce": "restart",
    "recycle": "restart",
    "redeploy": "restart",
    "reboot": "restart",
    "kick": "restart",
    "reload": "restart",
    "rollback": "undo",
    "revert": "undo",
    "undo": "undo",
    "downgrade": "image",
    "pause": "pause",
    "resume": "resume",
    "unpause": "resume",
    "suspend": "pause",
    "unsuspend": "resume",
    "cordon": "cordon",
    "uncordon": "uncordon",
    "drain": "drain",
    "evacuate": "drain",
    "untaint": "untaint",
    "label": "labels",
    "annotate": "labels",
    "unlabel": "labels",
    "upgrade": "image",
    "kill": "delete",
    "delete": "delete",
    "destroy": "delete",
    "rm": "delete",
    "purge": "delete",
    "double": "scale",
    "triple": "scale",
    "halve": "scale",
    "expose": "expose",
    "autoscale": "autoscale",
    "grant": "grant",
    "revoke": "revoke",
}


def operation(sentence: Sentence) -> Found | None:
    """The operation the request asks for, where its verb is and how many words it takes."""
    if sentence.focus > sentence.start:  # the request after its context: read it first
        context, sentence.start = sentence.start, sentence.focus
        found = _operation(sentence)
        sentence.start = context
        if found is not None:
            return found
    return _operation(sentence)


def _operation(sentence: Sentence) -> Found | None:
    found = _particle(sentence) or _phrase(sentence)
    if found is not None:
        if found[0] == "scale" and _autoscaled(sentence):
            return "autoscale", found[1], found[2]
        return found
    for rule in _OBJECT_RULES:
        found = rule(sentence)
        if found is not None:
            return found
    return _verb(sentence)


def _particle(sentence: Sentence) -> Found | None:
    low = sentence.low
    if sentence.has("taint", "taints", "label", "labels", "probe", "toleration", "access"):
        return None  # "take the dedicated taint off node-1" removes a taint, scales nothing
    for index in range(sentence.start, len(low) - 1):
        particles, op = _SPLIT.get(low[index], (frozenset(), ""))
        if op and particles & set(low[index + 1 : index + 5]):
            return op, index, 1
    return None


def _phrase(sentence: Sentence) -> Found | None:
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentence.low)]
    for phrase, op in _PHRASES:
        if phrase in pairs[sentence.start :]:
            return op, pairs.index(phrase, sentence.start), 2
    return None


def _verb(sentence: Sentence) -> Found | None:
    low = sentence.low
    for index in range(sentence.start, len(low)):
        word = low[index]
        if word in _VERBS:
            op = _VERBS[word]
            if op == "labels" and not _has_pairs(sentence) and word != "unlabel":
                continue
            if op == "delete" and _by_object(sentence, index, counts=False) in ("env", "labels"):
                return _by_object(sentence, index, counts=False) or op, index, 1
            return op, index, 1
        if word in _GENERIC:
            meant = _by_object(sentence, index, counts=word not in ("add", "remove", "give"))
            if meant:
                return meant, index, 1
    return None


def _by_object(sentence: Sentence, at: int, *, counts: bool) -> str | None:
    """What a generic verb changes, from the words after it; a bare number is a replica count
    only after a verb that can mean that (`counts`)."""
    after = sentence.low[at + 1 :]
    said = set(after)
    if said & LABEL_WORDS:
        return "labels"
    raw = sentence.raw
    keys = [PAIR.match(w)["key"] for w in raw if PAIR.match(w)]  # type: ignore[index]
    if (
        said & ENV_WORDS
        or any(k.isupper() for k in keys)
        or any(re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", w) for w in raw)
    ):
        return "env"
    if said & (CPU_WORDS | MEMORY_WORDS) or any(MEMORY_SIZE.match(w) for w in after):
        return "resources"
    if said & REPLICA_WORDS:
        return "scale"
    if said & IMAGE_WORDS or any(IMAGE_REF.match(w) or _VERSION.match(w) for w in after):
        return "image"  # "move web to 1.27.3", "switch api to the newest 1.26 release"
    counted = any(
        w in ("to", "by") and n not in ("a", "an") and count(n) is not None
        for w, n in itertools.pairwise(after)
    ) or any(re.fullmatch(r"[+-]\d+", w) for w in after)
    if counts and counted:
        return "scale"  # "bump api by 2", "set web to 3", "increase api to 5"
    if sentence.low[at] in DELETE_VERBS and kind_of(after, loose=True):
        return "delete"  # "remove the api svc": a kind said, so an object, not a field
    return None


def _has_pairs(sentence: Sentence) -> bool:
    return any(PAIR.match(w) and not w.endswith("=") for w in sentence.raw) or any(
        w.endswith("-") and len(w) > 1 for w in sentence.low
    )


def _within(sentence: Sentence, first: frozenset[str], second: frozenset[str], span: int) -> int:
    """The index of a word of `first` followed within `span` words by one of `second`; -1."""
    low = sentence.low
    for index, word in enumerate(low):
        if word in first and set(low[index + 1 : index + 1 + span]) & second:
            return index
    return -1


def _verb_index(sentence: Sentence, verbs: frozenset[str], default: int = -1) -> int:
    """Where the request's verb is; `default` (-1: none) when it names the operation by its
    object alone ("checkout may lose at most one pod at a time")."""
    found = sentence.find(verbs, after=sentence.start - 1)
    return found if found != -1 else default


# -- objects that name the operation ---------------------------------------------------------


def _probe(sentence: Sentence) -> Found | None:
    probes = frozenset({"probe", "probes", "check", "checks", "healthcheck", "healthchecks"})
    at = _within(sentence, PROBE_KINDS, probes, 2)
    if at == -1:
        at = _within(
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
        _GENERIC
        | CREATE_VERBS
        | DELETE_VERBS
        | {"needs", "need", "require", "requires", "disable", "enable", "point", "aim"}
    )
    verb = sentence.find(verbs)
    return None if verb == -1 else ("probe", verb, 1)  # "fix the health check" is a heal


AUTOSCALE_WORDS = wordset(
    "autoscale autoscaler autoscaling autoscaled auto-scale auto-scaling hpa "
    "horizontalpodautoscaler automatically"
)


def _autoscaled(sentence: Sentence) -> bool:
    return bool(AUTOSCALE_WORDS & set(sentence.low)) or "auto scale" in " ".join(sentence.low)


def _autoscale(sentence: Sentence) -> Found | None:
    if not _autoscaled(sentence) or (sentence.has("delete", "remove") and sentence.has("hpa")):
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
    return "pdb", _verb_index(sentence, CREATE_VERBS | _GENERIC), 1


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
    return "netpol", _verb_index(sentence, verbs), 1


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
    if not (
        _host_like(sentence)
        or sentence.has("host", "path")
        or sentence.find(CREATE_VERBS) != -1
        or sentence.has("expose", "route", "publish")
    ):
        return None
    return "ingress", _verb_index(sentence, CREATE_VERBS | {"expose", "route"}), 1


def _toleration(sentence: Sentence) -> Found | None:
    if sentence.has("failure", "failures", "outage", "outages", "loss", "downtime", "crashes"):
        return None  # "make web tolerate node failures": resilience work, not a taint's
    at = sentence.find({"toleration", "tolerations", "tolerate", "tolerates"})
    return None if at == -1 else ("tolerate", _verb_index(sentence, _GENERIC, at), 1)


def _node_selector(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    named = sentence.has("nodeselector", "node-selector") or "node selector" in text
    pinned = re.search(
        r"\b(?:pin|schedule|run|runs|place|put|keep|move|land|lands)\b.*\b(?:on|onto|to)\b\s+"
        r"(?:only\s+)?(?:the\s+)?(?:\S+\s+)?(?:nodes?\b|node-\S+)",
        text,
    )
    if not named and not (pinned and (_has_pairs(sentence) or re.search(r"\bnode-\S+", text))):
        return None
    return (
        "node_selector",
        _verb_index(sentence, _GENERIC | {"pin", "schedule", "run", "place", "keep"}),
        1,
    )


def _spread(sentence: Sentence) -> Found | None:
    at = sentence.find({"spread", "distribute", "spreading"})
    if at == -1:
        text = " ".join(sentence.low)
        if not re.search(
            r"\b(?:different|separate|distinct|each|every)\s+(?:nodes?|zones?)\b", text
        ):
            return None
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
    if sentence.find({"namespace", "ns"}) != -1 and sentence.find({"create", "new", "make"}) != -1:
        return None  # a new namespace with a quota
    return "quota", _verb_index(sentence, _GENERIC | CREATE_VERBS, at), 1


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
    if sentence.find({"namespace", "ns"}) != -1 and sentence.find({"create", "new"}) != -1:
        return None
    return "limitrange", _verb_index(sentence, _GENERIC | CREATE_VERBS), 1


def _pod_security(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    if "pod security" not in text and not sentence.has("pod-security", "podsecurity", "psa"):
        return None
    if sentence.find({"create", "new"}) != -1 and sentence.has("namespace"):
        return None
    return "podsecurity", _verb_index(sentence, _GENERIC | {"enforce"}), 1


def _configmap(sentence: Sentence) -> Found | None:
    text = " ".join(sentence.low)
    at = sentence.find({"configmap", "configmaps", "cm"})
    if at == -1 and "config map" not in text:
        return None
    first = sentence.find(DELETE_VERBS | CREATE_VERBS | _GENERIC)
    deletes = first != -1 and sentence.low[first] in DELETE_VERBS and not _has_pairs(sentence)
    keyed = sentence.has("key", "keys", "entry", "entries", "from") or any(
        re.fullmatch(r"[A-Z][A-Z0-9_]+", w) for w in sentence.raw
    )  # "delete MODE from the app-config configmap": a key, not the ConfigMap
    if deletes and not keyed:
        return None  # "delete the configmap app-config": a delete
    if deletes:
        return "configmap", first, 1  # "remove key MODE from configmap app-config"
    if sentence.has("mount", "mounted", "mounts", "volume"):
        return "mount", _verb_index(sentence, frozenset({"mount", "add", "use", "attach"})), 1
    variable = any(re.fullmatch(r"[A-Z][A-Z0-9_]*", w) for w in sentence.raw)
    into_env = sentence.has("env", "environment", "envfrom", "variables", "vars")
    if into_env or (variable and sentence.has("key", "from")) or sentence.has("load", "inject"):
        verbs = frozenset({"use", "load", "add", "set", "inject", "put"})
        return "mount", _verb_index(sentence, verbs), 1
    return "configmap", first, 1


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
ACCESS_WORDS = frozenset(
    {
        "access",
        "permission",
        "permissions",
        "rights",
        "role",
        "rolebinding",
        "privileges",
        "admin",
        "administrator",
        "editor",
        "viewer",
        "read-only",
        "readonly",
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


STORAGE_WORDS = wordset("pvc pvcs claim volume storage disk persistentvolumeclaim volumeclaim")
GROW_VERBS = wordset("resize expand grow increase extend enlarge bump set make give raise change")


def _storage(sentence: Sentence) -> Found | None:
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
        return "service", _verb_index(sentence, verbs), 1
    if not sentence.has("service", "svc", "services"):
        return None
    port = sentence.has("targetport", "target-port") or "target port" in text
    selector = sentence.has("selector", "selectors")
    pointed = re.search(
        r"\b(?:point|route|send|direct|redirect|aim|switch|shift|move|flip|repoint|retarget)\w*"
        r"\b.*\b(?:at|to|towards|onto)\b",
        text,
    )
    if not (port or selector or pointed):
        return None
    if sentence.has("expose") or sentence.find({"create", "new"}) != -1:
        return None
    verbs = _GENERIC | {"point", "route", "fix", "send", "direct", "redirect", "aim", "switch",
                        "shift", "flip", "repoint", "retarget"}  # fmt: skip
    return "service", _verb_index(sentence, verbs), 1


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
    _access,
    _storage,
    _service,
    _configmap,
    _namespace,
    _expose,
    _spread,
    _create,
)
