"""A change of a namespace's frame asked in words, made precise against the cluster: a new
namespace (with a quota, labels, a pod security level), a quota or default container limits for
one that exists, its labels and pod security, and who may do what in it (a RoleBinding to
view, edit or admin, or to a Role of exactly the rules asked; revoking removes the subject from
the one binding that names it).

What cannot be made precise is the question to ask back; nothing changes.
Must not know: the grammar's internals, any other agent.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from agents.runtime.changes import ops, present
from agents.runtime.changes.words import Asked
from agents.runtime.toolbox import Toolbox

OPS = frozenset(
    {"namespace", "quota", "limitrange", "podsecurity", "grant", "revoke", "serviceaccount"}
)


def asks(asked: object) -> bool:
    """Whether `asked` is the Platform's: a frame operation, or a namespace's labels or delete."""
    return isinstance(asked, Asked) and (
        asked.op in OPS or (asked.kind == "Namespace" and asked.op in ("labels", "delete"))
    )


async def typed(toolbox: Toolbox, asked: Asked, namespace: str | None) -> ops.Change | str:
    if asked.problem:
        return f"Not done: {asked.problem}"
    params = asked.params
    try:
        if asked.op == "namespace":
            return await _new_namespace(toolbox, params)
        said = (asked.params.get("name") if asked.op == "delete" else "") or asked.namespace
        said = said or next(iter(asked.subject), "") or namespace or ""
        if not said:
            return "Which namespace? Say e.g. '... in shop'."
        where, _ = await present.namespace_meant(toolbox, said)
        if not where:
            return f"There is no namespace {said!r}: create it first ('create namespace {said}')."
        if asked.op == "serviceaccount":
            return await _new_service_account(toolbox, params["name"], where)
        if asked.op == "revoke":
            return await _revoke(toolbox, params, where)
        return _in_namespace(asked.op, params, where)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"Not done: {first['msg']} ({'.'.join(map(str, first['loc']))})."


def _in_namespace(op: str, params: dict[str, Any], where: str) -> ops.Change:
    """The changes of a namespace's frame that need nothing read: its quota, default limits,
    pod security, labels, its delete, a grant of access in it."""
    if op == "quota":
        name = params.get("name") or "quota"
        target = ops.Object(kind="ResourceQuota", name=name, namespace=where)
        return ops.Quota(target=target, hard=params["hard"])
    if op == "limitrange":
        target = ops.Object(kind="LimitRange", name="limits", namespace=where)
        return ops.DefaultLimits(target=target, limits=params["limits"])
    if op == "grant":
        return _grant(params, where)
    space = ops.Object(kind="Namespace", name=where)
    if op == "podsecurity":
        key = f"pod-security.kubernetes.io/{params.get('mode', 'enforce')}"
        return ops.SetLabels(target=space, values={key: params["level"]})
    if op == "labels":
        return ops.SetLabels(target=space, field=params["field"], values=params["values"])
    return ops.Delete(target=space)


async def _new_service_account(toolbox: Toolbox, name: str, namespace: str) -> ops.Change | str:
    if await present.exists(toolbox, "serviceaccount", name, namespace):
        return (
            f"ServiceAccount {name} exists already in {namespace}: say what it may do ('let "
            f"the service account {name} list pods in {namespace}')."
        )
    return ops.NewServiceAccount(target=ops.Object(kind="ServiceAccount", name=name,
                                                   namespace=namespace))  # fmt: skip


async def _new_namespace(toolbox: Toolbox, params: dict[str, Any]) -> ops.Change | str:
    name = params["name"]
    if await present.exists(toolbox, "namespace", name, None):
        return (
            f"Namespace {name} exists already: say what to change in it ('set a quota of 10 "
            f"pods on {name}', 'enforce restricted pod security in {name}')."
        )
    return ops.NewNamespace(
        target=ops.Object(kind="Namespace", name=name),
        labels=params.get("labels") or {},
        pod_security=params.get("pod_security"),
        quota=params.get("quota") or {},
    )


def _subject(params: dict[str, Any], namespace: str) -> ops.Subject:
    said = params["subject"]
    where = namespace if said["kind"] == "ServiceAccount" else ""
    return ops.Subject(kind=said["kind"], name=said["name"], namespace=where)


def _grant(params: dict[str, Any], namespace: str) -> ops.Change:
    subject = _subject(params, namespace)
    rules = [
        ops.Rule(
            verbs=r["verbs"],
            resources=r["resources"],
            api_groups=sorted({_group(x) for x in r["resources"]}),
        )
        for r in params.get("rules") or []
    ]
    what = params.get("role") or "-".join(
        sorted({v for r in rules for v in r.verbs})[:3]
        + [r.resources[0].split("/")[-1] for r in rules][:2]
    )
    name = re.sub(r"[^a-z0-9-]+", "-", f"{subject.name}-{what}".lower()).strip("-")[:63]
    target = ops.Object(kind="RoleBinding", name=name.replace("*", "all"), namespace=namespace)
    return ops.Grant(target=target, subject=subject, role=params.get("role") or "", rules=rules)


_GROUPS = {
    "deployments": "apps",
    "statefulsets": "apps",
    "daemonsets": "apps",
    "replicasets": "apps",
    "jobs": "batch",
    "cronjobs": "batch",
    "ingresses": "networking.k8s.io",
    "networkpolicies": "networking.k8s.io",
    "horizontalpodautoscalers": "autoscaling",
}


def _group(resource: str) -> str:
    return _GROUPS.get(resource.split("/")[0], "")


async def _revoke(toolbox: Toolbox, params: dict[str, Any], namespace: str) -> ops.Change | str:
    subject = _subject(params, namespace)
    listed = await toolbox.call(
        "list_resources",
        kind="rolebindings",
        namespace=namespace,
        output="fields",
        fields=["metadata.name", "subjects"],
        limit=500,
    )
    mine = []
    for item in listed.get("items", []):
        subjects = [s for s in item.get("subjects") or [] if isinstance(s, dict)]
        if any(_same(s, subject) for s in subjects):
            mine.append((str(item["metadata.name"]), subjects))
    if not mine:
        return f"No RoleBinding in {namespace} names {subject}: there is nothing to revoke."
    if len(mine) > 1:
        names = ", ".join(name for name, _ in mine)
        return (
            f"{subject} is named by {len(mine)} RoleBindings in {namespace} ({names}): say "
            "which to revoke, e.g. by asking to delete the rolebinding."
        )
    name, subjects = mine[0]
    remaining = [
        ops.Subject(
            kind=s["kind"],
            name=s["name"],
            namespace=s.get("namespace", "") if s["kind"] == "ServiceAccount" else "",
        )
        for s in subjects
        if not _same(s, subject)
    ]
    target = ops.Object(kind="RoleBinding", name=name, namespace=namespace)
    return ops.Revoke(target=target, subject=subject, remaining=remaining)


def _same(spec: dict[str, Any], subject: ops.Subject) -> bool:
    if spec.get("kind") != subject.kind or spec.get("name") != subject.name:
        return False
    return subject.kind != "ServiceAccount" or spec.get("namespace", "") == subject.namespace
