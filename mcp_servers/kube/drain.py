"""Planning a node drain: which pods move, which budgets block, in what order.

`plan` reads the node's pods and the PodDisruptionBudgets of their namespaces and sorts each pod
as kubectl drain does: DaemonSet and mirror pods stay (their controller would put them right
back), pods without a controller or with emptyDir data are refused unless `force` /
`delete_emptydir_data` say losing them is fine, everything else is evicted. Evictions are
ordered in waves so that no wave takes more pods of a budget than its `disruptionsAllowed`; a
budget that allows none blocks its pods until it does. Each workload's expected disruption is the
most of its pods a single wave takes away (replacements come up between waves).

`evictions.execute` carries a plan out. Knows nothing of MCP (`tools_drain`) and nothing of the
sandbox.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

from core.connection import Api, Json
from core.errors import NotFound, PermissionDenied
from mcp_servers.common import arguments
from mcp_servers.kube.settings import KubeSettings

Action = Literal["evict", "skip", "refuse"]

MIRROR = "kubernetes.io/config.mirror"
_WORKLOAD_PATHS = {
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets/{name}",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments/{name}",
    "StatefulSet": "/apis/apps/v1/namespaces/{ns}/statefulsets/{name}",
    "ReplicationController": "/api/v1/namespaces/{ns}/replicationcontrollers/{name}",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs/{name}",
}


@dataclass(frozen=True)
class PodMove:
    pod: str  # namespace/name
    action: Action
    reason: str
    workload: str = ""  # Kind/namespace/name of the top controller, "" for a bare pod
    controller_uid: str = ""  # uid of the pod's direct controller (finds its replacements)
    pdb: str = ""  # namespace/name of the budget that governs it
    wave: int | None = None  # 1-based eviction wave; None: not evicted now


@dataclass(frozen=True)
class Budget:
    pdb: str
    disruptions_allowed: int
    current_healthy: int
    desired_healthy: int
    pods_on_node: list[str]
    blocks: bool  # allows no disruption now: its pods wait


@dataclass(frozen=True)
class Disruption:
    workload: str
    replicas: int | None
    moving: int  # of its pods on this node
    unavailable_at_once: int  # the most a single wave takes away
    waves: int


@dataclass(frozen=True)
class DrainPlan:
    node: str
    cordoned: bool
    pods: list[PodMove]
    budgets: list[Budget]
    order: list[list[str]]  # waves of pods evicted together
    blocked: list[PodMove]
    disruption: list[Disruption]

    @property
    def refused(self) -> list[PodMove]:
        return [p for p in self.pods if p.action == "refuse"]

    def as_dict(self) -> Json:
        out = asdict(self)
        out["refused"] = [asdict(p) for p in self.refused]
        return out


# -- plan ------------------------------------------------------------------------------------


def plan(
    api: Api,
    node: str,
    settings: KubeSettings,
    *,
    force: bool = False,
    delete_emptydir_data: bool = False,
) -> DrainPlan:
    arguments.name(node, argument="node")
    if settings.namespaces is not None:
        raise PermissionDenied(
            "this server is confined to some namespaces, and a drain touches a whole node "
            "(cordon, pods of every namespace); use a server without --namespaces"
        )
    found = api.get(f"/api/v1/nodes/{node}", what=f"node {node}")
    pods = api.get("/api/v1/pods", fieldSelector=f"spec.nodeName={node}").get("items") or []
    budgets = _budgets(api, {p["metadata"]["namespace"] for p in pods})
    owners = _Owners(api)
    moves = [_classify(p, budgets, owners, force, delete_emptydir_data) for p in pods]
    moves = _order(sorted(moves, key=lambda m: m.pod), budgets)
    return DrainPlan(
        node=node,
        cordoned=bool((found.get("spec") or {}).get("unschedulable")),
        pods=moves,
        budgets=[_budget_view(key, pdb, moves) for key, pdb in sorted(budgets.items())],
        order=_waves(moves),
        blocked=[m for m in moves if m.action == "evict" and m.wave is None],
        disruption=_disruption(moves, owners),
    )


def _budgets(api: Api, namespaces: Iterable[str]) -> dict[str, Json]:
    found: dict[str, Json] = {}
    for ns in sorted(namespaces):
        path = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
        for pdb in api.get(path).get("items") or []:
            found[f"{ns}/{pdb['metadata']['name']}"] = pdb
    return found


def _classify(
    pod: Json, budgets: dict[str, Json], owners: _Owners, force: bool, emptydir: bool
) -> PodMove:
    meta = pod["metadata"]
    key = f"{meta['namespace']}/{meta['name']}"
    controller = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")), None)
    finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    if MIRROR in (meta.get("annotations") or {}):
        return PodMove(key, "skip", "mirror pod: the kubelet owns it")
    if controller and controller.get("kind") == "DaemonSet":
        return PodMove(key, "skip", "DaemonSet-managed pod: its DaemonSet recreates it here")
    if meta.get("deletionTimestamp"):
        return PodMove(key, "skip", "already terminating")
    workload = owners.top(meta["namespace"], controller) if controller else ""
    uid = str(controller.get("uid", "")) if controller else ""
    if not controller and not finished and not force:
        return PodMove(key, "refuse", "declares no controller: lost for good (force=True)")
    has_emptydir = any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or [])
    if has_emptydir and not finished and not emptydir:
        return PodMove(
            key, "refuse", "has emptyDir data, lost on eviction (delete_emptydir_data=True)",
            workload, uid,
        )  # fmt: skip
    matching = [k for k, b in budgets.items() if _selects(b, meta)]
    if len(matching) > 1:
        return PodMove(
            key, "refuse", f"selected by more than one PodDisruptionBudget "
            f"({', '.join(matching)}): the API refuses to evict it; keep one budget",
            workload, uid,
        )  # fmt: skip
    reason = "finished pod" if finished else "evicted; its controller recreates it elsewhere"
    if not controller:
        reason = "declares no controller: deleted for good (force)"
    return PodMove(key, "evict", reason, workload, uid, matching[0] if matching else "")


def _order(moves: list[PodMove], budgets: dict[str, Json]) -> list[PodMove]:
    """Waves: at most `disruptionsAllowed` pods of a budget per wave; none while it allows 0."""
    taken: dict[str, int] = {}
    ordered = []
    for move in moves:
        if move.action != "evict" or not move.pdb:
            ordered.append(_with_wave(move, 1 if move.action == "evict" else None))
            continue
        allowed = _allowed(budgets[move.pdb])
        index = taken.get(move.pdb, 0)
        taken[move.pdb] = index + 1
        wave = index // allowed + 1 if allowed > 0 else None
        reason = move.reason if wave else f"blocked: {move.pdb} allows no disruption now"
        ordered.append(PodMove(**{**asdict(move), "wave": wave, "reason": reason}))
    return ordered


def _with_wave(move: PodMove, wave: int | None) -> PodMove:
    return PodMove(**{**asdict(move), "wave": wave})


def _waves(moves: list[PodMove]) -> list[list[str]]:
    count = max((m.wave or 0 for m in moves), default=0)
    return [[m.pod for m in moves if m.wave == n] for n in range(1, count + 1)]


def _allowed(pdb: Json) -> int:
    return int((pdb.get("status") or {}).get("disruptionsAllowed") or 0)


def _budget_view(key: str, pdb: Json, moves: list[PodMove]) -> Budget:
    status = pdb.get("status") or {}
    return Budget(
        pdb=key,
        disruptions_allowed=_allowed(pdb),
        current_healthy=int(status.get("currentHealthy") or 0),
        desired_healthy=int(status.get("desiredHealthy") or 0),
        pods_on_node=[m.pod for m in moves if m.pdb == key],
        blocks=_allowed(pdb) < 1 and any(m.pdb == key for m in moves),
    )


def _disruption(moves: list[PodMove], owners: _Owners) -> list[Disruption]:
    by_workload: dict[str, list[PodMove]] = {}
    for move in moves:
        if move.action == "evict" and move.workload:
            by_workload.setdefault(move.workload, []).append(move)
    out = []
    for workload, group in sorted(by_workload.items()):
        per_wave: dict[int, int] = {}
        for move in group:
            if move.wave is not None:
                per_wave[move.wave] = per_wave.get(move.wave, 0) + 1
        out.append(
            Disruption(
                workload=workload,
                replicas=owners.replicas.get(workload),
                moving=len(group),
                unavailable_at_once=max(per_wave.values(), default=0),
                waves=len(per_wave),
            )
        )
    return out


def _selects(pdb: Json, meta: Json) -> bool:
    selector = (pdb.get("spec") or {}).get("selector")
    if selector is None:
        return False  # policy/v1: a null selector selects nothing, an empty one everything
    labels = meta.get("labels") or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_matches(e, labels) for e in selector.get("matchExpressions") or [])


def _matches(expression: Json, labels: dict[str, str]) -> bool:
    key, operator = expression.get("key", ""), expression.get("operator")
    values = expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    return key not in labels  # DoesNotExist


class _Owners:
    """Owner chains (pod -> ReplicaSet -> Deployment), each object read once per plan."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.replicas: dict[str, int | None] = {}
        self._seen: dict[tuple[str, str, str], Json | None] = {}

    def top(self, namespace: str, ref: Json) -> str:
        kind, name = str(ref.get("kind")), str(ref.get("name"))
        obj = self._get(namespace, kind, name)
        parent = next(
            (o for o in ((obj or {}).get("metadata") or {}).get("ownerReferences") or []
             if o.get("controller") and o.get("kind") in _WORKLOAD_PATHS),
            None,
        )  # fmt: skip
        if parent is not None:
            return self.top(namespace, parent)
        key = f"{kind}/{namespace}/{name}"
        replicas = ((obj or {}).get("spec") or {}).get("replicas")
        self.replicas[key] = int(replicas) if isinstance(replicas, int) else None
        return key

    def _get(self, namespace: str, kind: str, name: str) -> Json | None:
        key = (namespace, kind, name)
        if key not in self._seen:
            path = _WORKLOAD_PATHS.get(kind)
            try:
                self._seen[key] = (
                    self.api.get(path.format(ns=namespace, name=name)) if path else None
                )
            except NotFound:
                self._seen[key] = None
        return self._seen[key]
