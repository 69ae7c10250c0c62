"""Rows for cluster-level and configuration kinds: Nodes, Namespaces, Leases, PriorityClasses,
ResourceQuotas, LimitRanges, ConfigMaps, Secrets and ServiceAccounts.

A node's STATUS is its Ready condition (`Ready`, `NotReady`, `Unknown`) plus
`SchedulingDisabled` when cordoned; ROLES come from `node-role.kubernetes.io/<role>` labels and
the older `kubernetes.io/role` label. LimitRanges have no printer in Kubernetes and show
`NAME CREATED AT`. Reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import NONE, items, sub
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

_ROLE_PREFIX = "node-role.kubernetes.io/"
_ROLE_LABEL = "kubernetes.io/role"
_UNKNOWN = "<unknown>"


def node_status(node: Mapping[str, Any]) -> str:
    ready = None
    for condition in items(sub(node, "status"), "conditions"):
        if condition.get("type") == "Ready":
            ready = condition.get("status")  # the last one wins, as in Kubernetes' map
    words = ["Unknown" if ready is None else ("Ready" if ready == "True" else "NotReady")]
    if sub(node, "spec").get("unschedulable"):
        words.append("SchedulingDisabled")
    return ",".join(words)


def node_roles(node: Mapping[str, Any]) -> str:
    roles = set()
    for key, value in sub(node, "metadata", "labels").items():
        if key.startswith(_ROLE_PREFIX) and len(key) > len(_ROLE_PREFIX):
            roles.add(key[len(_ROLE_PREFIX) :])
        elif key == _ROLE_LABEL and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or NONE


def _address(node: Mapping[str, Any], kind: str) -> str:
    for address in items(sub(node, "status"), "addresses"):
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return NONE


def _node(obj: dict[str, Any], now: float) -> list[Any]:
    info = sub(obj, "status", "nodeInfo")
    return [
        name_of(obj),
        node_status(obj),
        node_roles(obj),
        age_of(obj, now),
        str(info.get("kubeletVersion", "")),
        _address(obj, "InternalIP"),
        _address(obj, "ExternalIP"),
        info.get("osImage") or _UNKNOWN,
        info.get("kernelVersion") or _UNKNOWN,
        info.get("containerRuntimeVersion") or _UNKNOWN,
    ]


def _namespace(obj: dict[str, Any], now: float) -> list[Any]:
    return [name_of(obj), str(sub(obj, "status").get("phase") or "Active"), age_of(obj, now)]


def _lease(obj: dict[str, Any], now: float) -> list[Any]:
    holder = sub(obj, "spec").get("holderIdentity")
    return [name_of(obj), "" if holder is None else str(holder), age_of(obj, now)]


def _priority_class(obj: dict[str, Any], now: float) -> list[Any]:
    return [
        name_of(obj),
        int(obj.get("value") or 0),
        bool(obj.get("globalDefault")),
        age_of(obj, now),
        str(obj.get("preemptionPolicy") or "PreemptLowerPriority"),
    ]


def quota_columns(status: Mapping[str, Any]) -> tuple[str, str]:
    """(REQUEST, LIMIT): `used/hard` per resource, `limits.*` resources in the second."""
    hard, used = sub(status, "hard"), sub(status, "used")
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        column = limits if resource.startswith("limits.") else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return ", ".join(requests), ", ".join(limits)


def _resource_quota(obj: dict[str, Any], now: float) -> list[Any]:
    requests, limits = quota_columns(sub(obj, "status"))
    return [name_of(obj), requests, limits, age_of(obj, now)]


def _config_map(obj: dict[str, Any], now: float) -> list[Any]:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [name_of(obj), count, age_of(obj, now)]


def _secret(obj: dict[str, Any], now: float) -> list[Any]:
    # stringData is write-only and merged into data by the API; count it if a store kept it.
    keys = set(obj.get("data") or {}) | set(obj.get("stringData") or {})
    return [name_of(obj), str(obj.get("type") or "Opaque"), len(keys), age_of(obj, now)]


def _service_account(obj: dict[str, Any], now: float) -> list[Any]:
    return [name_of(obj), len(items(obj, "secrets")), age_of(obj, now)]


def _quota_description(kind: str) -> str:
    return f"Used out of hard {kind} per resource."


PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("", "Node"): Printer(
        (
            NAME,
            Column("Status", "Readiness, and whether scheduling is disabled."),
            Column("Roles", "Roles from node-role labels."),
            AGE,
            Column("Version", "The kubelet version."),
            wide("Internal-IP", "The node's internal address."),
            wide("External-IP", "The node's external address."),
            wide("OS-Image", "The operating system image."),
            wide("Kernel-Version", "The kernel version."),
            wide("Container-Runtime", "The container runtime and its version."),
        ),
        _node,
    ),
    ("", "Namespace"): Printer((NAME, Column("Status", "The namespace's phase."), AGE), _namespace),
    ("coordination.k8s.io", "Lease"): Printer(
        (NAME, Column("Holder", "The identity holding the lease."), AGE), _lease
    ),
    ("scheduling.k8s.io", "PriorityClass"): Printer(
        (
            NAME,
            Column("Value", "The priority value.", type="integer"),
            Column("Global-Default", "Whether pods without a class get this one.", type="boolean"),
            AGE,
            Column("PreemptionPolicy", "Whether these pods may preempt others."),
        ),
        _priority_class,
    ),
    ("", "ResourceQuota"): Printer(
        (
            NAME,
            Column("Request", _quota_description("requests")),
            Column("Limit", _quota_description("limits")),
            AGE,
        ),
        _resource_quota,
    ),
    ("", "LimitRange"): NAME_CREATED_AT,
    ("", "ConfigMap"): Printer((NAME, Column("Data", "Number of data keys."), AGE), _config_map),
    ("", "Secret"): Printer(
        (NAME, Column("Type", "The secret's type."), Column("Data", "Number of keys."), AGE),
        _secret,
    ),
    ("", "ServiceAccount"): Printer(
        (NAME, Column("Secrets", "Number of secrets listed on the account."), AGE),
        _service_account,
    ),
}
