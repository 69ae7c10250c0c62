"""RBAC over-grants: bindings that give a person or workload the run of the cluster.

Read through the kube tools (ClusterRoleBindings, RoleBindings, and the roles they point at) and
judged here: a binding to `cluster-admin`, or to any role with a rule of every verb on every
resource, is an over-grant for each subject that is not part of the control plane (`system:`
users and groups, and service accounts of the system namespaces). A binding that grants
anything to a namespace's `default` ServiceAccount is a finding too: every pod that names no
account runs as it. These are reported, never changed: revoking access is the owners' call.
In a fleet each cluster's bindings are read with its context (`cluster`), and judged alone.
"""

from __future__ import annotations

from typing import Any

from agents.platform.fleet import DEFAULT, listed
from agents.platform.workloads import Finding, Json, finding
from agents.runtime.toolbox import Toolbox

SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
CLUSTER_ADMIN = "cluster-admin"
BINDING_FIELDS = ["roleRef", "subjects"]


def is_system(subject: Json, binding_namespace: str) -> bool:
    name = str(subject.get("name", ""))
    if subject.get("kind") == "ServiceAccount":
        return str(subject.get("namespace") or binding_namespace) in SYSTEM_NAMESPACES
    return name.startswith("system:")


def wildcard(rules: Any) -> bool:
    return any(
        "*" in (rule.get("verbs") or [])
        and "*" in (rule.get("resources") or [])
        and "*" in (rule.get("apiGroups") or [])
        for rule in rules or []
        if isinstance(rule, dict)
    )


def subject_text(subject: Json, binding_namespace: str) -> str:
    if subject.get("kind") == "ServiceAccount":
        where = subject.get("namespace") or binding_namespace
        return f"ServiceAccount {where}/{subject.get('name')}"
    return f"{subject.get('kind')} {subject.get('name')}"


def judge(kind: str, binding: Json, wildcards: set[tuple[str, str]]) -> list[Finding]:
    """One binding's findings; `wildcards` holds (role kind, namespace or "") + name pairs."""
    namespace = str(binding.get("namespace", ""))
    ref = f"{kind} {namespace + '/' if namespace else ''}{binding['name']}"
    role = binding.get("roleRef") or {}
    role_kind, role_name = str(role.get("kind", "")), str(role.get("name", ""))
    scope = "" if role_kind == "ClusterRole" else namespace
    admin = role_kind == "ClusterRole" and role_name == CLUSTER_ADMIN
    broad = admin or (f"{role_kind}:{scope}", role_name) in wildcards
    found: list[Finding] = []
    for index, subject in enumerate(binding.get("subjects") or []):
        if is_system(subject, namespace):
            continue
        who = subject_text(subject, namespace)
        if broad:
            where = (
                "the whole cluster" if kind == "ClusterRoleBinding" else f"namespace {namespace}"
            )
            grants = "cluster-admin" if admin else "every verb on every resource"
            found.append(finding(
                "rbac-cluster-admin" if admin else "rbac-wildcard",
                "critical" if admin and kind == "ClusterRoleBinding" else "high",
                ref, f"subjects[{index}]", who,
                f"{who} gets {role_kind} {role_name} ({grants}) over {where}",
            ))  # fmt: skip
        if subject.get("kind") == "ServiceAccount" and subject.get("name") == "default":
            found.append(finding(
                "rbac-default-sa", "medium", ref, f"subjects[{index}]", who,
                f"{who} is bound to {role_kind} {role_name}: every pod of the namespace that names "
                "no ServiceAccount gets it; bind a dedicated ServiceAccount instead",
            ))  # fmt: skip
    return found


async def findings(
    toolbox: Toolbox, namespace: str | None = None, *, cluster: str = DEFAULT
) -> list[Finding]:
    """Over-grants in the cluster, or those touching one namespace (its RoleBindings, and the
    ClusterRoleBindings whose subjects include one of its service accounts)."""
    wildcards: set[tuple[str, str]] = set()
    for kind in ("ClusterRole", "Role"):
        scope = namespace if kind == "Role" else None
        for role in await listed(toolbox, kind, ["rules"], namespace=scope, cluster=cluster):
            if wildcard(role.get("rules")):
                wildcards.add((f"{kind}:{role.get('namespace', '')}", str(role["name"])))
    found: list[Finding] = []
    for binding in await listed(toolbox, "ClusterRoleBinding", BINDING_FIELDS, cluster=cluster):
        subjects = binding.get("subjects") or []
        if namespace is None or any(s.get("namespace") == namespace for s in subjects):
            found += judge("ClusterRoleBinding", binding, wildcards)
    bindings = await listed(
        toolbox, "RoleBinding", BINDING_FIELDS, namespace=namespace, cluster=cluster
    )
    for binding in bindings:
        if str(binding.get("namespace", "")) not in SYSTEM_NAMESPACES:
            found += judge("RoleBinding", binding, wildcards)
    return found
