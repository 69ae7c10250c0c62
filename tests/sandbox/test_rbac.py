"""RBAC: the allow/deny matrix, 403 wording, rules reviews, aggregation and the default roles."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from sandbox.auth import ANONYMOUS, UserInfo
from sandbox.errors import Forbidden
from sandbox.rbac import (
    RBAC_GROUP,
    Attributes,
    Authorizer,
    aggregated_rules,
    bootstrap_objects,
    forbidden,
    forbidden_message,
    selector_matches,
)
from sandbox.registry import BUILTINS

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


@dataclass
class VersionedMemoryReader(MemoryReader):
    version: int = 0


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


# -- the default roles of a fresh cluster --------------------------------------------------------


def bootstrapped(*extra: Obj) -> MemoryReader:
    return MemoryReader().add(*bootstrap_objects(), *extra)


def bound_to(cluster_role_name: str, who: UserInfo, namespace: str = "team-a") -> Authorizer:
    binding = role_binding(
        namespace, f"{who.username}-{cluster_role_name}", ("ClusterRole", cluster_role_name),
        user(who.username),
    )  # fmt: skip
    return Authorizer(bootstrapped(binding))


@pytest.mark.parametrize(
    ("role_name", "attrs", "allowed"),
    [
        ("view", res(BOB, "get", "", "secrets", name="db"), False),
        ("view", res(BOB, "list", "", "secrets"), False),
        ("view", pods(BOB, "list"), True),
        ("view", pods(BOB, "get", name="web-1", sub="log"), True),
        ("view", res(BOB, "get", "apps", "deployments", sub="scale", name="web"), True),
        ("view", res(BOB, "list", "metrics.k8s.io", "pods"), True),
        ("view", res(BOB, "create", "apps", "deployments"), False),
        ("view", res(BOB, "list", RBAC_GROUP, "rolebindings"), False),
        ("edit", res(BOB, "create", "apps", "deployments"), True),
        ("edit", res(BOB, "update", "apps", "deployments", sub="scale", name="web"), True),
        ("edit", res(BOB, "get", "", "secrets", name="db"), True),
        ("edit", pods(BOB, "create", name="web-1", sub="eviction"), True),
        ("edit", res(BOB, "create", "", "serviceaccounts", sub="token", name="dev"), True),
        ("edit", res(BOB, "create", RBAC_GROUP, "rolebindings"), False),
        ("edit", res(BOB, "update", "apps", "deployments", sub="status", name="web"), False),
        ("admin", res(BOB, "create", RBAC_GROUP, "rolebindings"), True),
        ("admin", res(BOB, "create", "apps", "deployments"), True),
        ("admin", res(BOB, "create", "authorization.k8s.io", "localsubjectaccessreviews"), True),
        ("admin", res(BOB, "list", "", "nodes", ""), False),
        ("admin", res(BOB, "create", "apps", "deployments", "team-b"), False),
        ("cluster-admin", res(BOB, "delete", "", "namespaces", "team-a", name="team-a"), True),
    ],
    ids=["view-cannot-get-secrets", "view-cannot-list-secrets", "view-lists-pods",
         "view-reads-logs", "view-reads-scale", "view-reads-metrics", "view-cannot-create",
         "view-cannot-read-rbac", "edit-creates-deployments", "edit-scales", "edit-reads-secrets",
         "edit-evicts", "edit-requests-tokens", "edit-cannot-bind-roles",
         "edit-cannot-write-status", "admin-creates-rolebindings", "admin-includes-edit",
         "admin-local-access-reviews", "admin-namespace-only-no-nodes",
         "admin-namespace-only-other-namespace", "cluster-admin-in-namespace"],
)  # fmt: skip
def test_default_user_facing_roles(role_name: str, attrs: Attributes, allowed: bool) -> None:
    assert bound_to(role_name, BOB).authorize(attrs).allowed is allowed


# Resources real Kubernetes' defaults deliberately leave out, with the reason.
NOT_IN_VIEW = {
    ("", "secrets"),  # reading secrets escalates to the identities they hold
    ("coordination.k8s.io", "leases"),  # edit only
    ("events.k8s.io", "events"),  # view reads core/v1 events only
    (RBAC_GROUP, "roles"),  # admin only
    (RBAC_GROUP, "rolebindings"),
}
NOT_WRITABLE_BY_EDIT = {
    ("", "endpoints"),  # removed from edit for CVE-2021-25740
    ("", "limitranges"),
    ("", "resourcequotas"),
    ("apps", "controllerrevisions"),
    ("discovery.k8s.io", "endpointslices"),
    ("events.k8s.io", "events"),
    ("metrics.k8s.io", "pods"),
    (RBAC_GROUP, "roles"),  # admin only
    (RBAC_GROUP, "rolebindings"),
}
NAMESPACED_LISTABLE = [
    (rt.group, rt.plural) for rt in BUILTINS if rt.namespaced and "list" in rt.verbs
]


@pytest.mark.parametrize(
    ("group_", "plural"),
    NAMESPACED_LISTABLE,
    ids=[f"{g or 'core'}/{p}" for g, p in NAMESPACED_LISTABLE],
)
def test_default_roles_cover_the_served_resources(group_: str, plural: str) -> None:
    view, edit, admin = (bound_to(name, BOB) for name in ("view", "edit", "admin"))
    reads = res(BOB, "list", group_, plural)
    writes = res(BOB, "create", group_, plural)

    assert view.authorize(reads).allowed is ((group_, plural) not in NOT_IN_VIEW)
    assert edit.authorize(writes).allowed is ((group_, plural) not in NOT_WRITABLE_BY_EDIT)
    assert admin.authorize(reads).allowed is ((group_, plural) != ("events.k8s.io", "events"))


@pytest.mark.parametrize(
    ("attrs", "allowed"),
    [
        (res(BOB, "create", "authorization.k8s.io", "selfsubjectaccessreviews", ""), True),
        (res(BOB, "create", "authorization.k8s.io", "selfsubjectrulesreviews", ""), True),
        (res(BOB, "create", "authentication.k8s.io", "selfsubjectreviews", ""), True),
        (path(BOB, "/apis/apps/v1"), True),
        (path(BOB, "/openapi/v3"), True),
        (path(BOB, "/version"), True),
        (path(BOB, "/metrics"), False),
        (pods(BOB, "list"), False),
        (path(ANONYMOUS, "/healthz"), True),
        (path(ANONYMOUS, "/readyz"), True),
        (path(ANONYMOUS, "/api"), True),
        (res(ANONYMOUS, "create", "authorization.k8s.io", "selfsubjectaccessreviews", ""),
         False),
        (pods(ANONYMOUS, "list"), False),
        (res(MASTER, "delete", "", "nodes", "", name="n1"), True),
    ],
    ids=["basic-user-access-review", "basic-user-rules-review", "basic-user-whoami",
         "discovery", "openapi", "public-info-version", "no-metrics", "no-pods",
         "anonymous-healthz", "anonymous-readyz", "anonymous-discovery",
         "anonymous-no-access-review", "anonymous-no-pods", "masters"],
)  # fmt: skip
def test_default_bindings_for_every_identity(attrs: Attributes, allowed: bool) -> None:
    assert Authorizer(bootstrapped()).authorize(attrs).allowed is allowed


def test_monitoring_group_may_scrape_metrics() -> None:
    prometheus = UserInfo("prometheus", groups=("system:monitoring", "system:authenticated"))

    assert Authorizer(bootstrapped()).authorize(path(prometheus, "/metrics")).allowed


def test_cluster_admin_rules_review_shows_everything() -> None:
    resource, non_resource = Authorizer(bootstrapped()).rules_for(MASTER, "default")

    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in resource
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in non_resource


def test_bootstrap_objects_are_well_formed_and_consistent() -> None:
    objects = bootstrap_objects()
    roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
    bindings = [o for o in objects if o["kind"] == "ClusterRoleBinding"]

    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
            "system:public-info-viewer"} <= set(roles)  # fmt: skip
    assert all(o["apiVersion"] == "rbac.authorization.k8s.io/v1" for o in objects)
    assert all(b["roleRef"]["name"] in roles for b in bindings)
    defaults = [o for o in objects if o["metadata"]["name"] != "system:aggregated-metrics-reader"]
    assert all(
        o["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults" for o in defaults
    )
    subjects = {b["metadata"]["name"]: [s["name"] for s in b["subjects"]] for b in bindings}
    assert subjects["cluster-admin"] == ["system:masters"]
    assert subjects["system:basic-user"] == ["system:authenticated"]
    assert subjects["system:public-info-viewer"] == [
        "system:authenticated",
        "system:unauthenticated",
    ]


@pytest.mark.parametrize("name", ["admin", "edit", "view"])
def test_bootstrap_aggregated_roles_carry_their_aggregated_rules(name: str) -> None:
    objects = bootstrap_objects()
    roles = [o for o in objects if o["kind"] == "ClusterRole"]
    target = next(r for r in roles if r["metadata"]["name"] == name)

    assert target["aggregationRule"]["clusterRoleSelectors"] == [
        {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{name}": "true"}}
    ]
    assert target["rules"] == aggregated_rules(target, roles)
    assert target["rules"]


def test_view_rules_never_mention_secrets() -> None:
    view = next(o for o in bootstrap_objects() if o["metadata"]["name"] == "view")

    assert all("secrets" not in r.get("resources", []) for r in view["rules"])


def test_bootstrap_objects_are_fresh_on_every_call() -> None:
    first = bootstrap_objects()
    first[0]["rules"].clear()
    first[0]["metadata"]["labels"]["changed"] = "yes"

    second = bootstrap_objects()

    assert second[0]["rules"]
    assert "changed" not in second[0]["metadata"]["labels"]
