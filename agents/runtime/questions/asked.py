"""What a question asks, once read: one frozen type per family, and what an answer carries.

A `Question` is one of seven families, each with only the parameters its answers use:
`Inventory` (what is there: images, the heaviest pods, workloads missing limits, counts and
lists), `Access` (who may do what, from RBAC and an agent's tool allow-list), `History` (what
changed, and when), `Events` (what the cluster reported: warnings, of one object, lately),
`Capacity` (how full the nodes are, which are under pressure), `Overview` (the cluster at a
glance) and `PolicyCheck` (would the policy store allow an action: a dry run, never the
action).

`Answered` is what every answer returns: `text` for the person (short, citing objects as
Kind namespace/name, saying how sure it is and what it could not see) and `data`, the evidence
rows as JSON, for a model, a test or a channel that renders tables.

Must not know: the cluster, the servers, any agent; this module is data only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

TOP = 10  # rows shown when the question names no number
MAX_TOP = 50

InventoryTopic = Literal["images", "top", "restarts", "check", "count", "list"]
Check = Literal[
    "limits", "requests", "probes", "readiness", "liveness", "startup", "pdb", "root", "latest",
    "privileged",
]  # fmt: skip
State = Literal["", "running", "pending", "failed", "succeeded", "ready", "not-ready", "crashing"]
AccessTopic = Literal["who", "may", "rights"]
HistoryTopic = Literal["changes", "rollout"]
CapacityTopic = Literal["fullness", "pressure", "free", "rank"]
Metric = Literal["", "cpu", "memory", "pods"]


@dataclass(frozen=True)
class Inventory:
    topic: InventoryTopic
    text: str
    namespace: str | None  # None: every namespace the agent may read
    kind: str = "pods"  # a resource word (pods, deployments) or "workloads"
    check: Check | None = None  # topic check: what the workloads lack or do
    metric: Metric = ""  # topic top: cpu or memory
    state: State = ""  # count and list: only objects in this state
    count: int = TOP  # rows to show
    said_namespace: bool = False  # the namespace came from the words, not the conversation
    owner: str = ""  # pods only: those of the workload of this name ("the pods of web")


@dataclass(frozen=True)
class Access:
    topic: AccessTopic
    text: str
    namespace: str | None
    verb: str = ""  # a Kubernetes verb (get, delete, patch, ...)
    resource: str = ""  # as the person said it: pods, secrets, logs, deployments/scale
    subject: str = ""  # "alice", "group:NAME", "NAMESPACE/NAME", "agent:NAME", "me"
    said_namespace: bool = False


@dataclass(frozen=True)
class History:
    topic: HistoryTopic
    text: str
    namespace: str | None
    names: tuple[str, ...] = ()  # words that may name the object asked about
    kind: str = ""  # the kind the words said, if any
    since_seconds: int = 86_400
    since_midnight: bool = False  # "today": since the day began, on the cluster's clock
    window: str = "the last day"  # the window in words, for the answer
    said_namespace: bool = False


@dataclass(frozen=True)
class Events:
    text: str
    namespace: str | None
    name: str = ""  # the object they are about, as said ("web": its pods' and ReplicaSets' too)
    kind: str = ""  # the kind of object they are about, as a grammar word (pods, nodes, ...)
    warnings: bool = False  # Warning events only
    since_seconds: int | None = None
    window: str = ""  # the window in words, for the answer ("" when none was said)
    count: int = TOP
    said_namespace: bool = False


@dataclass(frozen=True)
class Logs:
    text: str
    namespace: str | None
    name: str = ""  # the pod, or the workload whose pods' logs are asked for, as said
    container: str = ""  # "" the pod's default (or only) container
    previous: bool = False  # the instance that ran before the last restart
    lines: int = 30  # the last lines asked for, per pod
    grep: str = ""  # only lines holding this ("error" when errors are asked for)
    since_seconds: int | None = None
    window: str = ""  # the window in words, for the answer ("" when none was said)
    said_namespace: bool = False


@dataclass(frozen=True)
class Overview:
    text: str


@dataclass(frozen=True)
class Capacity:
    topic: CapacityTopic
    text: str
    metric: Metric = ""
    most: bool = True  # rank: the most (True) or the least
    count: int = TOP


@dataclass(frozen=True)
class PolicyCheck:
    text: str
    namespace: str | None
    action: str  # the policy store's action type: scale, delete, restart, rollback, drain, ...
    names: tuple[str, ...]  # words that may name the target
    kind: str = ""  # the kind the words said, if any
    replicas: int | None = None  # scale: to this many
    by: int | None = None  # scale: by this many (negative: fewer)
    actor: str = ""  # who the words say would act ("I", "the dev team", "alice")
    said_namespace: bool = False


Question = Inventory | Access | History | Events | Logs | Capacity | Overview | PolicyCheck


@dataclass(frozen=True)
class Answered:
    text: str
    data: dict[str, Any] = field(default_factory=dict)
