"""Shared builders for the RBAC tests (tests/sandbox/test_rbac_*.py).

What may live here: an in-memory reader of RBAC objects for `sandbox.rbac.Authorizer`, builders of
rules, roles, bindings and subjects, the cast of users and service accounts the tests ask about,
the one set of RBAC objects (`matrix_objects`) several modules authorize against, and builders of
the request `Attributes`. Tests, and builders only one test module uses, belong in the modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox.auth import UserInfo
from sandbox.rbac import RBAC_GROUP, Attributes

Obj = dict[str, Any]


@dataclass
class MemoryReader:
    """Objects by (group, plural); `version` is None for a reader without a change counter."""

    items: dict[tuple[str, str], list[Obj]] = field(default_factory=dict)
    reads: int = 0

    def objects(self, group: str, plural: str, namespace: str | None = None) -> list[Obj]:
        self.reads += 1
        return [
            o
            for o in self.items.get((group, plural), [])
            if namespace is None or o["metadata"].get("namespace", "") == namespace
        ]

    def add(self, *objs: Obj) -> MemoryReader:
        for obj in objs:
            self.items.setdefault((RBAC_GROUP, _PLURALS[obj["kind"]]), []).append(obj)
        return self


_PLURALS = {
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}


def rule(
    groups: list[str], resources: list[str], verbs: list[str], names: list[str] | None = None
) -> Obj:
    out: Obj = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        out["resourceNames"] = names
    return out


def urls(paths: list[str], verbs: list[str]) -> Obj:
    return {"nonResourceURLs": paths, "verbs": verbs}


def role(namespace: str, name: str, *rules: Obj) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"namespace": namespace, "name": name},
        "rules": list(rules),
    }


def cluster_role(
    name: str, *rules: Obj, labels: dict[str, str] | None = None, selectors: list[Obj] | None = None
) -> Obj:
    obj: Obj = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels or {}},
        "rules": list(rules),
    }
    if selectors is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


def user(name: str) -> Obj:
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def sa(name: str, namespace: str = "") -> Obj:
    subject: Obj = {"kind": "ServiceAccount", "name": name}
    if namespace:
        subject["namespace"] = namespace
    return subject


def role_binding(namespace: str, name: str, ref: tuple[str, str], *subjects: Obj) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"namespace": namespace, "name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": ref[0], "name": ref[1]},
        "subjects": list(subjects),
    }


def cluster_binding(name: str, ref: str, *subjects: Obj) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ref},
        "subjects": list(subjects),
    }


BOB = UserInfo("bob", groups=("system:authenticated",))
ALICE = UserInfo("alice", groups=("system:authenticated",))
OPS = UserInfo("olga", groups=("ops", "system:authenticated"))
SCALER = UserInfo("sam", groups=("scalers", "system:authenticated"))
MASTER = UserInfo("root", groups=("system:masters",))


def service_account(namespace: str, name: str) -> UserInfo:
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        groups=(
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        ),
    )


DEV = service_account("team-a", "dev")
BUILDER_A = service_account("team-a", "builder")
BUILDER_B = service_account("team-b", "builder")
AUDITOR = service_account("audit", "auditor")
WATCHER = service_account("team-c", "watcher")

AGGREGATE = "example.com/aggregate-to-monitoring"


def matrix_objects() -> MemoryReader:
    return MemoryReader().add(
        role(
            "team-a",
            "pod-reader",
            rule([""], ["pods", "pods/log"], ["get", "list", "watch"]),
            rule([""], ["configmaps"], ["get", "update"], names=["app-config"]),
        ),
        role_binding("team-a", "bob-reads-pods", ("Role", "pod-reader"), user("bob")),
        cluster_role("deployment-manager", rule(["apps"], ["deployments"], ["*"])),
        role_binding(
            "team-a", "alice-deploys", ("ClusterRole", "deployment-manager"), user("alice")
        ),
        cluster_role(
            "cluster-reader",
            rule(["*"], ["*"], ["get", "list", "watch"]),
            urls(["/healthz", "/logs/*"], ["get"]),
        ),
        cluster_binding("ops-read-everything", "cluster-reader", group("ops")),
        cluster_role("scaler", rule(["apps"], ["*/scale"], ["get", "update", "patch"])),
        cluster_binding("scalers", "scaler", group("scalers")),
        cluster_role("apps-admin", rule(["apps"], ["*"], ["*"])),
        cluster_binding("dev-apps", "apps-admin", sa("dev", "team-a")),
        role("team-a", "builder", rule(["batch"], ["jobs"], ["create"])),
        role_binding("team-a", "builders", ("Role", "builder"), sa("builder")),
        cluster_binding("unqualified-sa", "cluster-reader", sa("builder")),
        cluster_role("secret-reader", rule([""], ["secrets"], ["get"])),
        role_binding(
            "team-b", "team-a-accounts", ("ClusterRole", "secret-reader"),
            group("system:serviceaccounts:team-a"),
        ),
        cluster_role("namespace-lister", rule([""], ["namespaces"], ["list"])),
        cluster_binding("auditor", "namespace-lister", user("system:serviceaccount:audit:auditor")),
        cluster_role(
            "monitoring",
            selectors=[
                {"matchExpressions": [{"key": AGGREGATE, "operator": "In", "values": ["true"]}]}
            ],
        ),
        cluster_role(
            "monitoring-events",
            rule(["events.k8s.io"], ["events"], ["list"]),
            labels={AGGREGATE: "true"},
        ),
        cluster_role(
            "monitoring-excluded",
            rule([""], ["secrets"], ["list"]),
            labels={AGGREGATE: "false"},
        ),
        role_binding("team-c", "watchers", ("ClusterRole", "monitoring"), sa("watcher")),
    )  # fmt: skip


def pods(
    who: UserInfo, verb: str, namespace: str = "team-a", name: str = "", sub: str = ""
) -> Attributes:
    return Attributes(
        user=who, verb=verb, namespace=namespace, resource="pods", subresource=sub, name=name
    )


def res(
    who: UserInfo,
    verb: str,
    group_: str,
    resource: str,
    namespace: str = "team-a",
    *,
    sub: str = "",
    name: str = "",
) -> Attributes:
    return Attributes(
        user=who,
        verb=verb,
        namespace=namespace,
        api_group=group_,
        resource=resource,
        subresource=sub,
        name=name,
    )


def path(who: UserInfo, url: str, verb: str = "get") -> Attributes:
    return Attributes(user=who, verb=verb, path=url)
