"""A change a person asked of a workload, made precise against the live object.

The grammar (`agents.runtime.changes.words`) reads what is asked ("scale web to 3", "give api
half a CPU", "add a readiness probe to web on /healthz", "expose web on port 80", "autoscale
api up to 10"); `intents.resolve` finds the object among the kinds the operation applies to
(`kinds_for`); here the request becomes one typed change (`agents.runtime.changes.ops`) from
what the object is now: the container meant (the only one, the one named, or the one named
like the workload), the replica count a relative request means ("+2", "double"), the image a
bare tag means (the container's own repository), the port a Service or a probe uses (the
container's own), the labels a budget, a spread or a Service selects (the workload's
selector), the taint a toleration means ("the gpu taint": the nodes' own), the probe a change
of one setting starts from (the probe there now). What cannot be made precise is an `Unclear`
naming what exists; nothing changes.

Changes that make something new beside no one object (a workload, a ConfigMap, a network
policy, an Ingress) are made precise in `agents.dev_team.making`.

A destructive change (scale to zero, a delete) is asked back first ("reply yes"), whoever asked
and on whichever channel; the change waits in the thread's state for that answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agents.dev_team import intents
from agents.dev_team.intents import Listed
from agents.dev_team.probe_settings import PROBE_SETTINGS, probe_fields
from agents.dev_team.state import TargetRef
from agents.runtime.changes import ops
from agents.runtime.changes.words import Asked
from agents.runtime.toolbox import Toolbox
from core import quantity

_ROLLED: Listed = (
    ("deployments", "Deployment"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
)
_SCALED: Listed = _ROLLED[:2]
_KINDS: dict[str, Listed] = {
    "scale": _SCALED,
    "restart": _ROLLED,
    "undo": _ROLLED[:1],
    "pause": (*_ROLLED[:1], ("cronjobs", "CronJob")),
    "resume": (*_ROLLED[:1], ("cronjobs", "CronJob")),
    "image": (*_ROLLED, ("cronjobs", "CronJob")),
    "env": _ROLLED,
    "resources": _ROLLED,
    "probe": _ROLLED,
    "node_selector": _ROLLED,
    "tolerate": _ROLLED,
    "spread": _SCALED,
    "mount": _ROLLED,
    "expose": _ROLLED,
    "pdb": _SCALED,
    "autoscale": _SCALED,
    "labels": (
        *_ROLLED,
        ("cronjobs", "CronJob"),
        ("services", "Service"),
        ("configmaps", "ConfigMap"),
    ),
    "delete": (
        *_ROLLED,
        ("cronjobs", "CronJob"),
        ("jobs", "Job"),
        ("services", "Service"),
        ("configmaps", "ConfigMap"),
        ("persistentvolumeclaims", "PersistentVolumeClaim"),
        ("ingresses", "Ingress"),
        ("networkpolicies", "NetworkPolicy"),
        ("poddisruptionbudgets", "PodDisruptionBudget"),
        ("horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    ),
    "service": (("services", "Service"),),
    "storage": (("persistentvolumeclaims", "PersistentVolumeClaim"),),  # or a pod's one claim
}
_PLURALS = {kind: plural for listed in _KINDS.values() for plural, kind in listed}
WORKLOAD_OPS = frozenset(_KINDS)
NODE_OPS = frozenset({"cordon", "uncordon", "drain", "taint", "untaint"})
FRAME_OPS = frozenset({"namespace", "quota", "limitrange", "podsecurity", "grant", "revoke"})


@dataclass(frozen=True)
class Unclear:
    question: str  # what to ask back; nothing was changed


class Ask(Exception):
    """The request needs one more word from the person (the message asks for it)."""


def kinds_for(asked: Asked) -> Listed:
    """The kinds the object of `asked` may be, narrowed to the kind its words said."""
    listed = _KINDS[asked.op]
    narrowed = tuple(pair for pair in listed if pair[1] == asked.kind)
    if asked.op == "delete" and asked.kind == "Pod":
        return (("pods", "Pod"),)
    return narrowed or listed  # "add a pdb to web": the kind said is the new object's


async def typed(toolbox: Toolbox, asked: Asked, target: TargetRef) -> ops.Change | Unclear:
    """The one change `asked` means for `target`, as it is now."""
    if asked.problem:
        return Unclear(f"Not done: {asked.problem}")
    obj = ops.Object(kind=target["kind"], name=target["name"], namespace=target["namespace"])  # type: ignore[arg-type]
    try:
        live = await _live(toolbox, obj)
        return await _change(toolbox, asked.op, obj, dict(asked.params), live)
    except Ask as exc:
        return Unclear(str(exc))
    except ValidationError as exc:
        return Unclear(not_valid(exc))


def not_valid(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"Not done: {first['msg']} ({where})." if where else f"Not done: {first['msg']}."


async def _live(toolbox: Toolbox, obj: ops.Object) -> dict[str, Any]:
    fields = [
        "spec.replicas",
        "spec.template.spec.containers",
        "spec.selector",
        "spec.template.metadata.labels",
        "spec.template.spec.tolerations",
        "spec.ports",
        "spec.resources.requests.storage",
        "status.capacity.storage",
        "spec.volumes",
        "spec.storageClassName",
    ]
    return dict(
        await toolbox.call(
            "get_resource",
            kind=obj.kind.lower(),
            name=obj.name,
            namespace=obj.namespace,
            output="fields",
            fields=fields,
        )
    )


async def _change(
    toolbox: Toolbox, op: str, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.Change:
    if op in _SIMPLE:
        return _SIMPLE[op](obj, params, live)
    if op in _READING:
        return await _READING[op](toolbox, obj, params, live)
    if op == "expose":
        return _expose(obj, params, live, _containers(live))
    container = _container(params.get("container", ""), _containers(live), obj)
    return _OF_CONTAINER[op](obj, params, container)


def _containers(live: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in live.get("spec.template.spec.containers") or [] if isinstance(c, dict)]


async def _resize(
    toolbox: Toolbox, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.Change:
    claim, live = await _claim(toolbox, obj, live)
    return ops.ResizeClaim(target=claim, size=_grown(params["size"], live, claim))


async def _image(
    toolbox: Toolbox, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.Change:
    container = _container(params.get("container", ""), _containers(live), obj)
    tag = params.get("tag", "")
    if params.get("latest") and tag:
        tag = await _latest(toolbox, str(container.get("image") or ""), tag)
    image = params.get("image") or _retagged(container, tag)
    return ops.SetImage(target=obj, container=container["name"], image=image)


async def _latest(toolbox: Toolbox, image: str, series: str) -> str:
    """The newest tag of `series` ("1.27": 1.27.4 over 1.27.3 and 1.27) the registry lists."""
    if not toolbox.has("image_tags"):
        raise Ask(f"I cannot ask a registry which {series} tags exist here: say the exact tag.")
    listed = await toolbox.call("image_tags", image=image, limit=1000)
    versions = [
        (tuple(int(p) for p in t.split(".")), t)
        for t in listed.get("tags") or []
        if re.fullmatch(rf"{re.escape(series)}(\.\d+)*", t)
    ]
    if not versions:
        raise Ask(f"{listed.get('repository', image)} has no {series} tag in its registry.")
    return str(max(versions)[1])


def _resources(obj: ops.Object, params: dict[str, Any], container: dict[str, Any]) -> ops.Change:
    values = {k: params[k] for k in ("cpu", "memory", "limit_cpu", "limit_memory") if k in params}
    return ops.SetResources(target=obj, container=container["name"], **values)


def _undo(obj: ops.Object, params: dict[str, Any], live: dict[str, Any]) -> ops.Change:
    if obj.kind != "Deployment":
        raise Ask(f"I can roll back Deployments only; {obj} keeps its revisions otherwise.")
    return ops.Undo(target=obj, revision=int(params.get("revision", 0)))


_SIMPLE: dict[str, Callable[[ops.Object, dict[str, Any], dict[str, Any]], ops.Change]] = {
    "scale": lambda obj, params, live: ops.Scale(target=obj, replicas=_replicas(params, live, obj)),
    "restart": lambda obj, params, live: ops.Restart(target=obj),
    "undo": _undo,
    "pause": lambda obj, params, live: ops.Pause(target=obj, paused=True),
    "resume": lambda obj, params, live: ops.Pause(target=obj, paused=False),
    "labels": lambda obj, params, live: ops.SetLabels(
        target=obj, field=params["field"], values=params["values"]
    ),
    "delete": lambda obj, params, live: ops.Delete(target=obj),
    "pdb": lambda obj, params, live: _budget(obj, params, live),
    "autoscale": lambda obj, params, live: _autoscaler(obj, params, live),
    "spread": lambda obj, params, live: ops.Spread(
        target=obj,
        selector=selector_of(live, obj),
        topology=params["topology"],
        hard=params.get("hard", False),
        max_skew=params.get("max_skew", 1),
    ),
    "node_selector": lambda obj, params, live: ops.SetNodeSelector(
        target=obj, values=params.get("values", {}), clear=params.get("clear", False)
    ),
}


def _replicas(params: dict[str, Any], live: dict[str, Any], obj: ops.Object) -> int:
    counted = Asked("scale", params).replicas(live.get("spec.replicas"))
    if counted is None:
        raise Ask(f"{obj} has no replica count I can change relatively; say how many.")
    return counted


def _container(named: str, containers: list[dict[str, Any]], obj: ops.Object) -> dict[str, Any]:
    names = [str(c.get("name")) for c in containers]
    if named:
        for container in containers:
            if container.get("name") == named:
                return container
        raise Ask(f"{obj} has no container {named!r}; it has {', '.join(names)}.")
    if len(containers) == 1:
        return containers[0]
    for container in containers:
        if container.get("name") == obj.name:
            return container
    raise Ask(
        f"{obj} has containers {', '.join(names) or 'none I can see'}: which one? Say "
        f"e.g. 'container {names[0] if names else 'NAME'}'."
    )


def _retagged(container: dict[str, Any], tag: str) -> str:
    image = str(container.get("image") or "")
    repository = image.split("@")[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    if not repository:
        raise Ask("the container names no image to change the tag of; give the whole image.")
    return f"{repository}:{tag}"


def selector_of(live: dict[str, Any], obj: ops.Object) -> dict[str, str]:
    """The labels that select the workload's pods (its selector, else its pods' labels)."""
    selector = live.get("spec.selector") or {}
    labels = selector.get("matchLabels") if isinstance(selector, dict) else None
    labels = labels or live.get("spec.template.metadata.labels") or {}
    if not labels:
        raise Ask(f"{obj} selects its pods by no labels I can use.")
    return {str(k): str(v) for k, v in labels.items()}


def container_ports(containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for c in containers for p in c.get("ports") or [] if isinstance(p, dict)]


def _expose(
    obj: ops.Object,
    params: dict[str, Any],
    live: dict[str, Any],
    containers: list[dict[str, Any]],
) -> ops.Expose:
    declared = container_ports(containers)
    if params.get("port"):
        target = params.get("target_port") or (
            declared[0]["containerPort"] if len(declared) == 1 else params["port"]
        )
        ports = [
            ops.Port(
                port=params["port"], target_port=target, protocol=params.get("protocol", "TCP")
            )
        ]
    elif declared:
        ports = [
            ops.Port(
                port=int(p["containerPort"]),
                protocol=p.get("protocol", "TCP"),
                name=str(p.get("name") or ""),
            )
            for p in declared
        ]
    else:
        raise Ask(
            f"{obj} declares no container port: on which port? Say e.g. 'expose "
            f"{obj.name} on port 80'."
        )
    name = params.get("name") or obj.name
    service = ops.Object(kind="Service", name=name, namespace=obj.namespace)
    return ops.Expose(
        target=service,
        workload=str(obj),
        selector=selector_of(live, obj),
        ports=ports,
        type=params.get("type", "ClusterIP"),
    )


def _budget(obj: ops.Object, params: dict[str, Any], live: dict[str, Any]) -> ops.Budget:
    name = params.get("name") or f"{obj.name}-pdb"
    budget = ops.Object(kind="PodDisruptionBudget", name=name, namespace=obj.namespace)
    minimum, maximum = params.get("min_available"), params.get("max_unavailable")
    if minimum is None and maximum is None:
        maximum = 1
    replicas = live.get("spec.replicas")
    if isinstance(minimum, int) and isinstance(replicas, int) and minimum >= replicas > 0:
        raise Ask(
            f"{obj} runs {replicas} replica(s): a budget keeping {minimum} available would "
            "block every drain. Say a smaller number, or scale it up first."
        )
    return ops.Budget(
        target=budget,
        workload=str(obj),
        selector=selector_of(live, obj),
        min_available=minimum,
        max_unavailable=maximum,
    )


def _autoscaler(obj: ops.Object, params: dict[str, Any], live: dict[str, Any]) -> ops.Autoscaler:
    current = live.get("spec.replicas") if isinstance(live.get("spec.replicas"), int) else 1
    low = int(params.get("min") or max(1, current or 1))
    high = int(params.get("max") or max(low + 1, 2 * low))
    cpu, memory = params.get("cpu"), params.get("memory")
    hpa = ops.Object(
        kind="HorizontalPodAutoscaler", name=params.get("name") or obj.name, namespace=obj.namespace
    )
    return ops.Autoscaler(
        target=hpa,
        workload_kind="StatefulSet" if obj.kind == "StatefulSet" else "Deployment",
        workload=obj.name,
        min=low,
        max=high,
        cpu=cpu if cpu or memory else 80,
        memory=memory,
    )


def _probes(obj: ops.Object, params: dict[str, Any], container: dict[str, Any]) -> ops.SetProbes:
    kinds: list[str] = list(params.get("probes") or ["readiness"])
    if params.get("remove"):
        return ops.SetProbes(target=obj, container=container["name"], probes=dict.fromkeys(kinds))  # type: ignore[arg-type]
    made: dict[str, ops.Probe | None] = {}
    for kind in kinds:
        before = probe_fields(container.get(f"{kind}Probe") or {})
        given: dict[str, Any] = {k: params[k] for k in PROBE_SETTINGS if k in params}
        fields: dict[str, Any] = {**before, **given}
        if "command" in fields and isinstance(fields["command"], str):
            fields["command"] = ["sh", "-c", fields["command"]]
        if "handler" not in fields:
            fields["handler"] = "http" if "path" in fields else "tcp"
        if "port" not in fields and fields["handler"] != "exec":
            ports = container_ports([container])
            if not ports and fields["handler"] == "tcp":
                raise Ask(
                    f"container {container['name']} of {obj} declares no port: which one "
                    f"should the {kind} probe check? Say e.g. 'on /healthz port 8080'."
                )
            fields["port"] = int(ports[0]["containerPort"]) if ports else 80
        made[kind] = ops.Probe(**fields)
    return ops.SetProbes(target=obj, container=container["name"], probes=made)  # type: ignore[arg-type]


_SOURCES: dict[str, intents.Listed] = {
    "ConfigMap": (("configmaps", "ConfigMap"),), "Secret": (("secrets", "Secret"),),
    "PersistentVolumeClaim": (("persistentvolumeclaims", "PersistentVolumeClaim"),),
}  # fmt: skip


async def _mount(
    toolbox: Toolbox, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.Mount:
    """What a workload mounts must exist in its namespace: the name said, or its near miss
    ("setings" is settings); a pod whose volume is missing would never start."""
    container = _container(params.get("container", ""), _containers(live), obj)
    source = params["source"]
    said = intents.Intent("change", (source["name"],), obj.namespace, source["name"])
    found = await intents.resolve(said, toolbox, kinds=_SOURCES[source["kind"]], pods=False)
    if isinstance(found, intents.Clarify):
        raise Ask(found.question)
    if found.namespace != obj.namespace:
        raise Ask(f"{source['kind']} {source['name']} is not in {obj.namespace}, where "
                  f"{obj} runs: a pod mounts only what its own namespace holds.")  # fmt: skip
    env_from = list(container.get("envFrom") or [])
    if not params.get("path") and not params.get("variable"):
        key = "configMapRef" if source["kind"] == "ConfigMap" else "secretRef"
        entry = {key: {"name": found.name}}
        if entry not in env_from:
            env_from.append(entry)
    return ops.Mount(
        target=obj,
        container=container["name"],
        source_kind=source["kind"],
        source=found.name,
        path=params.get("path", ""),
        variable=params.get("variable", ""),
        key=params.get("key", ""),
        env_from=env_from,
    )


async def _tolerations(
    toolbox: Toolbox, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.SetTolerations:
    current = [
        ops.Toleration(key=t["key"], value=t.get("value", ""), effect=t.get("effect", ""))
        for t in live.get("spec.template.spec.tolerations") or []
        if t.get("key")
    ]
    if "key" in params:
        wanted = [
            ops.Toleration(
                key=params["key"], value=params.get("value", ""), effect=params.get("effect", "")
            )
        ]
    else:
        wanted = await _taints_meant(toolbox, params.get("hint") or [])
    if params.get("remove"):
        keys = {t.key for t in wanted}
        kept = [t for t in current if t.key not in keys]
        return ops.SetTolerations(target=obj, tolerations=kept, removed=sorted(keys))
    added = [t for t in wanted if t not in current]
    return ops.SetTolerations(target=obj, tolerations=current + added, added=added)


async def _taints_meant(toolbox: Toolbox, hint: list[str]) -> list[ops.Toleration]:
    """ "the gpu taint": the taints on the cluster's nodes whose key or value holds a word."""
    listed = await toolbox.call(
        "list_resources", kind="nodes", output="fields", fields=["spec.taints"], limit=1000
    )
    taints = {
        (t.get("key"), t.get("value", ""), t.get("effect", ""))
        for item in listed.get("items", [])
        for t in item.get("spec.taints") or []
        if isinstance(t, dict)
        and t.get("key")
        and not str(t.get("key")).startswith("node.kubernetes.io/")
    }
    words = {w for w in hint if len(w) > 1}
    meant = sorted(
        t for t in taints if any(w in str(t[0]).lower() or w == str(t[1]).lower() for w in words)
    )
    if not meant:
        shown = ", ".join(sorted(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in taints))
        raise Ask(
            f"Which taint? The nodes carry: {shown or 'no taints'}. Say e.g. 'tolerate "
            "dedicated=gpu:NoSchedule'."
        )
    return [ops.Toleration(key=str(k), value=str(v), effect=e) for k, v, e in meant]


async def _retarget(
    toolbox: Toolbox, obj: ops.Object, params: dict[str, Any], live: dict[str, Any]
) -> ops.Retarget:
    ports = [p for p in live.get("spec.ports") or [] if isinstance(p, dict)]
    if params.get("type"):
        return ops.Retarget(target=obj, type=params["type"])
    if params.get("target_port"):
        port = int(ports[0]["port"]) if ports else 80
        return ops.Retarget(target=obj, port=port, target_port=params["target_port"])
    current = {str(k): str(v) for k, v in (live.get("spec.selector") or {}).items()}
    if params.get("selector"):
        selector = dict(params["selector"])
        removed = sorted(set(current) - set(selector))
        return ops.Retarget(target=obj, selector=selector, removed=removed)
    workload = await _workload_named(toolbox, obj.namespace, params.get("to") or [])
    labels = selector_of(workload[1], workload[0])
    selector = {k: labels[k] for k in current if k in labels} or dict(labels)
    removed = sorted(set(current) - set(selector))
    return ops.Retarget(
        target=obj, selector=selector, removed=removed, because=f"the pods of {workload[0]}"
    )


async def switched_service(
    toolbox: Toolbox, to: list[str], namespace: str | None
) -> intents.Target | intents.Clarify:
    """ "Switch traffic to the green version": the one Service that selects pods like the
    workload named (sharing a label with its pods) but not its own pods yet."""
    try:
        workload, live = await _workload_named(toolbox, namespace or "", to)
    except Ask as exc:
        return intents.Clarify(str(exc), ())
    labels = selector_of(live, workload)
    listed = await toolbox.call("list_resources", kind="services", namespace=workload.namespace,
                                output="fields", fields=["metadata.name", "spec.selector"],
                                limit=500)  # fmt: skip
    fronting = [
        str(item["metadata.name"]) for item in listed.get("items", [])
        if (selector := item.get("spec.selector") or {})
        and any(labels.get(k) == v for k, v in selector.items())
        and not all(labels.get(k) == v for k, v in selector.items())
    ]  # fmt: skip
    if len(fronting) == 1:
        return intents.Target("Service", fronting[0], workload.namespace)
    said = ", ".join(fronting) or "none"
    return intents.Clarify(f"Which Service should send its traffic to {workload}? Services "
                           f"selecting pods like it: {said}. Name it, e.g. 'point the "
                           f"<service> service at {workload.name}'.", ())  # fmt: skip


async def _workload_named(
    toolbox: Toolbox, namespace: str, said: list[str]
) -> tuple[ops.Object, dict[str, Any]]:
    intent = intents.Intent("change", tuple(said), namespace, " ".join(said))
    found = await intents.resolve(intent, toolbox, kinds=_ROLLED, pods=False)
    if isinstance(found, intents.Clarify):
        raise Ask(found.question)
    obj = ops.Object(kind=found.kind, name=found.name, namespace=found.namespace)  # type: ignore[arg-type]
    return obj, await _live(toolbox, obj)


async def _claim(
    toolbox: Toolbox, obj: ops.Object, live: dict[str, Any]
) -> tuple[ops.Object, dict[str, Any]]:
    """The claim meant: the one named, or the one claim a named pod mounts."""
    if obj.kind == "PersistentVolumeClaim":
        return obj, live
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in live.get("spec.volumes") or []
        if isinstance(v, dict) and v.get("persistentVolumeClaim")
    ]
    if len(claims) != 1:
        raise Ask(
            f"{obj} mounts {len(claims)} claims ({', '.join(claims) or 'none'}): name the "
            "claim to resize."
        )
    claim = ops.Object(kind="PersistentVolumeClaim", name=claims[0], namespace=obj.namespace)
    return claim, await _live(toolbox, claim)


def _grown(size: str, live: dict[str, Any], obj: ops.Object) -> str:
    now = live.get("status.capacity.storage") or live.get("spec.resources.requests.storage")
    if now and (quantity.parse(size) or 0) < (quantity.parse(str(now)) or 0):
        raise Ask(f"{obj} holds {now}; a claim can grow but never shrink.")
    return size


Reading = Callable[[Toolbox, ops.Object, dict[str, Any], dict[str, Any]], Awaitable[ops.Change]]
_READING: dict[str, Reading] = {
    "service": _retarget, "storage": _resize, "tolerate": _tolerations, "image": _image,
    "mount": _mount,
}  # fmt: skip
_OF_CONTAINER: dict[str, Callable[[ops.Object, dict[str, Any], dict[str, Any]], ops.Change]] = {
    "probe": _probes,
    "resources": _resources,
    "env": lambda obj, params, container: ops.SetEnv(
        target=obj, container=container["name"], env=params["env"]
    ),
}
