"""What is already on the cluster, as a change being typed needs to know it: whether an object
exists (a create must not overwrite one), and which namespace a word names (itself, or its one
near miss: "stagng" is staging).

Must not know: any agent or grammar; it reads through the agent's tools only.
"""

from __future__ import annotations

from agents.runtime import spelling
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox


async def exists(toolbox: Toolbox, kind: str, name: str, namespace: str | None) -> bool:
    try:
        await toolbox.call(
            "get_resource",
            kind=kind.lower(),
            name=name,
            namespace=namespace,
            output="fields",
            fields=["metadata.name"],
        )
    except ToolFailed as exc:
        if "not found" in exc.reason.lower():
            return False
        raise
    return True


async def namespace_meant(toolbox: Toolbox, said: str) -> tuple[str | None, list[str]]:
    """The namespace `said` names (None when none does), and the namespaces there are."""
    listed = await toolbox.call("list_resources", kind="namespaces", limit=1000)
    names = [str(i["name"]) for i in listed.get("items", []) if isinstance(i, dict)]
    return spelling.namespace_meant(said, names), names
