"""Draining a node: a plan first (which pods move, which budgets block, in what order), then the
evictions themselves, retried while a PodDisruptionBudget forbids them.

`plan` reads the node's pods and the PodDisruptionBudgets of their namespaces and sorts each pod
as kubectl drain does: DaemonSet and mirror pods stay (their controller would put them right
back), pods without a controller or with emptyDir data are refused unless `force` /
`delete_emptydir_data` say losing them is fine, everything else is evicted. Evictions are
ordered in waves so that no wave takes more pods of a budget than its `disruptionsAllowed`; a
budget that allows none blocks its pods until it does. Each workload's expected disruption is the
most of its pods a single wave takes away (replacements come up between waves).

`execute` cordons, then posts policy/v1 Evictions through the `pods/eviction` subresource. The
API server itself judges every eviction against the live budget and answers 429 when it would
break one, so execution needs no bookkeeping of its own: it keeps retrying blocked pods until
they go or `timeout_seconds` passes, and reports who is still blocked by which budget.

Knows nothing of MCP (`tools_drain`) and nothing of the sandbox. Polling uses the wall clock
(`time.monotonic`, `time.sleep`) because it waits for a real cluster; it runs off the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Literal

from mcp_servers.common import arguments
from mcp_servers.common.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ToolError,
    TooManyRequests,
)
from mcp_servers.kube.connection import Api, Json
from mcp_servers.kube.settings import KubeSettings

Action = Literal["evict", "skip", "refuse"]
Progress = Callable[[int, int, str], None]  # (done, total, message)

MIRROR = "kubernetes.io/config.mirror"
MAX_TIMEOUT = 3600
POLL_SECONDS = 0.5
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


@dataclass
class Outcome:
    """What an execution did, pod by pod."""

    evicted: list[Json] = field(default_factory=list)
    blocked: dict[str, Json] = field(default_factory=dict)
    failed: list[Json] = field(default_factory=list)


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


# -- execution -------------------------------------------------------------------------------


def execute(
    api: Api,
    drain_plan: DrainPlan,
    *,
    timeout_seconds: float,
    grace_period_seconds: int | None = None,
    progress: Progress | None = None,
) -> Json:
    """Cordon, evict the plan's pods until done or `timeout_seconds`, report pod by pod."""
    if drain_plan.refused:
        listed = "; ".join(f"{p.pod}: {p.reason}" for p in drain_plan.refused)
        raise InvalidArgument(f"cannot drain node {drain_plan.node} (nothing changed): {listed}")
    if not 0 <= timeout_seconds <= MAX_TIMEOUT:
        raise InvalidArgument(f"timeout_seconds must be between 0 and {MAX_TIMEOUT}")
    api.request(
        "PATCH", f"/api/v1/nodes/{drain_plan.node}", query={"fieldManager": "kubecrew"},
        body={"spec": {"unschedulable": True}}, content_type="application/merge-patch+json",
        what=f"node {drain_plan.node}",
    )  # fmt: skip
    moves = {m.pod: m for m in drain_plan.pods if m.action == "evict"}
    uids = _uids(api, drain_plan.node)
    outcome = _evict_all(api, moves, uids, timeout_seconds, grace_period_seconds, progress)
    return {
        "node": drain_plan.node,
        "cordoned": True,
        "complete": not outcome.blocked and not outcome.failed,
        "evicted": outcome.evicted,
        "blocked": list(outcome.blocked.values()),
        "failed": outcome.failed,
        "skipped": [
            {"pod": m.pod, "reason": m.reason} for m in drain_plan.pods if m.action == "skip"
        ],
        "replacements": _replacements(api, [moves[e["pod"]] for e in outcome.evicted], set(moves)),
    }


def _evict_all(
    api: Api,
    moves: dict[str, PodMove],
    uids: dict[str, str],
    timeout: float,
    grace: int | None,
    progress: Progress | None,
) -> Outcome:
    outcome = Outcome()
    deadline = time.monotonic() + timeout
    pending, leaving = [m for m in moves if m in uids], set[str]()
    total = len(pending)
    while True:
        for pod in list(pending):
            if _try_evict(api, moves[pod], grace, outcome):
                pending.remove(pod)
                leaving.add(pod)
        for pod in sorted(leaving):
            if _gone(api, pod, uids[pod]):
                leaving.discard(pod)
                outcome.evicted.append({"pod": pod, "workload": moves[pod].workload})
                if progress:
                    progress(len(outcome.evicted), total, f"evicted {pod}")
        pending = [p for p in pending if p not in {f["pod"] for f in outcome.failed}]
        if (not pending and not leaving) or time.monotonic() >= deadline:
            break
        time.sleep(POLL_SECONDS)
    for pod in leaving:
        outcome.failed.append({"pod": pod, "reason": "evicted but still terminating at timeout"})
    return outcome


def _try_evict(api: Api, move: PodMove, grace: int | None, outcome: Outcome) -> bool:
    """Post one Eviction; True once the API accepted it (or the pod is already gone)."""
    namespace, name = move.pod.split("/", 1)
    body: Json = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    if grace is not None:
        body["deleteOptions"] = {"gracePeriodSeconds": grace}
    path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
    try:
        api.request("POST", path, body=body, what=f"eviction of pod {move.pod}")
    except NotFound:
        return True
    except TooManyRequests as exc:  # the budget allows no disruption now: try again later
        outcome.blocked[move.pod] = {"pod": move.pod, "pdb": move.pdb, "reason": exc.message}
        return False
    except ToolError as exc:
        outcome.failed.append({"pod": move.pod, "reason": exc.message})
        return False
    outcome.blocked.pop(move.pod, None)
    return True


def _uids(api: Api, node: str) -> dict[str, str]:
    pods = api.get("/api/v1/pods", fieldSelector=f"spec.nodeName={node}").get("items") or []
    return {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"]["uid"] for p in pods
    }


def _gone(api: Api, pod: str, uid: str) -> bool:
    namespace, name = pod.split("/", 1)
    try:
        found = api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    except NotFound:
        return True
    return bool(found["metadata"].get("uid") != uid)


def _replacements(api: Api, evicted: list[PodMove], old: set[str]) -> list[Json]:
    """New pods of the evicted pods' controllers, with the node each went to (if scheduled)."""
    out = []
    for namespace in sorted({m.pod.split("/", 1)[0] for m in evicted}):
        pods = api.get(f"/api/v1/namespaces/{namespace}/pods").get("items") or []
        for move in (m for m in evicted if m.pod.startswith(f"{namespace}/") and m.controller_uid):
            new = [
                {"pod": f"{namespace}/{p['metadata']['name']}",
                 "node": (p.get("spec") or {}).get("nodeName")}
                for p in pods
                if any(o.get("uid") == move.controller_uid
                       for o in p["metadata"].get("ownerReferences") or [])
                and f"{namespace}/{p['metadata']['name']}" not in old
                and not p["metadata"].get("deletionTimestamp")
            ]  # fmt: skip
            entry = {"workload": move.workload, "pods": new}
            if entry not in out:
                out.append(entry)
    return out
