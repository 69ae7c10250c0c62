"""The deterministic investigation of a workload: the fixed procedure of the
`diagnose-workload` skill, as tool calls.

Order matters only for reading: `diagnose` (which already correlates pods, events, logs, probes
and revisions into findings with evidence), `recommend` (the fixes, each with its write-tool
steps), the Warning events of the namespace (what else is going on), the logs of the pod the top
finding shows on (the previous instance's when it crashed), the rollout history (recent changes)
and, when a metrics server is configured, the golden signals of the Service.

A failing call is recorded with its message and the procedure goes on: a diagnosis that could
not read the logs still answers, and says what it could not see. The model brain reaches the
same evidence by calling the same tools itself.
"""

from __future__ import annotations

from typing import Any

import anyio

from agents.dev_team.state import Observation, TargetRef
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

LOOKS, PAUSE = 3, 1.0  # a live cluster's passing states last about a second
CRASHING = frozenset({"CrashLoopBackOff", "OOMKilled", "ContainerCrashed", "ProbeFailing"})


async def observe(toolbox: Toolbox, tool: str, **arguments: Any) -> Observation:
    try:
        result = await toolbox.call(tool, **arguments)
    except ToolFailed as exc:
        if exc.unreachable:  # no cluster: nothing else can be learned, say so at once
            raise
        return Observation(tool=tool, arguments=arguments, result={}, error=exc.reason)
    return Observation(tool=tool, arguments=arguments, result=result, error="")


async def investigate_workload(toolbox: Toolbox, target: TargetRef) -> list[Observation]:
    namespace, name = target["namespace"], target["name"]
    scope = {"namespace": namespace, "kind": target["kind"].lower(), "name": name}
    diagnosis = await _diagnose(toolbox, scope)
    seen = [diagnosis, await _recommend(toolbox, diagnosis, scope)]
    seen.append(await observe(toolbox, "events", namespace=namespace, type="Warning", limit=20))
    pod, crashed = _showing_pod(target, diagnosis["result"].get("findings", []))
    if pod:
        logs = await observe(
            toolbox, "logs", pod=pod, namespace=namespace, tail=20, previous=crashed
        )
        if crashed and logs["error"]:  # not restarted yet (a failing readiness probe): its own
            logs = await observe(toolbox, "logs", pod=pod, namespace=namespace, tail=20)
        seen.append(logs)
    if target["kind"] == "Deployment":
        seen.append(await observe(toolbox, "rollout_history", name=name, namespace=namespace))
    if toolbox.has("manifest_history") and target["kind"] in ("Deployment", "StatefulSet"):
        scope_in_git = {"kind": target["kind"], "name": name, "namespace": namespace, "limit": 3}
        seen.append(await observe(toolbox, "manifest_history", **scope_in_git))
    if toolbox.has("golden_signals"):
        seen.append(await observe(toolbox, "golden_signals", service=name, namespace=namespace))
    return seen


async def _diagnose(toolbox: Toolbox, scope: dict[str, str]) -> Observation:
    """The diagnosis, looked at again (LOOKS times at most, PAUSE apart) while it finds nothing:
    the cluster is alive, and a workload caught mid-rollout or between two restarts can briefly
    show no error, so one snapshot can miss what the person asking is seeing."""
    for _ in range(LOOKS - 1):
        diagnosis = await observe(toolbox, "diagnose", **scope)
        if diagnosis["result"].get("findings"):
            return diagnosis
        await anyio.sleep(PAUSE)
    return await observe(toolbox, "diagnose", **scope)


async def _recommend(
    toolbox: Toolbox, diagnosis: Observation, scope: dict[str, str]
) -> Observation:
    """The fixes, asked again (as `_diagnose` looks again) while `recommend`'s own fresh
    snapshot has none for the top finding."""
    wanted = {f.get("code") for f in diagnosis["result"].get("findings", [])[:1]}
    for _ in range(LOOKS - 1):
        fixes = await observe(toolbox, "recommend", **scope)
        if not wanted or wanted & {f.get("finding") for f in fixes["result"].get("fixes", [])}:
            return fixes
        await anyio.sleep(PAUSE)
    return await observe(toolbox, "recommend", **scope)


def _showing_pod(target: TargetRef, findings: list[dict[str, Any]]) -> tuple[str, bool]:
    """The pod the top finding shows on, and whether its previous instance crashed."""
    if target["kind"] == "Pod":
        crashed = any(f.get("code") in CRASHING for f in findings)
        return target["name"], crashed
    for finding in findings:
        for ref in finding.get("related", []):
            if ref.get("kind") == "Pod":
                return str(ref["name"]), finding.get("code") in CRASHING
    return "", False
