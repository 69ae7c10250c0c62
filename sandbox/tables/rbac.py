"""Rows for access control: RoleBindings and ClusterRoleBindings, and the kinds Kubernetes prints
with its generic `NAME CREATED AT` table (Roles, ClusterRoles, CustomResourceDefinitions).

A binding's wide columns split its subjects by kind: users, groups, and service accounts as
`namespace/name`. Reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import items, sub
from sandbox.tables.printer import (
    AGE,
    NAME,
    NAME_CREATED_AT,
    Column,
    Printer,
    age_of,
    name_of,
    wide,
)


def subjects(binding: Mapping[str, Any]) -> tuple[str, str, str]:
    """(users, groups, service accounts), each joined with ", "."""
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for subject in items(binding, "subjects"):
        kind, name = subject.get("kind"), str(subject.get("name", ""))
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return ", ".join(users), ", ".join(groups), ", ".join(accounts)


def _binding(obj: dict[str, Any], now: float) -> list[Any]:
    role = sub(obj, "roleRef")
    return [
        name_of(obj),
        f"{role.get('kind', '')}/{role.get('name', '')}",
        age_of(obj, now),
        *subjects(obj),
    ]


def _binding_printer(scope: str) -> Printer:
    return Printer(
        (
            NAME,
            Column("Role", "The role granted, as kind/name."),
            AGE,
            wide("Users", f"Users in the {scope}."),
            wide("Groups", f"Groups in the {scope}."),
            wide("ServiceAccounts", f"Service accounts in the {scope}, as namespace/name."),
        ),
        _binding,
    )


_RBAC = "rbac.authorization.k8s.io"

PRINTERS: Mapping[tuple[str, str], Printer] = {
    (_RBAC, "RoleBinding"): _binding_printer("roleBinding"),
    (_RBAC, "ClusterRoleBinding"): _binding_printer("clusterRoleBinding"),
    (_RBAC, "Role"): NAME_CREATED_AT,
    (_RBAC, "ClusterRole"): NAME_CREATED_AT,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): NAME_CREATED_AT,
}
