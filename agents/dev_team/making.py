"""New objects a person asks for in words, made precise against the cluster: a workload from a
description, a ConfigMap, a PersistentVolumeClaim, a network policy between workloads, an
Ingress route.

They name no one object that exists (a new workload's name is new; a policy joins several),
so each reads what it needs itself: whether the object already exists (then it says how to
change it instead), which pods a workload's name selects (a policy's parties), which Service
and port a route sends to. The namespace is the one the words name, else the conversation's,
else `default`. What cannot be made precise is an `Unclear`; nothing changes.

Must not know: the grammar's internals, any other agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from agents.dev_team import intents
from agents.dev_team.changing import Ask, Unclear, not_valid, selector_of
from agents.runtime.changes import ops, present
from agents.runtime.changes.words import Asked
from agents.runtime.toolbox import Toolbox

NEW_OBJECT_OPS = frozenset({"create", "configmap", "netpol", "ingress", "claim", "secret"})
_WORKLOADS: intents.Listed = (
    ("deployments", "Deployment"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
)


async def typed(toolbox: Toolbox, asked: Asked, namespace: str | None) -> ops.Change | Unclear:
    if asked.problem:
        return Unclear(f"Not done: {asked.problem}")
    try:
        said = asked.namespace or namespace
        where = await namespace_meant(toolbox, said) if said else None
        if asked.op == "create":
            return await _workload(toolbox, asked.params, where or "default")
        if asked.op == "configmap":
            return await _configmap(toolbox, asked.params, where)
        if asked.op == "claim":
            return await _claim(toolbox, asked.params, where or "default")
        if asked.op == "netpol":
            return await _policy(toolbox, asked, where)
        return await _route(toolbox, asked, where or "default")
    except Ask as exc:
        return Unclear(str(exc))
    except ValidationError as exc:
        return Unclear(not_valid(exc))


async def namespace_meant(toolbox: Toolbox, said: str) -> str:
    """The namespace `said` names: itself, or its one near miss ("stagng" is staging)."""
    meant, names = await present.namespace_meant(toolbox, said)
    if meant is None:
        raise Ask(f"There is no namespace {said!r}; the namespaces are: "
                  f"{', '.join(names[:20])}.")  # fmt: skip
    return meant


async def _workload(toolbox: Toolbox, params: dict[str, Any], namespace: str) -> ops.Change:
    kind, name = params["kind"], params.get("name") or ""
    if not name:
        raise Ask("What should it be called? Say e.g. 'run redis:7 as cache'.")
    if await present.exists(toolbox, kind, name, namespace):
        raise Ask(
            f"{kind} {name} already exists in {namespace}: say what to change in it "
            f"('set the image of {name} to ...', 'scale {name} to 3'), or pick another "
            "name."
        )
    target = ops.Object(kind=kind, name=name, namespace=namespace)
    resources = params.get("resources") or {}
    return ops.NewWorkload(
        target=target,
        image=params["image"],
        container=params.get("container", ""),
        replicas=params.get("replicas") or 1,
        command=params.get("command") or [],
        port=params.get("port") or 0,
        env=params.get("env") or {},
        resources=ops.Resources(**resources),
        schedule=params.get("schedule", ""),
    )


async def _claim(toolbox: Toolbox, params: dict[str, Any], namespace: str) -> ops.Change:
    name = params["name"]
    if await present.exists(toolbox, "persistentvolumeclaim", name, namespace):
        raise Ask(
            f"PersistentVolumeClaim {name} already exists in {namespace}: to grow it, say "
            f"'resize the {name} pvc to {params['size'] or '20Gi'}'; or pick another name."
        )
    target = ops.Object(kind="PersistentVolumeClaim", name=name, namespace=namespace)
    return ops.NewClaim(
        target=target,
        size=params["size"],
        storage_class=params.get("storage_class"),
        shared=bool(params.get("shared")),
    )


async def _configmap(toolbox: Toolbox, params: dict[str, Any], namespace: str | None) -> ops.Change:
    """A new ConfigMap when asked to create one (in the namespace said, else default); else
    the one that exists: by its name or a near miss, in the namespace said or the only one."""
    data, name = dict(params["data"]), params["name"]
    if params.get("create"):
        target = ops.Object(kind="ConfigMap", name=name, namespace=namespace or "default")
        if await present.exists(toolbox, "configmap", name, target.namespace):
            return ops.ConfigData(target=target, data=data)  # it exists: its keys are set
        return ops.ConfigData(target=target, data=data, create=True)
    intent = intents.Intent("change", (name,), namespace, name)
    found = await intents.resolve(intent, toolbox, kinds=(("configmaps", "ConfigMap"),),
                                  pods=False)  # fmt: skip
    if isinstance(found, intents.Clarify):
        raise Ask(found.question)
    target = ops.Object(kind="ConfigMap", name=found.name, namespace=found.namespace)
    return ops.ConfigData(target=target, data=data)


async def _pods_of(
    toolbox: Toolbox, word: str, namespace: str | None
) -> tuple[dict[str, str], ops.Object]:
    """The labels of the pods a workload's name (or a near miss) selects, and the workload."""
    intent = intents.Intent("change", (word,), namespace, word)
    found = await intents.resolve(intent, toolbox, kinds=_WORKLOADS, pods=False)
    if isinstance(found, intents.Clarify):
        raise Ask(found.question)
    obj = ops.Object(kind=found.kind, name=found.name, namespace=found.namespace)  # type: ignore[arg-type]
    live = await toolbox.call(
        "get_resource",
        kind=obj.kind.lower(),
        name=obj.name,
        namespace=obj.namespace,
        output="fields",
        fields=["spec.selector", "spec.template.metadata.labels"],
    )
    return selector_of(live, obj), obj


async def _policy(toolbox: Toolbox, asked: Asked, said: str | None) -> ops.Change:
    """The policy lives where its pods are: the namespace said, else the selected workload's
    (found in any namespace), else default."""
    params = asked.params
    selector: dict[str, str] = {}
    namespace, base = said or "default", "default"
    selected = f"every pod in {namespace}"
    target_words = list(params.get("target") or [])
    if target_words:
        selector, workload = await _pods_of(toolbox, target_words[0], said)
        namespace = workload.namespace
        selected, base = f"the pods of {workload}", workload.name
    peers: list[ops.Peer] = []
    for peer in params.get("peers") or []:
        if "word" in peer:
            labels, workload = await _pods_of(toolbox, peer["word"], namespace)
            peers.append(ops.Peer(pods=labels, said=str(workload)))
        elif "namespace" in peer:
            peers.append(
                ops.Peer(namespace=peer["namespace"], said=f"pods in namespace {peer['namespace']}")
            )
        elif peer.get("dns"):
            peers.append(ops.Peer(dns=True, said="DNS"))
        elif peer.get("cidr"):
            peers.append(ops.Peer(cidr=peer["cidr"], said=peer["cidr"]))
        elif peer.get("everywhere"):
            peers.append(ops.Peer(cidr="0.0.0.0/0", said="anywhere"))
    direction: Literal["ingress", "egress"] = (
        "egress" if params.get("direction") == "egress" else "ingress"
    )
    if not peers and not params.get("deny"):
        raise Ask(
            "Allow traffic from or to whom? Say e.g. 'only web may reach api' or 'deny "
            "all ingress in shop'."
        )
    name = params.get("name") or (
        f"{base}-deny-{direction}" if not peers else f"{base}-allow-{direction}"
    )
    ports = [
        ops.Port(port=p["port"], protocol=p.get("protocol", "TCP"))
        for p in params.get("ports") or []
        if p.get("port") != 53 or not any(peer.dns for peer in peers)
    ]
    target = ops.Object(kind="NetworkPolicy", name=name[:63], namespace=namespace)
    return ops.NetworkRule(
        target=target,
        pod_selector=selector,
        direction=direction,
        peers=peers,
        ports=ports,
        selected=selected,
    )


async def _route(toolbox: Toolbox, asked: Asked, namespace: str) -> ops.Change:
    params = asked.params
    said = params.get("service") or next(iter(asked.subject), "")
    if not said:
        raise Ask("Route to which Service? Say e.g. 'route /app to service web'.")
    found = await _service_for(toolbox, said, namespace)
    ports = found.ports
    port = params.get("port") or (int(ports[0]["port"]) if ports else 80)
    name = params.get("name") or found.name
    target = ops.Object(kind="Ingress", name=name, namespace=found.namespace)
    return ops.Route(
        target=target,
        host=params.get("host", ""),
        path=params.get("path") or "/",
        service=found.name,
        port=port,
        ingress_class=params.get("class", ""),
    )


@dataclass(frozen=True)
class _Service:
    name: str
    namespace: str
    ports: list[dict[str, Any]]


async def _service_for(toolbox: Toolbox, said: str, namespace: str) -> _Service:
    """The Service a route sends to: the one named (or a near miss), else the one Service that
    selects the pods of the workload named ("an ingress for web" when web's Service is front)."""
    intent = intents.Intent("change", (said,), namespace, said)
    found = await intents.resolve(intent, toolbox, kinds=(("services", "Service"),), pods=False)
    if not isinstance(found, intents.Clarify):
        live = await toolbox.call(
            "get_resource",
            kind="service",
            name=found.name,
            namespace=found.namespace,
            output="fields",
            fields=["spec.ports"],
        )
        return _Service(found.name, found.namespace, list(live.get("spec.ports") or []))
    labels, workload = await _pods_of(toolbox, said, namespace)
    where = workload.namespace
    listed = await toolbox.call(
        "list_resources",
        kind="services",
        namespace=where,
        output="fields",
        fields=["metadata.name", "spec.selector", "spec.ports"],
        limit=500,
    )
    fronting = [
        s
        for s in listed.get("items", [])
        if s.get("spec.selector") and all(labels.get(k) == v for k, v in s["spec.selector"].items())
    ]
    if len(fronting) != 1:
        names = ", ".join(str(s.get("metadata.name")) for s in fronting)
        raise Ask(
            f"{workload} has {len(fronting)} Services in front of it ({names or 'none'}): "
            f"name the Service to route to, or expose it first ('expose {said} on port "
            "80')."
        )
    chosen = fronting[0]
    return _Service(str(chosen["metadata.name"]), where, list(chosen.get("spec.ports") or []))
