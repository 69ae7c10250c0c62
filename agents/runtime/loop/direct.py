"""A fix made by the kube server's gated write tools, step by step: what policy says of each
step before anything changes, which steps the loop will make at all, and how a step is put back.

Judging (`verdict`): every step goes to its own tool as a server-side dry run first, so the
kube gate gives its verdict on exactly that call (`mutation.judge_direct` proposes a step the
gate gives to a person, and stops on any other refusal). A step on an object an earlier step
deletes (a claim recreated with another class: its class is immutable) cannot be dry-run before
the delete; the policy server's `evaluate_action` judges it instead, and the gate judges it
again, by a dry run, right before it runs (`dry_run`).

Deleting (`deletable`): the loop deletes one thing only, a PersistentVolumeClaim that never
bound (Pending, no volume, never bind-completed): it holds no data, so replacing it loses
nothing. Anything else, or a claim that has bound meanwhile, is refused before the call (and
counted: a `loop_delete` safeguard refusal).

The loop's own tools (`healing_role`, AGENTS.md beside this module: `delete`) are added to the
running agent's allow-list for its heal runs only (`kubecrew heal`, the watcher's heals), never
for its conversations, so a delete a person asks for in chat is still answered, not made.

Undoing (`restoring`): a merge patch of an object with no rollout history (a Service's selector
or ports) is put back by the inverse merge patch, built from the fields as read just before.

Knows the write tools' names and arguments and the policy actions they make; nothing of agents.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from agents.runtime.errors import ToolFailed
from agents.runtime.loop.state import Target
from agents.runtime.roles import Role, load_role
from agents.runtime.toolbox import Toolbox
from core import telemetry

# The policy action each write tool makes, as the kube gate plans it (mcp_servers/kube/calls.py).
ACTIONS = {
    "patch": "patch", "apply": "apply", "set_image": "patch", "rollout_undo": "rollback",
    "rollout_restart": "restart", "scale": "scale", "delete": "delete", "set_resources": "resize",
}  # fmt: skip
TO_A_PERSON = ("needs approval", "escalate")  # gate verdicts a person may turn into a yes
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
CLAIM = "PersistentVolumeClaim"
_KINDS = {"pvc": CLAIM, "persistentvolumeclaim": CLAIM, "persistentvolumeclaims": CLAIM,
          "svc": "Service", "service": "Service", "services": "Service",
          "deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
          "sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
          "po": "Pod", "pod": "Pod", "pods": "Pod"}  # fmt: skip


ROLES_DIR = Path(__file__).resolve().parent.parent  # agents/runtime: loop/AGENTS.md


@cache
def own_tools() -> frozenset[str]:
    """The tools the loop adds for a heal run (AGENTS.md beside this module)."""
    return load_role("loop", root=ROLES_DIR).tools


def healing_role(role: Role) -> Role:
    """`role` for a heal run: its tools and the loop's own (which the loop guards itself)."""
    return Role(
        name=role.name,
        description=role.description,
        tools=role.tools | own_tools(),
        instructions=role.instructions,
    )


class Rejected(Exception):
    """A step the loop will not make, or policy will not let through: the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def kind_of(word: str) -> str:
    """`pvc`, `Service`, `deployments` -> the kind as the API names it (unknown: as given)."""
    return _KINDS.get(word.lower(), word)


def step_object(step: dict[str, Any]) -> Target:
    """The object a write-tool step acts on (a manifest's own object, for `apply`)."""
    arguments = step["arguments"]
    if step["tool"] == "apply":
        document = yaml.safe_load(str(arguments["manifest"])) or {}
        meta = document.get("metadata") or {}
        namespace = str(meta.get("namespace") or arguments.get("namespace") or "")
        return Target(kind=str(document.get("kind", "")), name=str(meta.get("name", "")),
                      namespace=namespace)  # fmt: skip
    return Target(
        kind=kind_of(str(arguments.get("kind") or "deployment")),
        name=str(arguments.get("name") or arguments.get("node") or ""),
        namespace=str(arguments.get("namespace") or ""),
    )


def deferred(steps: list[dict[str, Any]], index: int) -> bool:
    """Whether an earlier step deletes the object step `index` acts on (it is judged after)."""
    mine = step_object(steps[index])
    return any(s["tool"] == "delete" and step_object(s) == mine for s in steps[:index])


def loop_may_delete(steps: list[dict[str, Any]]) -> str:
    """Why the loop will not make a fix's delete steps ("" when it may): claims only."""
    for step in steps:
        if step["tool"] == "delete" and step_object(step)["kind"] != CLAIM:
            shown = step_object(step)
            return (
                f"not applicable: it deletes {shown['kind']} {shown['name']}, outside this "
                "agent's allow-list (the loop deletes nothing but a claim that never bound)"
            )
    return ""


async def deletable(toolbox: Toolbox, step: dict[str, Any]) -> str:
    """Read live just before a delete: a note of why deleting it loses nothing, or Rejected."""
    claim = step_object(step)
    if claim["kind"] != CLAIM:
        telemetry.safeguard_refused("loop_delete", f"a {claim['kind']}, not a claim")
        raise Rejected(f"the loop deletes only a claim that never bound, not {claim['kind']}")
    got = await toolbox.call(
        "get_resource", kind="persistentvolumeclaim", name=claim["name"],
        namespace=claim["namespace"], output="fields",
        fields=["status.phase", "spec.volumeName", "metadata.annotations"],
    )  # fmt: skip
    phase, volume = got.get("status.phase"), got.get("spec.volumeName")
    annotations = got.get("metadata.annotations") or {}
    if phase != "Pending" or volume or annotations.get(BIND_COMPLETED):
        telemetry.safeguard_refused("loop_delete", f"claim {claim['name']} may hold data")
        raise Rejected(
            f"claim {claim['name']} is {phase or 'unknown'}"
            + (f", bound to volume {volume}" if volume else "")
            + ": it may hold data, so the loop does not delete it; a person decides"
        )
    return f"claim {claim['name']} was Pending and never bound (no volume): it held no data"


async def dry_run(toolbox: Toolbox, step: dict[str, Any], proposal: str) -> str:
    """The gate's verdict on the step as a dry run carrying `proposal`; Rejected if refused."""
    carrying = {"proposal": proposal} if proposal else {}
    try:
        answer = await toolbox.call(step["tool"], **step["arguments"], dry_run=True, **carrying)
    except ToolFailed as exc:
        if exc.unreachable:
            raise
        raise Rejected(f"the dry run of {step['tool']} failed: {exc.reason}") from exc
    policy = answer.get("policy") or {}
    if policy.get("refused"):
        raise Rejected(str(policy["refused"]))
    return str(policy.get("verdict") or "allowed (no policy gate)")


async def verdict(toolbox: Toolbox, steps: list[dict[str, Any]], index: int) -> tuple[str, str]:
    """The gate's verdict on step `index` and its refusal ("" when it may go as it is)."""
    step = steps[index]
    if deferred(steps, index):
        return await _evaluated(toolbox, step)
    try:
        answer = await toolbox.call(step["tool"], **step["arguments"], dry_run=True)
    except ToolFailed as exc:
        if exc.unreachable:
            raise
        return "failed", f"the dry run of {step['tool']} failed: {exc.reason}"
    policy = answer.get("policy") or {}
    return str(policy.get("verdict") or "allow"), str(policy.get("refused") or "")


async def _evaluated(toolbox: Toolbox, step: dict[str, Any]) -> tuple[str, str]:
    """A step that cannot be dry-run yet, judged by the policy server (when there is one; the
    gate judges it again when it runs)."""
    if not toolbox.has("evaluate_action"):
        return "allow", ""
    shown = step_object(step)
    try:
        judged = await toolbox.call(
            "evaluate_action", action=ACTIONS.get(step["tool"], "patch"),
            target=f"{shown['kind'].lower()}/{shown['name']}", namespace=shown["namespace"],
        )  # fmt: skip
    except ToolFailed as exc:
        if exc.unreachable:
            raise
        return "allow", ""  # a kind the policy server does not name: the gate judges it alone
    outcome, approvals = str(judged.get("verdict") or "allow"), judged.get("approvals") or []
    if outcome == "allow" and not approvals and not judged.get("not_before"):
        return "allow", ""
    words = "needs approval" if outcome == "allow" and approvals else outcome
    who = "; ".join(str(a.get("approvers")) for a in approvals if isinstance(a, dict))
    return words, (
        f"{step['tool']} of {shown['kind']} {shown['name']} is not allowed as it is ({words}"
        + (f": approvers {who}" if who else "")
        + ")"
    )


def replicas(step: dict[str, Any]) -> dict[str, Any]:
    replicas = step["arguments"].get("replicas") if step["tool"] == "scale" else None
    return {"replicas": replicas} if isinstance(replicas, int) else {}


async def restoring(toolbox: Toolbox, step: dict[str, Any]) -> list[dict[str, Any]]:
    """The step that puts back what `step` changes, read now: a merge patch of an object
    without revisions only (a Deployment is undone by its revision)."""
    arguments = step["arguments"]
    if step["tool"] != "patch" or arguments.get("patch_type") != "merge":
        return []
    shown = step_object(step)
    if shown["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
        return []
    patch = arguments["patch"]
    if isinstance(patch, str):
        patch = json.loads(patch)
    if not isinstance(patch, dict):
        return []
    got = await toolbox.call(
        "get_resource", kind=shown["kind"].lower(), name=shown["name"],
        namespace=shown["namespace"], output="fields", fields=sorted(patch),
    )  # fmt: skip
    live = {key: got.get(key) for key in patch}
    return [{"tool": "patch", "arguments": {**arguments, "patch": inverse(patch, live)}}]


def inverse(patch: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    """The merge patch that undoes `patch` on an object whose fields were `live`: each field it
    sets back to the old value, each it added removed (None)."""
    out: dict[str, Any] = {}
    for key, value in patch.items():
        old = live.get(key) if isinstance(live, dict) else None
        out[key] = inverse(value, old) if isinstance(value, dict) and isinstance(old, dict) else old
    return out
