"""RBAC decisions explained: the reason an allow names (the binding, role and subject), the
reason a denial gives for bindings it cannot resolve, and the 403 Forbidden Status with
Kubernetes' wording for resources, subresources, cluster scope and non-resource paths.
"""

from __future__ import annotations

import pytest

from sandbox.auth import ANONYMOUS
from sandbox.errors import Forbidden
from sandbox.rbac import RBAC_GROUP, Attributes, Authorizer, forbidden, forbidden_message
from tests.sandbox.rbac_objects import (
    BOB,
    BUILDER_A,
    DEV,
    MASTER,
    OPS,
    MemoryReader,
    Obj,
    cluster_binding,
    matrix_objects,
    path,
    pods,
    res,
    role,
    role_binding,
    rule,
    user,
)


@pytest.mark.parametrize(
    ("attrs", "reason"),
    [
        (
            pods(BOB, "list"),
            'RBAC: allowed by RoleBinding "bob-reads-pods/team-a" of Role "pod-reader" '
            'to User "bob"',
        ),
        (
            pods(OPS, "list"),
            'RBAC: allowed by ClusterRoleBinding "ops-read-everything" of ClusterRole '
            '"cluster-reader" to Group "ops"',
        ),
        (
            res(BUILDER_A, "create", "batch", "jobs"),
            'RBAC: allowed by RoleBinding "builders/team-a" of Role "builder" '
            'to ServiceAccount "builder/team-a"',
        ),
        (
            res(DEV, "list", "apps", "deployments"),
            'RBAC: allowed by ClusterRoleBinding "dev-apps" of ClusterRole "apps-admin" '
            'to ServiceAccount "dev/team-a"',
        ),
        (res(MASTER, "list", "apps", "deployments"), ""),
    ],
    ids=["rolebinding-user", "clusterrolebinding-group", "rolebinding-sa", "clusterbinding-sa",
         "system-masters"],
)  # fmt: skip
def test_allow_reason_names_the_binding(attrs: Attributes, reason: str) -> None:
    decision = Authorizer(matrix_objects()).authorize(attrs)

    assert decision.allowed
    assert decision.reason == reason


@pytest.mark.parametrize(
    ("bindings", "reason"),
    [
        ([], ""),
        (
            [role_binding("team-a", "b1", ("Role", "gone"), user("bob"))],
            'RBAC: role.rbac.authorization.k8s.io "gone" not found',
        ),
        (
            [
                cluster_binding("c1", "missing", user("bob")),
                role_binding("team-a", "b1", ("Role", "gone"), user("bob")),
                role_binding("team-a", "b2", ("Role", "gone"), user("bob")),
            ],
            'RBAC: [clusterrole.rbac.authorization.k8s.io "missing" not found, '
            'role.rbac.authorization.k8s.io "gone" not found]',
        ),
        (
            [role_binding("team-a", "b1", ("Group", "x"), user("bob"))],
            'RBAC: unsupported role reference kind: "Group"',
        ),
    ],
    ids=["no-binding", "missing-role", "several-missing-deduplicated", "bad-roleref-kind"],
)
def test_denial_reason_reports_unresolvable_bindings(bindings: list[Obj], reason: str) -> None:
    decision = Authorizer(MemoryReader().add(*bindings)).authorize(pods(BOB, "list"))

    assert not decision.allowed
    assert decision.reason == reason


def test_a_working_binding_still_allows_next_to_a_broken_one() -> None:
    reader = MemoryReader().add(
        cluster_binding("broken", "missing", user("bob")),
        role("team-a", "reader", rule([""], ["pods"], ["list"])),
        role_binding("team-a", "ok", ("Role", "reader"), user("bob")),
    )

    assert Authorizer(reader).authorize(pods(BOB, "list")).allowed


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        (
            pods(DEV, "list"),
            'pods is forbidden: User "system:serviceaccount:team-a:dev" cannot list resource '
            '"pods" in API group "" in the namespace "team-a"',
        ),
        (
            res(BOB, "delete", "apps", "deployments", "default", name="web"),
            'deployments.apps "web" is forbidden: User "bob" cannot delete resource "deployments" '
            'in API group "apps" in the namespace "default"',
        ),
        (
            res(BOB, "list", "", "nodes", ""),
            'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" '
            "at the cluster scope",
        ),
        (
            pods(BOB, "get", "default", name="web-1", sub="log"),
            'pods "web-1" is forbidden: User "bob" cannot get resource "pods/log" in API group "" '
            'in the namespace "default"',
        ),
        (
            path(BOB, "/metrics"),
            'forbidden: User "bob" cannot get path "/metrics"',
        ),
        (
            res(ANONYMOUS, "get", RBAC_GROUP, "clusterroles", "", name="admin"),
            'clusterroles.rbac.authorization.k8s.io "admin" is forbidden: User "system:anonymous" '
            'cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" '
            "at the cluster scope",
        ),
    ],
    ids=["core-list-namespaced", "named-group-resource", "cluster-scope", "subresource",
         "non-resource", "named-cluster-scoped"],
)  # fmt: skip
def test_forbidden_message_matches_kubernetes_wording(attrs: Attributes, message: str) -> None:
    assert forbidden_message(attrs) == message


def test_forbidden_message_appends_the_authorizer_reason() -> None:
    reason = 'RBAC: role.rbac.authorization.k8s.io "gone" not found'

    assert forbidden_message(pods(BOB, "list"), reason=reason) == (
        'pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
        f'in the namespace "team-a": {reason}'
    )


@pytest.mark.parametrize(
    ("attrs", "details"),
    [
        (
            res(BOB, "delete", "apps", "deployments", "default", name="web"),
            {"name": "web", "group": "apps", "kind": "deployments"},
        ),
        (pods(BOB, "list"), {"kind": "pods"}),
        (path(BOB, "/metrics"), None),
    ],
    ids=["named", "collection", "non-resource"],
)
def test_forbidden_error_is_a_403_status_with_details(
    attrs: Attributes, details: dict[str, str] | None
) -> None:
    error = forbidden(attrs)
    body = error.status()

    assert isinstance(error, Forbidden)
    assert (body["code"], body["reason"]) == (403, "Forbidden")
    assert body["message"] == forbidden_message(attrs)
    assert body.get("details") == details
