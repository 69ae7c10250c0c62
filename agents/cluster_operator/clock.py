"""The cluster's own time, as its kubelets last stamped it.

A maintenance window is a time of the cluster's world, so it is judged by the cluster's clock,
not by the machine the agent runs on: the newest `renewTime` of the node Leases
(`kube-node-lease`), which every kubelet renews every few seconds. On a real cluster that is
the nodes' time within seconds; on the sandbox it is the sandbox's clock, however fast it runs.
With no Lease to read (a cluster the identity may not list them in), the agent's own clock.
"""

from __future__ import annotations

from datetime import UTC, datetime

from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

LEASES = "kube-node-lease"


async def cluster_now(toolbox: Toolbox, *, context: str | None = None) -> datetime:
    try:
        listed = await toolbox.call(
            "list_resources", kind="leases", namespace=LEASES, output="fields",
            fields=["spec.renewTime"], limit=500, **({"context": context} if context else {}),
        )  # fmt: skip
    except ToolFailed:  # not allowed to read them: our own clock is the next best
        return datetime.now(UTC)
    stamps = [
        datetime.fromisoformat(str(item["spec.renewTime"]).replace("Z", "+00:00"))
        for item in listed.get("items", [])
        if item.get("spec.renewTime")
    ]
    return max(stamps) if stamps else datetime.now(UTC)
