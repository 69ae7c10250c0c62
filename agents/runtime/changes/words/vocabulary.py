"""The words a request is read by: what each kind of word names (resources, images, verbs of
creating and deleting, ...) and where in a sentence a verb or a pair of words is.

Shared by `verbs` (which operation a request asks for), `named` (objects that name it) and the
readers of each kind of change (`workloads`, `creating`, `tenancy`, ...), so one word means one
thing everywhere. Must not know: any agent or cluster.
"""

from __future__ import annotations

import re

from agents.runtime.changes.words.amounts import PAIR
from agents.runtime.changes.words.sentence import Sentence, wordset

Found = tuple[str, int, int]  # the operation, where its verb is, how many words it takes

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
VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:-[a-z0-9.]+)?$")
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

GENERIC = frozenset(
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
        "grow",
        "shrink",
        "expand",
        "enlarge",
    }
)

AUTOSCALE_WORDS = wordset(
    "autoscale autoscaler autoscaling autoscaled auto-scale auto-scaling hpa "
    "horizontalpodautoscaler automatically"
)


def autoscaled(sentence: Sentence) -> bool:
    return bool(AUTOSCALE_WORDS & set(sentence.low)) or "auto scale" in " ".join(sentence.low)


def has_pairs(sentence: Sentence) -> bool:
    return any(PAIR.match(w) and not w.endswith("=") for w in sentence.raw) or any(
        w.endswith("-") and len(w) > 1 for w in sentence.low
    )


def within(sentence: Sentence, first: frozenset[str], second: frozenset[str], span: int) -> int:
    """The index of a word of `first` followed within `span` words by one of `second`; -1."""
    low = sentence.low
    for index, word in enumerate(low):
        if word in first and set(low[index + 1 : index + 1 + span]) & second:
            return index
    return -1


def verb_index(sentence: Sentence, verbs: frozenset[str], default: int = -1) -> int:
    """Where the request's verb is; `default` (-1: none) when it names the operation by its
    object alone ("checkout may lose at most one pod at a time")."""
    found = sentence.find(verbs, after=sentence.start - 1)
    return found if found != -1 else default


# Words of rights: a request holding one is about access (the Platform's), not an object.
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
