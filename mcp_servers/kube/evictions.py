"""Executing a drain plan: cordon, then policy/v1 Evictions, retried while a budget forbids them.

The API server judges every eviction against the live PodDisruptionBudget and answers 429 when
it would break one, so execution keeps no bookkeeping of its own: it retries blocked pods until
they go or `timeout_seconds` passes, waits for each evicted pod to be gone (its uid no longer
there), and reports who is still blocked by which budget and where the replacements went.

Polling uses the wall clock (`time.monotonic`, `time.sleep`) because it waits for a real
cluster; the tool runs it off the event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.connection import Api, Json
from core.errors import InvalidArgument, NotFound, ToolError, TooManyRequests
from mcp_servers.kube.drain import DrainPlan, PodMove

Progress = Callable[[int, int, str], None]  # (done, total, message)

MAX_TIMEOUT = 3600
POLL_SECONDS = 0.5


@dataclass
class Outcome:
    """What an execution did, pod by pod."""

    evicted: list[Json] = field(default_factory=list)
    blocked: dict[str, Json] = field(default_factory=dict)
    failed: list[Json] = field(default_factory=list)


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
