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


# What a person can ask of an object, by its kind, as examples in the object's own name
# (`{name}`): the answer to a request about it that no grammar reads.
CAN_DO: dict[str, tuple[str, ...]] = {
    "Deployment": (
        "why is {name} failing?", "scale {name} to 3", "restart {name}",
        "set the image of {name} to <image:tag>", "add a readiness probe to {name} on /healthz",
        "expose {name} on port 80", "autoscale {name} between 2 and 5", "fix {name}",
    ),
    "StatefulSet": (
        "why is {name} failing?", "scale {name} to 3", "restart {name}",
        "give {name} 1Gi of memory", "add a pdb to {name} with min available 2",
    ),
    "Service": (
        "why is {name} failing?", "point the {name} service at the <workload> deployment",
        "set the target port of service {name} to 8080",
        "create an ingress for the {name} service at <host>/",
    ),
    "Pod": ("why is {name} failing?", "what images run in <namespace>?"),
    "ConfigMap": (
        "what is in the configmap {name}?", "set MODE=fast in the configmap {name}",
        "delete the configmap {name}",
    ),
    "Node": ("cordon {name}", "drain {name}", "label {name} with disk=ssd"),
    "Namespace": (
        "what is running in {name}?", "which workloads have no limits in {name}?",
        "set a quota of 4 cpus on {name}",
    ),
}  # fmt: skip
