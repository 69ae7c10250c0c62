"""Skills: `skills/<name>/SKILL.md` bundles, loaded per agent.

Front matter: `name` (the folder's name), `description` (one paragraph: when to use it), and
`metadata` with `agent` (the role that uses it), `intents` (the intent kinds it serves, which is
how the deterministic planner routes) and `tools` (the tools its procedure calls, each of which
must be in the agent's allow-list). The body is the procedure, written for a model and a person.

Descriptions are always loaded (they are short and tell a model what exists); a body is read only
when its skill is selected, so an agent with fifty skills does not put fifty procedures in every
prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.runtime import documents


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    agent: str
    intents: tuple[str, ...]
    tools: tuple[str, ...]
    path: Path

    def body(self) -> str:
        """The procedure, read now: only a selected skill's body is ever loaded."""
        return documents.read(self.path)[1]


def parse_skill(path: Path) -> Skill:
    meta, body = documents.read(path)
    name = documents.text_field(meta, "name", path)
    if name != path.parent.name:
        raise documents.DocumentError(
            f"{path}: field 'name' is {name!r} but the folder is {path.parent.name!r}"
        )
    metadata = meta.get("metadata")
    if not isinstance(metadata, dict):
        raise documents.DocumentError(f"{path}: field 'metadata' must be a mapping")
    if not body:
        raise documents.DocumentError(f"{path}: the body (the procedure) is empty")
    return Skill(
        name=name,
        description=documents.text_field(meta, "description", path),
        agent=documents.text_field(metadata, "agent", path),
        intents=documents.list_field(metadata, "intents", path),
        tools=documents.list_field(metadata, "tools", path),
        path=path,
    )


def all_skills(root: Path = documents.SKILLS_DIR) -> list[Skill]:
    return [parse_skill(path) for path in sorted(root.glob("*/SKILL.md"))]


def skills_for(agent: str, root: Path = documents.SKILLS_DIR) -> list[Skill]:
    return [skill for skill in all_skills(root) if skill.agent == agent]


def select(skills: list[Skill], intent: str) -> Skill | None:
    """The skill that serves `intent`: the deterministic planner's routing table."""
    return next((skill for skill in skills if intent in skill.intents), None)
