"""Whether a change that landed holds: the validation that fits each kind of change.

`validated(toolbox, change, settings)` -> (held, evidence). By the change's `check`:
a workload's rollout completes and soaks (the loop's own `validate`); exactly the replicas
asked for are available (a node pool's: its machines, their nodes Ready); the fields it wrote
read back as written (waiting for fields that settle later, such as a claim's capacity); a
node is (un)schedulable, or drained of every pod
a drain moves; an object is gone; a new object is there with what was written; a Service
routes to ready pods; a new workload's pods are up. Every wait is on the cluster's clock
(`validation.until`), so an accelerated sandbox and a real cluster are judged alike.

Must not know: any agent or grammar; it reads through the agent's tools only.
"""

from __future__ import annotations

from typing import Any

from agents.runtime.changes.ops import POOLS, ROLLED, Change, Cordon, NewWorkload, Scale, Taint
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.state import Target
from agents.runtime.loop.validation import LoopSettings, Verdict, until, validate
from agents.runtime.toolbox import Toolbox


async def validated(
    toolbox: Toolbox, change: Change, settings: LoopSettings
) -> tuple[bool, list[str]]:
    target, check = change.target, change.check
    if change.tool == "delete":
        check = "gone"
    if isinstance(change, Scale) and target.kind in ROLLED | POOLS:
        return await _replicas(toolbox, change.target.ref, change.replicas, settings)
    if check in ("rollout", "replicas") and target.kind in ROLLED:
        verdict = await validate(toolbox, target_of(change), "", settings)
        return verdict.held, verdict.evidence or ["validated"]
    if check == "node" and isinstance(change, Cordon):
        got = await _fields(toolbox, change.target.ref, ["spec.unschedulable"])
        now = bool(got.get("spec.unschedulable"))
        said = "unschedulable" if now else "schedulable"
        return now == change.unschedulable, [f"node {target.name} is {said}"]
    if check == "gone":
        return await _gone(toolbox, change)
    if check == "drained":
        return await _drained(toolbox, target.name, settings)
    if check == "endpoints":
        return await _endpoints(toolbox, change, settings)
    if check == "ready" and isinstance(change, NewWorkload):
        return await _ready(toolbox, change, settings)
    if isinstance(change, Taint):
        got = await _fields(toolbox, change.target.ref, ["spec.taints"])
        taints = got.get("spec.taints") or []
        held = change.tainted(taints if isinstance(taints, list) else [])
        return held, [f"node {target.name} taints: {_taints(taints) or 'none'}"]
    return await _read_back(toolbox, change, settings)


def target_of(change: Change) -> Target:
    target = change.target
    return Target(kind=target.kind, name=target.name, namespace=target.namespace)


async def _fields(toolbox: Toolbox, ref: dict[str, str], paths: list[str]) -> dict[str, Any]:
    return dict(
        await toolbox.call(
            "get_resource",
            kind=ref["kind"].lower(),
            name=ref["name"],
            namespace=ref["namespace"] or None,
            output="fields",
            fields=paths,
        )
    )


async def _replicas(
    toolbox: Toolbox, ref: dict[str, str], wanted: int, settings: LoopSettings
) -> tuple[bool, list[str]]:
    """The replicas asked for, all available (and no more running), within the deadline."""

    async def look() -> Verdict:
        got = await _fields(toolbox, ref, ["status.replicas", "status.availableReplicas"])
        running = got.get("status.replicas") or 0
        available = got.get("status.availableReplicas") or 0
        said = f"{available} of {wanted} replicas available ({running} running)"
        return Verdict(running == available == wanted, [said])

    verdict = await until(toolbox, look, settings, late=f"not {wanted} available")
    return verdict.held, verdict.evidence


async def _gone(toolbox: Toolbox, change: Change) -> tuple[bool, list[str]]:
    target = change.target
    try:
        await _fields(toolbox, target.ref, ["metadata.deletionTimestamp"])
    except ToolFailed as exc:
        if "not found" in exc.reason.lower():
            return True, [f"{target} is gone"]
        raise
    return True, [f"{target} is being deleted"]


async def _drained(toolbox: Toolbox, node: str, settings: LoopSettings) -> tuple[bool, list[str]]:
    """Cordoned, and no pod left on it that a drain moves (DaemonSet pods stay; pods already
    terminating are on their way)."""

    async def look() -> Verdict:
        got = await _fields(
            toolbox, {"kind": "Node", "name": node, "namespace": ""}, ["spec.unschedulable"]
        )
        listed = await toolbox.call(
            "list_resources",
            kind="pods",
            field_selector=f"spec.nodeName={node}",
            output="fields",
            limit=1000,
            fields=[
                "metadata.name",
                "metadata.namespace",
                "metadata.ownerReferences",
                "metadata.deletionTimestamp",
                "status.phase",
            ],
        )
        staying = [
            f"{p.get('metadata.namespace')}/{p.get('metadata.name')}"
            for p in listed.get("items", [])
            if not p.get("metadata.deletionTimestamp")
            and p.get("status.phase") not in ("Succeeded", "Failed")
            and not any(
                o.get("kind") == "DaemonSet" for o in p.get("metadata.ownerReferences") or []
            )
        ]
        cordoned = bool(got.get("spec.unschedulable"))
        said = (
            f"node {node} {'cordoned' if cordoned else 'NOT cordoned'}, "
            f"{len(staying)} pod(s) still on it"
            + (f": {', '.join(staying[:5])}" if staying else "")
        )
        return Verdict(cordoned and not staying, [said])

    verdict = await until(toolbox, look, settings, late="not drained")
    return verdict.held, verdict.evidence


async def _endpoints(
    toolbox: Toolbox, change: Change, settings: LoopSettings
) -> tuple[bool, list[str]]:
    """A Service with at least one ready address behind it."""
    target = change.target

    async def look() -> Verdict:
        try:
            got = await _fields(
                toolbox,
                {"kind": "endpoints", "name": target.name, "namespace": target.namespace},
                ["subsets"],
            )
        except ToolFailed as exc:
            if "not found" not in exc.reason.lower():
                raise
            got = {}
        subsets = got.get("subsets") or []
        ready = sum(len(s.get("addresses") or []) for s in subsets if isinstance(s, dict))
        waiting = sum(len(s.get("notReadyAddresses") or []) for s in subsets if isinstance(s, dict))
        said = f"Service {target.name} routes to {ready} ready pod(s)"
        return Verdict(ready > 0, [said + (f" ({waiting} not ready yet)" if waiting else "")])

    verdict = await until(toolbox, look, settings, late="no ready endpoints")
    return verdict.held, verdict.evidence


async def _ready(
    toolbox: Toolbox, change: NewWorkload, settings: LoopSettings
) -> tuple[bool, list[str]]:
    target, kind = change.target, change.target.kind
    if kind in ("Deployment", "StatefulSet"):
        return await _replicas(toolbox, target.ref, change.replicas, settings)
    paths = {
        "Pod": ["status.phase", "status.conditions"],
        "DaemonSet": ["status.desiredNumberScheduled", "status.numberReady"],
        "Job": ["status.active", "status.succeeded", "status.failed"],
        "CronJob": ["spec.schedule"],
    }[kind]

    async def look() -> Verdict:
        got = await _fields(toolbox, target.ref, paths)
        if kind == "Pod":
            conditions = got.get("status.conditions") or []
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            phase = got.get("status.phase")
            return Verdict(
                ready or phase == "Succeeded",
                [f"pod {target.name} is {phase}" + (", Ready" if ready else "")],
            )
        if kind == "DaemonSet":
            wanted, ready_count = (
                got.get("status.desiredNumberScheduled") or 0,
                got.get("status.numberReady") or 0,
            )
            return Verdict(
                wanted > 0 and wanted == ready_count,
                [f"{ready_count} of {wanted} daemon pods ready"],
            )
        if kind == "Job":
            started = (got.get("status.active") or 0) + (got.get("status.succeeded") or 0)
            return Verdict(
                started > 0,
                [
                    f"job {target.name}: {got.get('status.active') or 0} "
                    f"running, {got.get('status.succeeded') or 0} done"
                ],
            )
        return Verdict(
            got.get("spec.schedule") == change.schedule,
            [f"cronjob {target.name} scheduled '{got.get('spec.schedule')}'"],
        )

    verdict = await until(toolbox, look, settings, late="not up")
    return verdict.held, verdict.evidence


async def _read_back(
    toolbox: Toolbox, change: Change, settings: LoopSettings
) -> tuple[bool, list[str]]:
    """The fields the change wrote, as written (what the server added besides is fine)."""
    expected = change.expected()
    if not expected:
        got = await _fields(toolbox, change.target.ref, ["metadata.name"])
        return got.get("metadata.name") == change.target.name, [f"{change.target} exists"]

    async def look() -> Verdict:
        got = await _fields(toolbox, change.target.ref, list(expected))
        wrong = [
            f"{path} is {_short(got.get(path))}"
            for path, want in expected.items()
            if not contains(got.get(path), want)
        ]
        if wrong:
            return Verdict(False, [f"read back: {'; '.join(wrong)}"])
        return Verdict(True, [f"read back: {', '.join(expected)} as asked"])

    verdict = await until(toolbox, look, settings, late="not as written")
    return verdict.held, verdict.evidence


def contains(got: Any, want: Any) -> bool:
    """Whether `got` holds `want`: dict keys recursively (a None wanted means absent), lists
    item by item, scalars equal (quantities and numbers as the server normalises them)."""
    if isinstance(want, dict):
        have = got if isinstance(got, dict) else {}
        return all(
            (k not in have) if v is None else (k in have and contains(have[k], v))
            for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) >= len(want)
            and all(contains(g, w) for g, w in zip(got, want, strict=False))
        )
    if isinstance(want, bool):
        return bool(got) == want
    return got == want or str(got) == str(want)


def _taints(taints: Any) -> str:
    if not isinstance(taints, list):
        return ""
    return ", ".join(
        f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
        for t in taints
        if isinstance(t, dict)
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."
