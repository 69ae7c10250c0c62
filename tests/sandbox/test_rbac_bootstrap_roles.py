"""The default RBAC objects of a fresh cluster: what view, edit, admin and cluster-admin allow,
that they cover every served resource (with Kubernetes' deliberate exceptions), the default
bindings for every identity, and that the bootstrap objects are well formed and fresh per call.
"""

from __future__ import annotations

import pytest

from sandbox.auth import ANONYMOUS, UserInfo
from sandbox.rbac import RBAC_GROUP, Attributes, Authorizer, aggregated_rules, bootstrap_objects
from sandbox.registry import BUILTINS
from tests.sandbox.rbac_objects import (
    BOB,
    MASTER,
    MemoryReader,
    Obj,
    path,
    pods,
    res,
    role_binding,
    user,
)


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
# Kinds served as custom resources (Cluster API's) are not part of the default roles, as on a
# real management cluster.
NAMESPACED_LISTABLE = [
    (rt.group, rt.plural)
    for rt in BUILTINS
    if rt.namespaced and "list" in rt.verbs and not rt.custom
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
