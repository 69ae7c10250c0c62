"""Where a pod could run if a node pool grew: each Cluster API MachineDeployment, the node one
more of its machines would add (its shape), how far the pool may grow or shrink, and whether a
pod fits that node (the provisioning review's and consolidation's reading of the pools).

The shape is read the way the cluster-autoscaler's Cluster API provider reads it: from a Node of
the pool (label `node.cluster.x-k8s.io/pool=<MachineDeployment>`; a Ready, schedulable one
first): its allocatable, labels and taints; else, for a pool scaled to zero, from the
MachineDeployment's scale-from-zero annotations (`capacity.cluster-autoscaler.kubernetes.io/`
`cpu`, `memory`, `gpu-count`, `labels`, `taints`), plus the pool label its nodes will carry. A
pool with neither has no known shape: no pod is ever counted onto it. What one node carries for
itself is not the pool's: the labels naming it (`kubernetes.io/hostname`), and the taints a node
holds for a while (`node.kubernetes.io/...` such as not-ready or unschedulable, Cluster API's
and the cloud provider's start-up taints, the NodeReadinessPolicy's default taint, the
autoscaler's deletion marks). The bounds are the autoscaler's annotations
(`cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size`, `...-min-size`): no maximum
when absent, a minimum of 0.

A pod fits a shape when what it requests (per resource: the containers' sum, or the largest init
container when larger; one pod of the node's `pods`) fits the allocatable, its `nodeSelector` and
required node affinity match the labels, and it tolerates every NoSchedule and NoExecute taint.
Left out: the DaemonSet pods every new node also runs, pod (anti-)affinity, topology spread,
volume zones and host ports; the scheduler has the last word, and the validation reads it.

Must not know: proposals or the store; it reads through the agent's tools only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox
from core.policy.documents.readiness import DEFAULT_TAINT_KEY
from core.quantity import amount

POOL_LABEL = "node.cluster.x-k8s.io/pool"
GPU = "nvidia.com/gpu"
ZERO = "capacity.cluster-autoscaler.kubernetes.io/"  # the scale-from-zero annotations' prefix
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MACHINE = "cluster.x-k8s.io/machine"  # on a Node: the Machine it is
PODS_PER_NODE = 110.0  # a new node's pods when nothing says otherwise (the kubelet's default)
OWN_LABELS = frozenset({"kubernetes.io/hostname"})
PASSING_TAINTS = (
    "node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "node.cluster.x-k8s.io/",
    DEFAULT_TAINT_KEY, "ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler",
)  # fmt: skip
MD_FIELDS = ["metadata.annotations", "spec.replicas", "status.readyReplicas"]
NODE_FIELDS = [
    "metadata.labels", "metadata.annotations", "spec.taints", "spec.unschedulable",
    "status.allocatable", "status.conditions",
]  # fmt: skip

Resources = dict[str, float]  # cpu in cores, memory in bytes, the rest (pods, GPUs) in units


@dataclass(frozen=True)
class Shape:
    """What a new node of a pool offers and asks of the pods placed on it."""

    allocatable: Resources
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]
    source: str  # "node workers-abcde", "the scale-from-zero annotations"

    def said(self) -> str:
        """`4 CPU, 16Gi memory, no GPU`."""
        said = [amount_of(r, self.allocatable.get(r, 0.0)) for r in ("cpu", "memory")]
        gpus = self.allocatable.get(GPU, 0.0)
        return ", ".join([*said, amount_of(GPU, gpus) if gpus else "no GPU"])

    def cost(self) -> tuple[float, float, float]:
        """Cheaper first: no GPUs, then the fewest CPUs, then the least memory."""
        get = self.allocatable.get
        return get(GPU, 0.0), get("cpu", 0.0), get("memory", 0.0)


@dataclass(frozen=True)
class Pool:
    name: str
    namespace: str
    replicas: int  # spec.replicas: the machines asked for
    ready: int  # status.readyReplicas
    min_size: int
    max_size: int | None
    shape: Shape | None  # None: neither a node nor the annotations say what a node offers
    nodes: dict[str, bool] = field(default_factory=dict)  # its nodes now: Ready and schedulable
    machines: dict[str, str] = field(default_factory=dict)  # node -> the Machine it is

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def room(self) -> int | None:
        """How many machines it may still add; None: no maximum."""
        return None if self.max_size is None else max(0, self.max_size - self.replicas)


@dataclass(frozen=True)
class Pod:
    """A pod as a placement sees it."""

    key: str  # namespace/name
    requests: Resources
    selector: dict[str, str]
    affinity: dict[str, Any]
    tolerations: tuple[dict[str, Any], ...]


async def read(toolbox: Toolbox) -> list[Pool]:
    """Every MachineDeployment with its new node's shape; none where Cluster API is not served."""
    try:
        listed = await toolbox.call(
            "list_resources", kind="machinedeployments", output="fields", fields=MD_FIELDS,
            limit=500,
        )  # fmt: skip
    except ToolFailed as exc:
        if "has no resource type" in exc.reason:
            return []
        raise
    items = [i for i in listed.get("items", []) if isinstance(i, dict)]
    if not items:
        return []
    nodes = await toolbox.call(
        "list_resources", kind="Node", label_selector=POOL_LABEL, output="fields",
        fields=NODE_FIELDS, limit=5000,
    )  # fmt: skip
    by_pool: dict[str, list[dict[str, Any]]] = {}
    for node in nodes.get("items", []):
        pool = str((node.get("metadata.labels") or {}).get(POOL_LABEL))
        by_pool.setdefault(pool, []).append(node)
    return [_pool(item, by_pool.get(str(item["name"]), [])) for item in items]


def _pool(item: dict[str, Any], nodes: list[dict[str, Any]]) -> Pool:
    notes = {str(k): str(v) for k, v in (item.get("metadata.annotations") or {}).items()}
    name = str(item["name"])
    best = sorted(nodes, key=lambda n: (not _serving(n), str(n["name"])))
    shape = _from_node(best[0]) if best else _from_annotations(notes, name)
    return Pool(
        name=name, namespace=str(item.get("namespace") or "default"),
        replicas=int(item.get("spec.replicas") or 0),
        ready=int(item.get("status.readyReplicas") or 0),
        min_size=_count(notes.get(MIN_SIZE)) or 0, max_size=_count(notes.get(MAX_SIZE)),
        shape=shape, nodes={str(n["name"]): _serving(n) for n in nodes},
        machines={str(n["name"]): str((n.get("metadata.annotations") or {}).get(MACHINE) or "")
                  for n in nodes},
    )  # fmt: skip


def _serving(node: dict[str, Any]) -> bool:
    return is_ready(node.get("status.conditions")) and not node.get("spec.unschedulable")


def is_ready(conditions: object) -> bool:
    """Whether a node's conditions (a list as the API gives it) say Ready=True."""
    return isinstance(conditions, list) and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
        if isinstance(c, dict)
    )


def _from_node(node: dict[str, Any]) -> Shape:
    offered = node.get("status.allocatable") or {}
    labels = {str(k): str(v) for k, v in (node.get("metadata.labels") or {}).items()}
    return Shape(
        allocatable={str(k): amount(v) for k, v in offered.items()},
        labels={k: v for k, v in labels.items() if k not in OWN_LABELS},
        taints=tuple(_kept(node.get("spec.taints") or [])),
        source=f"node {node['name']}",
    )


def _from_annotations(notes: Mapping[str, str], pool: str) -> Shape | None:
    """The node the scale-from-zero annotations describe; None without CPU and memory."""
    cpu, memory = notes.get(ZERO + "cpu"), notes.get(ZERO + "memory")
    if not cpu or not memory:
        return None
    allocatable = {"cpu": amount(cpu), "memory": amount(memory), "pods": PODS_PER_NODE}
    if gpus := amount(notes.get(ZERO + "gpu-count")):
        allocatable[notes.get(ZERO + "gpu-type") or GPU] = gpus
    labels = dict(p.partition("=")[::2] for p in _parts(notes.get(ZERO + "labels")))
    taints = []
    for part in _parts(notes.get(ZERO + "taints")):  # key=value:Effect, or key:Effect
        pair, _, effect = part.rpartition(":") if ":" in part else (part, "", "NoSchedule")
        key, _, value = pair.partition("=")
        taints.append({"key": key, "value": value, "effect": effect})
    return Shape(
        allocatable=allocatable, labels={**labels, POOL_LABEL: pool},
        taints=tuple(_kept(taints)), source="its scale-from-zero annotations",
    )  # fmt: skip


def _parts(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _kept(taints: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [
        {k: str(t.get(k) or "") for k in ("key", "value", "effect")}
        for t in taints
        if isinstance(t, dict) and not str(t.get("key", "")).startswith(PASSING_TAINTS)
    ]


def _count(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None


# -- pods ------------------------------------------------------------------------------------


def pod_of(item: Mapping[str, Any]) -> Pod:
    """A pod from a `list_resources` row with the fields of `POD_FIELDS`."""
    spec = {k.removeprefix("spec."): v for k, v in item.items() if k.startswith("spec.")}
    return Pod(
        key=f"{item['metadata.namespace']}/{item['metadata.name']}",
        requests=requests(spec.get("containers") or [], spec.get("initContainers") or []),
        selector={str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
        affinity=dict(spec.get("affinity") or {}),
        tolerations=tuple(t for t in spec.get("tolerations") or [] if isinstance(t, dict)),
    )


POD_FIELDS = [
    "metadata.namespace", "metadata.name", "spec.containers", "spec.initContainers",
    "spec.nodeSelector", "spec.affinity", "spec.tolerations",
]  # fmt: skip


def requests(containers: list[dict[str, Any]], init: list[dict[str, Any]]) -> Resources:
    """What the pod asks of a node, as the scheduler sums it; a resource given only a limit
    (GPUs usually are) requests its limit."""
    total: Resources = {"pods": 1.0}
    for container in containers:
        for name, value in _asked(container).items():
            total[name] = total.get(name, 0.0) + value
    for container in init:
        for name, value in _asked(container).items():
            total[name] = max(total.get(name, 0.0), value)
    return total


def _asked(container: Mapping[str, Any]) -> Resources:
    resources = container.get("resources") or {}
    limits, asked = resources.get("limits") or {}, resources.get("requests") or {}
    return {str(k): amount(v) for k, v in {**limits, **asked}.items()}


def fits(pod: Pod, shape: Shape, free: Mapping[str, float] | None = None) -> bool:
    """Whether the pod may run on a new node of `shape`, with `free` left of it (default: all)."""
    room = shape.allocatable if free is None else free
    return (
        all(room.get(name, 0.0) >= value for name, value in pod.requests.items() if value)
        and all(shape.labels.get(k) == v for k, v in pod.selector.items())
        and _affine(pod.affinity, shape.labels)
        and all(_tolerated(taint, pod.tolerations) for taint in shape.taints
                if taint["effect"] in ("NoSchedule", "NoExecute"))
    )  # fmt: skip


def misfit(pod: Pod, shape: Shape) -> str:
    """Why the pod does not fit a new node of `shape`, the first reason as the scheduler orders
    them (taints, then labels, then resources)."""
    untolerated = [t for t in shape.taints if t["effect"] in ("NoSchedule", "NoExecute")
                   and not _tolerated(t, pod.tolerations)]  # fmt: skip
    if untolerated:
        return f"the pod does not tolerate its taint {', '.join(taint(t) for t in untolerated)}"
    if not all(shape.labels.get(k) == v for k, v in pod.selector.items()):
        return "its nodes lack the labels of the pod's nodeSelector"
    if not _affine(pod.affinity, shape.labels):
        return "its nodes do not match the pod's required node affinity"
    short = [n for n, v in pod.requests.items() if v and shape.allocatable.get(n, 0.0) < v]
    return "; ".join(f"a node has {amount_of(n, shape.allocatable.get(n, 0.0))}" for n in short)


def amount_of(resource: str, value: float) -> str:
    """`4 CPU`, `16Gi memory`, `1 GPU`, `110 pods`."""
    if resource == "memory":
        return f"{gib(value)} memory"
    said = {"cpu": "CPU", GPU: "GPU" if value == 1 else "GPUs"}.get(resource, resource)
    return f"{value:g} {said}"


def taint(t: Mapping[str, str]) -> str:
    return f"{t['key']}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}"


def gib(value: float) -> str:
    return f"{value / 2**30:g}Gi"


def _tolerated(taint: Mapping[str, str], tolerations: tuple[dict[str, Any], ...]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and str(t.get("value") or "") == taint["value"]:
            return True
    return False


def _affine(affinity: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """The required node affinity: any term whose every expression holds (a term on fields,
    such as a node's name, cannot hold for a node not yet made)."""
    required = (affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    return any(
        not term.get("matchFields")
        and all(_holds(e, labels) for e in term.get("matchExpressions") or [])
        for term in terms
    )


def _holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(expression.get("key")), str(expression.get("operator"))
    values = [str(v) for v in expression.get("values") or []]
    have = labels.get(key)
    if op == "In":
        return have in values
    if op == "NotIn":
        return have not in values
    if op == "Exists":
        return have is not None
    if op == "DoesNotExist":
        return have is None
    if op in ("Gt", "Lt") and have is not None and have.lstrip("-").isdigit() and values:
        return int(have) > int(values[0]) if op == "Gt" else int(have) < int(values[0])
    return False
