"""A change a person asked of a workload, made precise against the live object.

The grammar (`agents.runtime.changes.words`) reads what is asked ("scale web to 3", "give api
half a CPU", "upgrade web to 1.28"); `intents.resolve` finds the object; here the request
becomes one typed change (`agents.runtime.changes.ops`) from what the object is now: the
container meant (the only one, the one named, or the one named like the workload), the replica
count a relative request means ("+2", "double"), the image a bare tag means (the container's own
repository). What cannot be made precise is a `Clarify` naming what exists; nothing changes.

A destructive change (scale to zero, a delete) is asked back first ("reply yes"), whoever asked
and on whichever channel; the change waits in the thread's state for that answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agents.dev_team.state import TargetRef
from agents.runtime.changes import ops
from agents.runtime.changes.words import Asked
from agents.runtime.toolbox import Toolbox

WORKLOAD_OPS = frozenset({"scale", "image", "restart", "undo", "pause", "resume", "env",
                          "resources", "labels", "delete"})  # fmt: skip
NODE_OPS = frozenset({"cordon", "uncordon"})


@dataclass(frozen=True)
class Unclear:
    question: str  # what to ask back; nothing was changed


async def typed(toolbox: Toolbox, asked: Asked, target: TargetRef) -> ops.Change | Unclear:
    """The one change `asked` means for `target`, as it is now."""
    if asked.problem:
        return Unclear(f"Not done: {asked.problem}")
    kind = target["kind"]
    if kind not in ("Deployment", "StatefulSet", "DaemonSet", "Pod", "Job"):
        return Unclear(f"{kind} {target['name']} is not a workload I can {asked.op}; name its "
                       "Deployment or StatefulSet.")  # fmt: skip
    obj = ops.Object(kind=kind, name=target["name"], namespace=target["namespace"])  # type: ignore[arg-type]
    live = await toolbox.call(
        "get_resource", kind=kind.lower(), name=obj.name, namespace=obj.namespace,
        output="fields", fields=["spec.replicas", "spec.template.spec.containers"],
    )  # fmt: skip
    containers = [c for c in live.get("spec.template.spec.containers") or [] if isinstance(c, dict)]
    params = dict(asked.params)
    try:
        return _change(asked.op, obj, params, live, containers)
    except _Ask as exc:
        return Unclear(str(exc))
    except ValidationError as exc:
        first = exc.errors()[0]
        return Unclear(f"Not done: {first['msg']} ({'.'.join(map(str, first['loc']))}).")


class _Ask(Exception):
    """The request needs one more word from the person (the message asks for it)."""


def _change(
    op: str,
    obj: ops.Object,
    params: dict[str, Any],
    live: dict[str, Any],
    containers: list[dict[str, Any]],
) -> ops.Change:
    if op == "scale":
        return ops.Scale(target=obj, replicas=_replicas(params, live, obj))
    if op == "restart":
        return ops.Restart(target=obj)
    if op == "undo":
        if obj.kind != "Deployment":
            raise _Ask(f"I can roll back Deployments only; {obj} keeps its revisions otherwise.")
        return ops.Undo(target=obj, revision=int(params.get("revision", 0)))
    if op in ("pause", "resume"):
        return ops.Pause(target=obj, paused=op == "pause")
    if op == "labels":
        return ops.SetLabels(target=obj, field=params["field"], values=params["values"])
    if op == "delete":
        return ops.Delete(target=obj)
    container = _container(params.get("container", ""), containers, obj)
    if op == "image":
        image = params.get("image") or _retagged(container, params["tag"])
        return ops.SetImage(target=obj, container=container["name"], image=image)
    if op == "env":
        return ops.SetEnv(target=obj, container=container["name"], env=params["env"])
    if op == "resources":
        values = {
            k: params[k] for k in ("cpu", "memory", "limit_cpu", "limit_memory") if k in params
        }
        return ops.SetResources(target=obj, container=container["name"], **values)
    raise _Ask(f"I cannot {op} a workload yet.")


def _replicas(params: dict[str, Any], live: dict[str, Any], obj: ops.Object) -> int:
    if "replicas" in params:
        return int(params["replicas"])
    current = live.get("spec.replicas")
    if not isinstance(current, int):
        raise _Ask(f"{obj} has no replica count I can change relatively; say how many.")
    if "by" in params:
        return max(0, current + int(params["by"]))
    factor = float(params["factor"])
    return max(1 if current else 0, round(current * factor))


def _container(named: str, containers: list[dict[str, Any]], obj: ops.Object) -> dict[str, Any]:
    names = [str(c.get("name")) for c in containers]
    if named:
        for container in containers:
            if container.get("name") == named:
                return container
        raise _Ask(f"{obj} has no container {named!r}; it has {', '.join(names)}.")
    if len(containers) == 1:
        return containers[0]
    for container in containers:
        if container.get("name") == obj.name:
            return container
    raise _Ask(f"{obj} has containers {', '.join(names)}: which one? Say e.g. 'container "
               f"{names[0] if names else 'NAME'}'.")  # fmt: skip


def _retagged(container: dict[str, Any], tag: str) -> str:
    image = str(container.get("image") or "")
    repository = image.split("@")[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    if not repository:
        raise _Ask("the container names no image to change the tag of; give the whole image.")
    return f"{repository}:{tag}"


def confirm_text(change: ops.Change, why: str) -> str:
    return (f"This would {change.describe()}{why}. It is destructive, so I ask first: reply "
            "'yes' to go on, anything else to leave it as it is.")  # fmt: skip


def destructive_note(change: ops.Change) -> str:
    if isinstance(change, ops.Scale) and change.replicas == 0:
        return " (every pod of it stops)"
    if isinstance(change, ops.Delete):
        return " (it is gone for good unless a controller makes it again)"
    return ""
