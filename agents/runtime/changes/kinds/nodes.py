"""Changes of a node (the Cluster Operator's): cordon and uncordon, drain through the kube
server's PDB-aware plan, and taints. Labels of a node are `SetLabels` with the kind Node.

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agents.runtime.changes.kinds.base import LABEL_KEY, Change, Check

Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Cordon(Change):
    op: Literal["cordon"] = "cordon"
    unschedulable: bool = True
    check: Check = "node"

    @property
    def action_name(self) -> str:
        return "cordon" if self.unschedulable else "uncordon"

    def describe(self) -> str:
        return f"{self.action_name} {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return self.action_name, {"node": self.target.name}

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        return {**super().proposal(live), "action": self.action_name, "namespace": ""}


class Drain(Change):
    """Cordon the node and evict its pods as the kube server's drain plans it: respecting
    disruption budgets, leaving DaemonSet pods, refusing bare pods unless `force`."""

    op: Literal["drain"] = "drain"
    force: bool = False
    delete_emptydir_data: bool = False
    pods: int = Field(default=0, ge=0)  # what the drain plan evicts: the policies judge it
    evictions_last_hour: float = Field(default=0.0, ge=0)  # the blast radius used so far
    check: Check = "drained"
    action: str = "drain"

    @property
    def destructive(self) -> bool:
        return True

    def describe(self) -> str:
        extra = " (bare pods too)" if self.force else ""
        count = f"its {self.pods} pod{'s' * (self.pods != 1)}" if self.pods else "its pods"
        return f"drain {self.target}: cordon it and evict {count}{extra}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "drain", {
            "node": self.target.name,
            "force": self.force,
            "delete_emptydir_data": self.delete_emptydir_data,
        }

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        return {**super().proposal(live), "namespace": "", "pods": self.pods,
                "metrics": {"evictions_last_hour": self.evictions_last_hour}}  # fmt: skip


class Taint(Change):
    """Add a taint key[=value]:effect to a node, or remove the taints with that key."""

    op: Literal["taint"] = "taint"
    key: str = Field(pattern=LABEL_KEY)
    value: str = ""
    effect: Effect | None = None
    remove: bool = False
    check: Check = "fields"

    @property
    def destructive(self) -> bool:
        return self.effect == "NoExecute" and not self.remove

    def describe(self) -> str:
        value = f"={self.value}" if self.value else ""
        effect = f":{self.effect}" if self.effect else ""
        return (
            f"{'remove taint' if self.remove else 'taint'} {self.key}{value}{effect} "
            f"{'from' if self.remove else 'on'} {self.target}"
        )

    def write(self) -> tuple[str, dict[str, Any]]:
        arguments: dict[str, Any] = {
            "node": self.target.name,
            "key": self.key,
            "remove": self.remove,
            "overwrite": True,
        }
        if self.value:
            arguments["value"] = self.value
        if self.effect:
            arguments["effect"] = self.effect
        return "taint", arguments

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        action = "uncordon" if self.remove else "drain" if self.effect == "NoExecute" else "cordon"
        return {**super().proposal(live), "action": action, "namespace": ""}

    def tainted(self, taints: list[dict[str, Any]]) -> bool:
        """Whether the node's taints now read as asked."""
        mine = [
            t
            for t in taints
            if t.get("key") == self.key and (self.effect is None or t.get("effect") == self.effect)
        ]
        if self.remove:
            return not mine
        return any(t.get("value", "") == self.value for t in mine)
