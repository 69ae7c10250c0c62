"""An agent's role, read from `agents/<role>/AGENTS.md`: who it is, and the tools it may call.

The front matter holds what code enforces (`name`, `tools`: the allow-list the toolbox filters
the MCP servers' tools by); the body is what the model reads (role, scope, rules) and what a
person reviews. Keeping the allow-list beside the rules means one file says what the agent may
do and why. A later slice adds the remediation tools (patch, rollout_undo, PR tools) to the
Dev Team's list together with the loop that gates them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.runtime import documents


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    tools: frozenset[str]  # the allow-list: tools of any server not named here are never loaded
    instructions: str  # the Markdown body: role, scope, rules


def load_role(name: str, *, root: Path = documents.AGENTS_DIR) -> Role:
    path = root / name / "AGENTS.md"
    if not path.is_file():
        raise documents.DocumentError(f"{path}: no such role file; every agent needs one")
    meta, body = documents.read(path)
    declared = documents.text_field(meta, "name", path)
    if declared != name:
        raise documents.DocumentError(f"{path}: field 'name' is {declared!r}, expected {name!r}")
    return Role(
        name=name,
        description=documents.text_field(meta, "description", path),
        tools=frozenset(documents.list_field(meta, "tools", path)),
        instructions=body,
    )
