"""RBAC rules reviews: `Authorizer.rules_for` lists the resource and non-resource rules a user
holds in a namespace, through the bindings of that namespace and aggregated ClusterRoles, without
duplicates (what SelfSubjectRulesReview and `kubectl auth can-i --list` show).
"""

from __future__ import annotations

import pytest

from sandbox.auth import UserInfo
from sandbox.rbac import Authorizer
from tests.sandbox.rbac_objects import (
    BOB,
    OPS,
    WATCHER,
    MemoryReader,
    Obj,
    cluster_binding,
    cluster_role,
    group,
    matrix_objects,
    rule,
    user,
)


def test_rules_for_lists_resource_and_non_resource_rules() -> None:
    reader = matrix_objects()

    resource, non_resource = Authorizer(reader).rules_for(OPS, "team-a")

    assert resource == [{"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["*"]}]
    assert non_resource == [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/*"]}]


@pytest.mark.parametrize(
    ("who", "namespace", "expected"),
    [
        (
            BOB,
            "team-a",
            [
                {"verbs": ["get", "list", "watch"], "apiGroups": [""],
                 "resources": ["pods", "pods/log"]},
                {"verbs": ["get", "update"], "apiGroups": [""], "resources": ["configmaps"],
                 "resourceNames": ["app-config"]},
            ],
        ),
        (BOB, "team-b", []),
        (BOB, "", []),
        (
            WATCHER,
            "team-c",
            [{"verbs": ["list"], "apiGroups": ["events.k8s.io"], "resources": ["events"]}],
        ),
    ],
    ids=["role-in-namespace", "other-namespace", "cluster-scope", "aggregated"],
)  # fmt: skip
def test_rules_for_follows_bindings_of_the_namespace(
    who: UserInfo, namespace: str, expected: list[Obj]
) -> None:
    resource, non_resource = Authorizer(matrix_objects()).rules_for(who, namespace)

    assert resource == expected
    assert non_resource == []


def test_rules_for_drops_duplicate_rules() -> None:
    shared = rule([""], ["pods"], ["get"])
    reader = MemoryReader().add(
        cluster_role("a", shared),
        cluster_role("b", shared),
        cluster_binding("a", "a", user("bob")),
        cluster_binding("b", "b", group("system:authenticated")),
    )

    resource, _ = Authorizer(reader).rules_for(BOB, "")

    assert resource == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
