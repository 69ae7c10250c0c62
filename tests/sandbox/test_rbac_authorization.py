"""RBAC authorization: the allow/deny matrix of Roles, ClusterRoles and their bindings (namespaces,
verbs, subresources, resourceNames, wildcards, service-account and group subjects, non-resource
URLs, system:masters), label selectors and ClusterRole aggregation, and how soon an Authorizer
sees changed RBAC objects.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest

from sandbox.auth import ANONYMOUS
from sandbox.rbac import RBAC_GROUP, Attributes, Authorizer, aggregated_rules, selector_matches
from tests.sandbox.rbac_objects import (
    ALICE,
    AUDITOR,
    BOB,
    BUILDER_A,
    BUILDER_B,
    DEV,
    MASTER,
    OPS,
    SCALER,
    WATCHER,
    MemoryReader,
    Obj,
    cluster_binding,
    cluster_role,
    matrix_objects,
    path,
    pods,
    res,
    role,
    role_binding,
    rule,
    user,
)


@dataclass
class VersionedMemoryReader(MemoryReader):
    version: int = 0


MATRIX: list[tuple[str, Attributes, bool]] = [
    # Role + RoleBinding: that namespace only, those verbs only
    ("rolebinding-role-allows-in-namespace", pods(BOB, "list"), True),
    ("rolebinding-role-other-namespace", pods(BOB, "list", "team-b"), False),
    ("rolebinding-role-not-cluster-wide", pods(BOB, "list", ""), False),
    ("rolebinding-role-verb-not-granted", pods(BOB, "delete", name="web-1"), False),
    ("rolebinding-role-other-group", res(BOB, "list", "apps", "pods"), False),
    # subresources
    ("subresource-listed-allows", pods(BOB, "get", name="web-1", sub="log"), True),
    ("subresource-not-listed-denies", pods(BOB, "create", name="web-1", sub="exec"), False),
    ("resource-rule-does-not-cover-subresource", res(ALICE, "get", "apps", "deployments",
                                                     sub="status", name="web"), False),
    ("star-slash-subresource-allows-any-resource", res(SCALER, "update", "apps", "deployments",
                                                       sub="scale", name="web"), True),
    ("star-slash-subresource-other-kind", res(SCALER, "patch", "apps", "statefulsets",
                                              "team-z", sub="scale", name="db"), True),
    ("star-slash-subresource-not-the-resource", res(SCALER, "update", "apps", "deployments",
                                                    name="web"), False),
    ("star-slash-subresource-other-subresource", res(SCALER, "update", "apps", "deployments",
                                                     sub="status", name="web"), False),
    # resourceNames
    ("resource-name-listed", res(BOB, "update", "", "configmaps", name="app-config"), True),
    ("resource-name-not-listed", res(BOB, "update", "", "configmaps", name="other"), False),
    ("resource-names-never-allow-list", res(BOB, "get", "", "configmaps"), False),
    # ClusterRole through a RoleBinding: the binding's namespace only
    ("rolebinding-clusterrole-in-namespace", res(ALICE, "delete", "apps", "deployments",
                                                 name="web"), True),
    ("rolebinding-clusterrole-other-namespace", res(ALICE, "delete", "apps", "deployments",
                                                    "team-b", name="web"), False),
    # ClusterRoleBinding: everywhere, wildcard groups/resources/verbs
    ("clusterrolebinding-cluster-scope", res(OPS, "list", "", "nodes", ""), True),
    ("clusterrolebinding-any-namespace", pods(OPS, "watch", "kube-system"), True),
    ("wildcard-group-and-resource", res(OPS, "get", "example.com", "widgets", name="w"), True),
    ("wildcard-resource-covers-subresource", pods(OPS, "get", name="web-1", sub="log"), True),
    ("wildcard-verb-list-only", pods(OPS, "delete", name="web-1"), False),
    ("wildcard-verb", res(DEV, "deletecollection", "apps", "replicasets", "team-q"), True),
    ("apps-wildcard-resource-covers-subresource", res(DEV, "update", "apps", "deployments",
                                                      sub="scale", name="web"), True),
    ("apps-wildcard-not-core", pods(DEV, "list"), False),
    # ServiceAccount subjects
    ("sa-subject-defaults-to-binding-namespace", res(BUILDER_A, "create", "batch", "jobs"), True),
    ("sa-subject-same-name-other-namespace", res(BUILDER_B, "create", "batch", "jobs",
                                                 "team-a"), False),
    ("sa-subject-unqualified-in-clusterrolebinding", pods(BUILDER_A, "list"), False),
    ("sa-group-subject", res(DEV, "get", "", "secrets", "team-b", name="s"), True),
    ("sa-group-subject-other-namespace-account", res(BUILDER_B, "get", "", "secrets", "team-b",
                                                     name="s"), False),
    ("user-subject-naming-an-sa", res(AUDITOR, "list", "", "namespaces", ""), True),
    # aggregation
    ("aggregated-clusterrole-includes-selected", res(WATCHER, "list", "events.k8s.io", "events",
                                                     "team-c"), True),
    ("aggregated-clusterrole-excludes-unselected", res(WATCHER, "list", "", "secrets",
                                                       "team-c"), False),
    # non-resource URLs
    ("non-resource-exact", path(OPS, "/healthz"), True),
    ("non-resource-prefix", path(OPS, "/logs/kube-apiserver.log"), True),
    ("non-resource-prefix-needs-the-slash", path(OPS, "/logs"), False),
    ("non-resource-unlisted", path(OPS, "/metrics"), False),
    ("non-resource-verb", path(OPS, "/healthz", "post"), False),
    ("resource-rule-never-grants-path", path(DEV, "/apis/apps"), False),
    # privileged and unprivileged identities
    ("system-masters-always", res(MASTER, "escalate", RBAC_GROUP, "clusterroles", ""), True),
    ("system-masters-path", path(MASTER, "/debug/pprof"), True),
    ("anonymous-nothing", pods(ANONYMOUS, "list"), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("attrs", "allowed"), [(a, ok) for _, a, ok in MATRIX], ids=[i for i, _, _ in MATRIX]
)
def test_authorization_matrix(attrs: Attributes, allowed: bool) -> None:
    reader = matrix_objects()
    before = copy.deepcopy(reader.items)

    decision = Authorizer(reader).authorize(attrs)

    assert decision.allowed is allowed
    assert reader.items == before


def test_changes_are_seen_at_once_without_a_change_counter() -> None:
    reader = MemoryReader()
    authz = Authorizer(reader)
    assert not authz.authorize(pods(BOB, "list")).allowed

    reader.add(
        role("team-a", "reader", rule([""], ["pods"], ["list"])),
        role_binding("team-a", "bob", ("Role", "reader"), user("bob")),
    )

    assert authz.authorize(pods(BOB, "list")).allowed


def test_versioned_reader_is_read_again_only_when_its_version_moves() -> None:
    reader = VersionedMemoryReader()
    reader.add(
        role("team-a", "reader", rule([""], ["pods"], ["list"])),
        role_binding("team-a", "bob", ("Role", "reader"), user("bob")),
    )
    authz = Authorizer(reader)
    assert authz.authorize(pods(BOB, "list")).allowed
    reads = reader.reads

    for _ in range(5):
        assert authz.authorize(pods(BOB, "list")).allowed
    assert reader.reads == reads

    reader.items[(RBAC_GROUP, "rolebindings")].clear()
    reader.version += 1

    assert not authz.authorize(pods(BOB, "list")).allowed


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]},
         {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
         {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
         {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"b": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": "1"}, False),
        ({"matchLabels": {"a": "1"},
          "matchExpressions": [{"key": "b", "operator": "Exists"}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
         {"a": "2"}, False),
    ],
    ids=["empty-matches-all", "match-labels", "match-labels-mismatch", "in", "in-missing-key",
         "notin", "notin-missing-key", "notin-excluded", "exists", "exists-missing",
         "doesnotexist", "doesnotexist-present", "labels-and-expressions-all-required",
         "unknown-operator"],
)  # fmt: skip
def test_label_selector(selector: Obj, labels: dict[str, str], matches: bool) -> None:
    assert selector_matches(selector, labels) is matches


def test_aggregation_is_transitive_and_survives_cycles() -> None:
    top = cluster_role("top", selectors=[{"matchLabels": {"to-top": "true"}}])
    middle = cluster_role(
        "middle",
        labels={"to-top": "true", "to-middle": "true"},  # selects itself: must be skipped
        selectors=[{"matchLabels": {"to-middle": "true"}}],
    )
    leaf = cluster_role("leaf", rule([""], ["pods"], ["get"]), labels={"to-middle": "true"})
    loop_a = cluster_role(
        "loop-a",
        rule([""], ["secrets"], ["get"]),
        labels={"loop": "b"},
        selectors=[{"matchLabels": {"loop": "a"}}],
    )
    loop_b = cluster_role(
        "loop-b", rule([""], ["configmaps"], ["get"]), labels={"loop": "a"},
        selectors=[{"matchLabels": {"loop": "b"}}],
    )  # fmt: skip
    roles = [top, middle, leaf, loop_a, loop_b]

    assert aggregated_rules(top, roles) == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    ]
    # The cycle stops where it started: loop-a's stored rules reach it back through loop-b.
    assert aggregated_rules(loop_a, roles) == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}
    ]
    assert aggregated_rules(leaf, roles) == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    ]


def test_aggregated_role_ignores_its_own_stored_rules() -> None:
    stale = cluster_role("agg", rule(["*"], ["*"], ["*"]), selectors=[{"matchLabels": {"x": "y"}}])
    reader = MemoryReader().add(stale, cluster_binding("b", "agg", user("bob")))

    assert not Authorizer(reader).authorize(pods(BOB, "list")).allowed
