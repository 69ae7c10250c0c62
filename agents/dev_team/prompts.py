"""What the model reads: the role (AGENTS.md body), the selected skill's procedure, the object
the question was resolved to, and the available skills' descriptions (built by
`agents.runtime.modelsteps.system_prompt`, as for every agent). Only the model brain reads these;
the deterministic brain follows the same skill as code (`investigate`)."""

from __future__ import annotations

from agents.dev_team.state import TargetRef
from agents.runtime import modelsteps
from agents.runtime.roles import Role
from agents.runtime.skills import Skill

ANSWER = "When you have the evidence, answer in a few sentences: the cause, the evidence, the fix."


def system_prompt(role: Role, skills: list[Skill], selected: Skill | None, max_steps: int) -> str:
    return modelsteps.system_prompt(role, skills, selected, max_steps, finish=ANSWER)


def task(question: str, target: TargetRef) -> str:
    return (
        f"Question: {question}\n"
        f"It is about {target['kind']} {target['name']} in namespace {target['namespace']}."
    )
