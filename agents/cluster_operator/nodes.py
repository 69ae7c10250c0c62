"""The health patrol's reading of the nodes: which are unhealthy, and why, from their conditions.

Condition polarity follows Kubernetes: `Ready` is healthy when True; the kubelet's pressure
conditions and `NetworkUnavailable` are unhealthy when True; any other condition a node
problem detector or device plugin adds (`GPUHealthy`, `XidHealthy`...) is read as a health
statement, unhealthy when False. Knows the node objects only as the kube tools return them.
"""

from __future__ import annotations

from typing import Any, TypedDict

from agents.runtime.toolbox import Toolbox

BAD_WHEN_TRUE = frozenset(
    {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
)  # fmt: skip
FIELDS = ["metadata.name", "spec.unschedulable", "status.conditions"]


class NodeIssue(TypedDict):
    node: str
    cordoned: bool
    conditions: list[str]  # "GPUHealthy=False (GPUFault: XID 79 ...)"


def failing(condition: dict[str, Any]) -> bool:
    kind, status = str(condition.get("type", "")), str(condition.get("status", ""))
    if kind == "Ready":
        return status != "True"
    if kind in BAD_WHEN_TRUE:
        return status == "True"
    return status == "False"


async def unhealthy(toolbox: Toolbox) -> list[NodeIssue]:
    listed = await toolbox.call("list_resources", kind="Node", output="fields", fields=FIELDS)
    issues: list[NodeIssue] = []
    for item in listed.get("items", []):
        bad = [c for c in item.get("status.conditions") or [] if failing(c)]
        if bad:
            issues.append(
                NodeIssue(
                    node=str(item["metadata.name"]),
                    cordoned=bool(item.get("spec.unschedulable")),
                    conditions=[said(c) for c in bad],
                )
            )
    return issues


def said(condition: dict[str, Any]) -> str:
    why = ": ".join(str(condition[k]) for k in ("reason", "message") if condition.get(k))
    return f"{condition['type']}={condition['status']}" + (f" ({why})" if why else "")
