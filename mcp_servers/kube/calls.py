"""Write calls as policy actions: what each kube write tool would change, on which live objects.

`plan_call` turns a tool's bound arguments into one or more `Planned` actions (one GET each for
the live object the policies' CEL conditions read, and one for its namespace's labels):
scale -> scale with `from` read live; set_image -> patch bringing in its image;
set_resources -> resize carrying each request's from (live) and to; rollout_restart /
rollout_undo -> restart / rollback; delete -> delete (of a namespace: of everything in it too);
cordon / uncordon -> themselves; taint -> drain (NoExecute: its pods are evicted), uncordon
(removal) or cordon; drain -> drain with the pods the plan evicts; patch and apply -> patch /
apply, judged on the server's dry run of the write, plus what that dry run shows it leads to
(`consequences`: a new replica count is a scale, new images are judged, a new owner is a
delete), so no way of writing a patch steps around a rule. Used by `gate`; knows nothing of
policies' verdicts or the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from core.connection import Api, Json
from core.errors import InvalidArgument, ToolError
from core.policy.actions import Action, ReplicaChange, TargetRef
from core.policy.documents.common import ActionType
from mcp_servers.common.yamltext import problem
from mcp_servers.kube import consequences, drain, resizing
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.writes import (
    APPLY_PATCH,
    CONTENT_TYPES,
    MANAGER,
    PatchType,
    Target,
    Writes,
    parse_patch,
)


@dataclass(frozen=True)
class Planned:
    """One action a call makes, with the live object it acts on (None: it does not exist yet)
    and, for apply and patch, the object as the write would leave it (a server-side dry run):
    what the policies judge, so a manifest cannot widen what the live object is judged by."""

    action: Action
    live: Json | None
    after: Json | None = None
    namespace_labels: dict[str, str] = field(default_factory=dict)

    @property
    def judged(self) -> Json | None:
        return self.after if self.after is not None else self.live


Planner = Callable[[Writes, Api, KubeSettings, Mapping[str, Any]], list[Planned]]


def plan_call(
    writes: Writes, settings: KubeSettings, tool: str, arguments: Mapping[str, Any]
) -> list[Planned]:
    """The actions the write tool `tool` makes with `arguments` (its bound call); a call that
    names a kubeconfig context acts on that cluster's objects (`TargetRef.cluster`)."""
    context = arguments.get("context")
    api = writes.api(context)
    planned = _PLANNERS[tool](writes, api, settings, arguments)
    if not planned:
        raise InvalidArgument(f"{tool}: the call names no object to change")
    if context:
        planned = [replace(p, action=_in_cluster(p.action, str(context))) for p in planned]
    labels: dict[str, dict[str, str]] = {}
    for each in planned:
        namespace = each.action.target.namespace
        if namespace and namespace not in labels:
            labels[namespace] = _namespace_labels(writes, api, namespace)
    return [replace(p, namespace_labels=labels.get(p.action.target.namespace or "", {}))
            for p in planned]  # fmt: skip


def _in_cluster(action: Action, cluster: str) -> Action:
    target = action.target.model_copy(update={"cluster": cluster})
    return action.model_copy(update={"target": target})


def _namespace_labels(writes: Writes, api: Api, namespace: str) -> dict[str, str]:
    """The labels policies select namespaces by; none when it cannot be read (a new one)."""
    try:
        found = api.get(writes.catalog.resolve(api, "namespaces").path(None, namespace),
                        what=f"namespace {namespace}")  # fmt: skip
    except ToolError:
        return {}
    labels = (found.get("metadata") or {}).get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _on(
    writes: Writes, api: Api, kind: str, name: str, namespace: str | None
) -> tuple[Target, Json | None]:
    target = writes.target(api, kind, name, namespace)
    return target, writes.current(api, target)


def _action(
    kind: ActionType,
    target: Target,
    live: Json | None,
    *,
    to: int | None = None,
    pods: int | None = None,
    images: list[str] | None = None,
) -> Planned:
    ref = TargetRef(kind=target.resource.kind, name=target.name, namespace=target.namespace)
    replicas = None
    if to is not None:  # a create brings its replicas from none (else the policy store takes
        # "from" off the object judged, the new one: "2 -> 2" for a create with 2)
        start = consequences.replicas(live) if live is not None else 0
        replicas = ReplicaChange(from_=start, to=to)
    action = Action(type=kind, target=ref, replicas=replicas, pods=pods, images=images or None)
    return Planned(action, live)


def _outcome(
    target: Target, live: Json | None, kind: ActionType, after: Json | None, asked: object
) -> list[Planned]:
    """The action judged on the object as the write leaves it, with what that leads to.

    `after` is the server's dry run of the write; `asked` is the replica count the request
    names, used only when the server refused the dry run (the write then fails alike)."""
    planned = [_action(kind, target, live, images=consequences.new_images(live, after))]
    then = consequences.replicas(after) if after is not None else consequences.count(asked)
    if then is not None and then != consequences.replicas(live):
        planned.append(_action("scale", target, live, to=then))
    if consequences.owned_anew(live, after):
        planned.append(_action("delete", target, live))  # its new owner's end is its own
    return [replace(each, after=after) for each in planned]


def _dry_run(
    writes: Writes, api: Api, target: Target, *, body: Any, content_type: str, query: Json
) -> Json | None:
    """The object as the write would leave it; None when the server refuses the dry run (the
    write itself then fails the same way, after the gate)."""
    try:
        return writes.preview(api, target, "PATCH", body=body, content_type=content_type,
                              query=query)  # fmt: skip
    except ToolError:
        return None


def _scale(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    target, live = _on(writes, api, a["kind"], a["name"], a.get("namespace"))
    return [_action("scale", target, live, to=a["replicas"])]


def _patch(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    target, live = _on(writes, api, a["kind"], a["name"], a.get("namespace"))
    patch_type: PatchType = a.get("patch_type") or "strategic"
    after = _dry_run(
        writes, api, target, body=parse_patch(a["patch"], patch_type),
        content_type=CONTENT_TYPES[patch_type], query={"fieldManager": MANAGER},
    )  # fmt: skip
    return _outcome(target, live, "patch", after, _patched_replicas(a["patch"]))


def _set_resources(
    writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]
) -> list[Planned]:
    """A resize carrying the values the call writes, so the gate can hold an approved proposal
    to exactly those values."""
    requests, limits = resizing.asked(a["cpu"], a["memory"], a["limit_cpu"], a["limit_memory"])
    target, live = _on(writes, api, a["kind"], a["name"], a.get("namespace"))
    body, change = resizing.resize(live, target.what, a["container"], requests, limits)
    after = _dry_run(
        writes, api, target, body=body, content_type=CONTENT_TYPES["strategic"],
        query={"fieldManager": MANAGER},
    )  # fmt: skip
    ref = TargetRef(kind=target.resource.kind, name=target.name, namespace=target.namespace)
    return [Planned(Action(type="resize", target=ref, resources=[change]), live, after)]


def _patched_replicas(patch: object) -> object:
    if isinstance(patch, str):
        try:
            patch = yaml.safe_load(patch)
        except yaml.YAMLError:
            return None  # the tool refuses it with a better message
    if isinstance(patch, list):  # a JSON patch
        values = [
            op.get("value")
            for op in patch
            if isinstance(op, dict) and op.get("path") == "/spec/replicas"
        ]
        return values[-1] if values else None
    spec = patch.get("spec") if isinstance(patch, dict) else None
    return spec.get("replicas") if isinstance(spec, dict) else None


def _set_image(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    target, live = _on(writes, api, a["kind"], a["name"], a.get("namespace"))
    image = str(a["image"])
    brought = [image] if image not in consequences.images(live) else []
    return [_action("patch", target, live, images=brought)]


def _delete(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    """A delete; of a namespace, also a delete of each object in it, each judged by the rules
    written for it (a namespace rule-free is no way around a workload's minimum)."""
    target, live = _on(writes, api, a["kind"], a["name"], a.get("namespace"))
    planned = [_action("delete", target, live)]
    if target.resource.kind != "Namespace" or live is None:
        return planned
    known = writes.catalog.resources(api)
    kinds = []
    for name in consequences.CONTENTS:
        try:
            kinds.append(known.resolve(name))
        except ToolError:
            continue  # a kind this cluster does not serve
    for resource, item in consequences.contents(api, kinds, target.name):
        inner = Target(resource, str(item["metadata"]["name"]), target.name)
        planned.append(_action("delete", inner, item))
    return planned


def _named(kind: ActionType, resource: str | None = None) -> Planner:
    """A tool acting on one named object as one action of `kind`."""

    def planner(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
        target, live = _on(writes, api, resource or a["kind"], a["name"], a.get("namespace"))
        return [_action(kind, target, live)]

    return planner


def _node(kind: ActionType) -> Planner:
    def planner(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
        target, live = _on(writes, api, "nodes", a["node"], None)
        return [_action(kind, target, live)]

    return planner


def _taint(writes: Writes, api: Api, settings: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    """Removing a taint frees the node (uncordon); NoExecute evicts the pods that do not
    tolerate it (a drain, of about every pod a drain would move); else it is a cordon."""
    target, live = _on(writes, api, "nodes", a["node"], None)
    if a.get("remove"):
        return [_action("uncordon", target, live)]
    if a.get("effect") == "NoExecute":
        moving = drain.plan(api, a["node"], settings, force=True, delete_emptydir_data=True)
        pods = sum(1 for move in moving.pods if move.action == "evict")
        return [_action("drain", target, live, pods=pods)]
    return [_action("cordon", target, live)]


def _drain(writes: Writes, api: Api, settings: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    target, live = _on(writes, api, "nodes", a["node"], None)
    moving = drain.plan(
        api,
        a["node"],
        settings,
        force=bool(a.get("force")),
        delete_emptydir_data=bool(a.get("delete_emptydir_data")),
    )
    pods = sum(1 for move in moving.pods if move.action == "evict")
    return [_action("drain", target, live, pods=pods)]


def _apply(writes: Writes, api: Api, _: KubeSettings, a: Mapping[str, Any]) -> list[Planned]:
    try:
        documents = [d for d in yaml.safe_load_all(a["manifest"]) if isinstance(d, dict)]
    except yaml.YAMLError as exc:  # its words, never its text: a manifest may hold Secrets
        raise InvalidArgument(f"the manifest is not YAML or JSON: {problem(exc)}") from None
    planned: list[Planned] = []
    for doc in documents:
        metadata = _mapping(doc.get("metadata"))
        resource = writes.catalog.resources(api).by_kind(
            str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
        )
        if resource is None or not metadata.get("name"):
            continue  # the tool refuses the manifest, naming what is wrong
        qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
        namespace = metadata.get("namespace") or a.get("namespace")
        target, live = _on(writes, api, qualified, str(metadata["name"]), namespace)
        placed = {**doc, "metadata": {**metadata, "namespace": target.namespace}}
        if not target.namespace:
            placed = doc
        after = _dry_run(
            writes, api, target, body=placed, content_type=APPLY_PATCH,
            query={"fieldManager": MANAGER, "force": bool(a.get("force"))},
        )  # fmt: skip
        # A new object in a namespace this manifest creates cannot be dry-run yet: judge the
        # manifest itself, which is what the object will be.
        spec = _mapping(doc.get("spec"))
        planned += _outcome(
            target, live, "apply", after if after is not None else placed, spec.get("replicas")
        )
    return planned


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


_PLANNERS: dict[str, Planner] = {
    "apply": _apply,
    "patch": _patch,
    "scale": _scale,
    "set_image": _set_image,
    "set_resources": _set_resources,
    # The policies' own words for these, so a rule written for restarts or rollbacks fires.
    "rollout_restart": _named("restart"),
    "rollout_undo": _named("rollback", "deployments.apps"),
    "delete": _delete,
    "cordon": _node("cordon"),
    "uncordon": _node("uncordon"),
    "taint": _taint,
    "drain": _drain,
}
