"""Server-side apply and managedFields bookkeeping, checked against Kubernetes' behaviour."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.errors import BadRequest, Conflict
from sandbox.patches import record_update, server_side_apply
from sandbox.patches.managed import (
    applied_fields,
    from_fields_v1,
    path_string,
    read_managers,
    to_fields_v1,
)
from sandbox.schemas import SchemaNode, for_kind


def schema(group: str, kind: str) -> SchemaNode:
    found = for_kind(group, "v1", kind)
    assert found is not None
    return found


DEPLOYMENT = schema("apps", "Deployment")
SERVICE = schema("", "Service")
CONFIGMAP = schema("", "ConfigMap")
T0, T1, T2, T3 = (f"2026-12-0{day}T10:00:00Z" for day in range(1, 5))


def deployment(
    *,
    replicas: int | None = 2,
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": containers or [{"name": "web", "image": "nginx:1"}]},
        },
    }
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": labels or {"app": "web"}},
        "spec": spec,
    }


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    *,
    manager: str = "kubectl",
    force: bool = False,
    now: str = T1,
    schema: SchemaNode | None = DEPLOYMENT,
) -> dict[str, Any]:
    return server_side_apply(live, config, manager=manager, force=force, schema=schema, now=now)


def update(
    old: dict[str, Any] | None, new: dict[str, Any], *, manager: str, now: str = T2
) -> dict[str, Any]:
    return record_update(old, new, manager=manager, operation="Update", now=now, schema=DEPLOYMENT)


def scaled(obj: dict[str, Any], replicas: int) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    result["spec"]["replicas"] = replicas
    return result


def owners(obj: dict[str, Any]) -> dict[str, set[str]]:
    """manager -> owned fields as Kubernetes prints them."""
    return {
        entry.manager: {path_string(path) for path in entry.fields} for entry in read_managers(obj)
    }


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    result["metadata"].pop("managedFields", None)
    return result


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


# --- creating and re-applying --------------------------------------------------------------


def test_apply_creates_the_object_with_kubernetes_shaped_managed_fields() -> None:
    config = deployment(
        containers=[{"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}]}]
    )
    created = apply(None, config)
    assert without_managed_fields(created) == config
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"web"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                        }
                                    },
                                }
                            }
                        },
                    },
                },
            },
        }
    ]


def test_applying_the_same_configuration_again_changes_nothing() -> None:
    created = apply(None, deployment())
    assert apply(created, deployment(), now=T3) == created


@pytest.mark.parametrize(
    ("second", "expect_labels", "expect_containers"),
    [
        pytest.param(
            deployment(labels={"app": "web"}, containers=[{"name": "web"}, {"name": "log"}]),
            {"app": "web"},
            ["web", "log"],
            id="label-dropped",
        ),
        pytest.param(
            deployment(labels={"app": "web", "tier": "front"}, containers=[{"name": "web"}]),
            {"app": "web", "tier": "front"},
            ["web"],
            id="container-dropped",
        ),
    ],
)
def test_fields_left_out_of_the_next_apply_are_removed(
    second: dict[str, Any], expect_labels: dict[str, str], expect_containers: list[str]
) -> None:
    first = deployment(
        labels={"app": "web", "tier": "front"},
        containers=[{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "busybox"}],
    )
    result = apply(apply(None, first), second, now=T2)
    assert result["metadata"]["labels"] == expect_labels
    assert [c["name"] for c in containers_of(result)] == expect_containers


def test_dropping_a_field_unsets_it_even_inside_a_kept_item() -> None:
    first = deployment(containers=[{"name": "web", "image": "nginx:1", "args": ["-v"]}])
    result = apply(apply(None, first), deployment(containers=[{"name": "web"}]), now=T2)
    assert containers_of(result) == [{"name": "web"}]


@pytest.mark.parametrize(
    "other_write",
    [
        pytest.param("apply", id="other-applier"),
        pytest.param("update", id="other-updater"),
    ],
)
def test_dropped_field_survives_when_another_manager_owns_it(other_write: str) -> None:
    mine = apply(None, deployment(labels={"app": "web", "tier": "front"}))
    if other_write == "apply":
        shared = apply(
            mine,
            {**deployment(), "metadata": {"name": "web", "labels": {"tier": "front"}}},
            manager="other",
        )
    else:
        edited = copy.deepcopy(mine)
        edited["metadata"]["labels"]["tier"] = "back"
        shared = update(mine, edited, manager="other")
    result = apply(shared, deployment(labels={"app": "web"}), now=T3)
    assert "tier" in result["metadata"]["labels"]
    assert ".metadata.labels.tier" in owners(result)["other"]


def test_null_in_the_configuration_unsets_the_field() -> None:
    created = apply(None, deployment())
    config = deployment()
    config["spec"]["replicas"] = None
    result = apply(created, config, now=T2)
    assert "replicas" not in result["spec"]


# --- conflicts -----------------------------------------------------------------------------


def test_apply_after_an_update_conflicts_on_the_changed_field() -> None:
    created = update(None, deployment(replicas=2), manager="kubectl-client-side-apply", now=T0)
    with pytest.raises(Conflict) as caught:
        apply(created, deployment(replicas=3))
    status = caught.value.status()
    assert status["code"] == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: '
        ".spec.replicas"
    )
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
                "field": ".spec.replicas",
            }
        ]
    }


def test_kubectl_scale_then_apply_conflicts_on_replicas() -> None:
    created = apply(None, deployment(replicas=2))
    after_scale = update(created, scaled(created, 5), manager="kubectl-scale")
    assert ".spec.replicas" in owners(after_scale)["kubectl-scale"]
    assert ".spec.replicas" not in owners(after_scale)["kubectl"]
    with pytest.raises(
        Conflict, match=r'conflict with "kubectl-scale" using apps/v1: \.spec\.replicas'
    ):
        apply(after_scale, deployment(replicas=2), now=T3)


def test_conflict_names_the_subresource_a_manager_wrote_through() -> None:
    created = apply(None, deployment(replicas=2))
    after_scale = record_update(
        created,
        scaled(created, 5),
        manager="kubectl",
        operation="Update",
        now=T2,
        schema=DEPLOYMENT,
        subresource="scale",
    )
    assert after_scale["metadata"]["managedFields"][1]["subresource"] == "scale"
    with pytest.raises(Conflict) as caught:
        apply(after_scale, deployment(replicas=2), now=T3)
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" '
        "using apps/v1: .spec.replicas"
    )


def test_applying_the_live_value_shares_ownership_without_conflict() -> None:
    created = update(None, deployment(replicas=2), manager="kubectl-create", now=T0)
    result = apply(created, deployment(replicas=2))
    assert ".spec.replicas" in owners(result)["kubectl"]
    assert ".spec.replicas" in owners(result)["kubectl-create"]


def test_force_takes_the_field_from_the_other_manager() -> None:
    created = update(None, deployment(replicas=2), manager="other", now=T0)
    result = apply(created, deployment(replicas=3), force=True)
    assert result["spec"]["replicas"] == 3
    assert ".spec.replicas" in owners(result)["kubectl"]
    assert ".spec.replicas" not in owners(result)["other"]


def test_conflict_with_an_applier_names_it_without_api_version() -> None:
    created = apply(None, deployment(replicas=2), manager="other")
    with pytest.raises(Conflict) as caught:
        apply(created, deployment(replicas=4), manager="mine")
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "other": .spec.replicas'
    )


def test_several_conflicts_are_listed_per_manager() -> None:
    created = apply(None, deployment(replicas=2, labels={"app": "web", "tier": "a"}))
    edited = scaled(created, 7)
    containers_of(edited)[0]["image"] = "nginx:9"
    edited = update(created, edited, manager="kubectl-edit")
    relabelled = copy.deepcopy(edited)
    relabelled["metadata"]["labels"]["tier"] = "b"
    relabelled = update(edited, relabelled, manager="kubectl-label", now=T3)
    config = deployment(
        replicas=3,
        labels={"app": "web", "tier": "c"},
        containers=[{"name": "web", "image": "nginx:2"}],
    )
    with pytest.raises(Conflict) as caught:
        apply(relabelled, config, manager="ci", now=T3)
    error = caught.value
    assert error.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "kubectl-edit" using apps/v1:\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="web"].image\n'
        'conflicts with "kubectl-label" using apps/v1:\n'
        "- .metadata.labels.tier"
    )
    assert [cause.field for cause in error.causes] == [
        ".spec.replicas",
        '.spec.template.spec.containers[name="web"].image',
        ".metadata.labels.tier",
    ]


def test_object_without_managed_fields_is_owned_by_before_first_apply() -> None:
    live = deployment(labels={"app": "web", "keep": "me"})
    result = apply(live, deployment())
    assert result["metadata"]["labels"] == {"app": "web", "keep": "me"}
    assert set(owners(result)) == {"kubectl", "before-first-apply"}
    with pytest.raises(Conflict, match=r'"before-first-apply" using apps/v1: \.spec\.replicas'):
        apply(live, deployment(replicas=9))


# --- merge rules by list and map type ------------------------------------------------------


def test_keyed_list_keeps_live_items_and_appends_new_ones() -> None:
    live = apply(
        None, deployment(containers=[{"name": "a", "image": "1"}, {"name": "b", "image": "1"}])
    )
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "2"}, {"name": "a", "image": "3"}]}
            }
        },
    }
    result = apply(live, config, manager="other", force=True)
    assert containers_of(result) == [
        {"name": "c", "image": "2"},
        {"name": "a", "image": "3"},
        {"name": "b", "image": "1"},
    ]


def test_set_list_items_are_owned_separately() -> None:
    first = apply(None, {**deployment(), "metadata": {"name": "web", "finalizers": ["a.io/x"]}})
    second = apply(
        first,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "finalizers": ["b.io/y"]},
        },
        manager="other",
    )
    assert second["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert owners(second)["other"] == {'.metadata.finalizers[="b.io/y"]'}


@pytest.mark.parametrize(
    ("path", "live_value", "config_value"),
    [
        pytest.param(
            ("spec", "selector"),
            {"matchLabels": {"app": "web", "x": "y"}},
            {"matchLabels": {"app": "web"}},
            id="atomic-map",
        ),
        pytest.param(
            ("spec", "template", "spec", "containers", 0, "args"),
            ["-a", "-b"],
            ["-c"],
            id="atomic-list",
        ),
    ],
)
def test_atomic_values_are_replaced_whole(
    path: tuple[str | int, ...], live_value: Any, config_value: Any
) -> None:
    live, config = deployment(), deployment()
    for obj, value in ((live, live_value), (config, config_value)):
        node: Any = obj
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    result: Any = apply(update(None, live, manager="creator", now=T0), config, force=True)
    for step in path:
        result = result[step]
    assert result == config_value


def test_granular_maps_let_managers_own_separate_keys() -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    first = apply(None, {**configmap, "data": {"a": "1"}}, manager="one", schema=CONFIGMAP)
    both = apply(first, {**configmap, "data": {"b": "2"}}, manager="two", schema=CONFIGMAP)
    assert both["data"] == {"a": "1", "b": "2"}
    assert owners(both) == {"one": {".data.a"}, "two": {".data.b"}}


def test_service_ports_are_keyed_by_port_and_defaulted_protocol() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}]},
    }
    created = apply(None, service, schema=SERVICE)
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert list(fields["f:spec"]["f:ports"]) == ['k:{"port":80,"protocol":"TCP"}']
    dropped = apply(created, {**service, "spec": {"ports": []}}, schema=SERVICE, now=T2)
    assert dropped["spec"]["ports"] == []


# --- bad configurations and purity ---------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(["not", "an", "object"], "must be a JSON or YAML object", id="list"),
        pytest.param({"metadata": "web"}, "metadata must be an object", id="metadata-string"),
        pytest.param(
            {"metadata": {"name": "web", "managedFields": [{"manager": "x"}]}},
            "metadata.managedFields must be nil",
            id="managed-fields-sent",
        ),
    ],
)
def test_bad_configurations_are_bad_requests(config: Any, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        apply(None, config)


def test_apply_never_modifies_its_inputs() -> None:
    live = apply(None, deployment(labels={"app": "web", "tier": "x"}))
    config = deployment(containers=[{"name": "web", "image": "nginx:2"}])
    live_before, config_before = copy.deepcopy(live), copy.deepcopy(config)
    result = apply(live, config, now=T2)
    containers_of(result)[0]["image"] = "changed"
    result["metadata"]["labels"]["app"] = "changed"
    assert live == live_before
    assert config == config_before


# --- record_update -------------------------------------------------------------------------


def test_create_makes_the_writer_own_every_field() -> None:
    created = update(None, deployment(), manager="kubectl-create", now=T0)
    (entry,) = created["metadata"]["managedFields"]
    assert {key: entry[key] for key in ("manager", "operation", "apiVersion", "time")} == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": T0,
    }
    # As in Kubernetes, objects and list items that appear are owned as nodes too (".").
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        ".": {},
        'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}},
    }


def test_update_moves_changed_fields_and_drops_removed_ones() -> None:
    created = apply(None, deployment(labels={"app": "web", "tier": "x"}))
    edited = scaled(created, 4)
    del edited["metadata"]["labels"]["tier"]
    result = update(created, edited, manager="kubectl-edit")
    assert owners(result)["kubectl-edit"] == {".spec.replicas"}
    assert ".spec.replicas" not in owners(result)["kubectl"]
    assert ".metadata.labels.tier" not in owners(result)["kubectl"]


def test_update_that_changes_nothing_keeps_the_entry_time() -> None:
    created = update(None, deployment(), manager="kubectl-create", now=T0)
    again = update(created, copy.deepcopy(created), manager="kubectl-create", now=T3)
    assert again == created


def test_managed_fields_sent_by_the_writer_replace_the_live_ones() -> None:
    created = apply(None, deployment())
    reset = copy.deepcopy(created)
    reset["metadata"]["managedFields"] = [{}]
    result = update(created, reset, manager="kubectl-edit")
    assert "managedFields" not in result["metadata"]


def test_entries_are_sorted_apply_first_then_by_time() -> None:
    created = update(None, deployment(), manager="zeta", now=T0)
    applied = apply(
        created,
        {**deployment(), "metadata": {"name": "web", "labels": {"x": "1"}}},
        manager="alpha",
        now=T1,
    )
    scaled_obj = update(applied, scaled(applied, 9), manager="beta", now=T2)
    entries = scaled_obj["metadata"]["managedFields"]
    assert [(e["operation"], e["manager"]) for e in entries] == [
        ("Apply", "alpha"),
        ("Update", "zeta"),
        ("Update", "beta"),
    ]


# --- field paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "printed"),
    [
        pytest.param(("f:spec", "f:replicas"), ".spec.replicas", id="fields"),
        pytest.param(
            ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"),
            '.spec.ports[port=80,protocol="TCP"].name',
            id="keyed-item",
        ),
        pytest.param(
            ("f:metadata", "f:finalizers", 'v:"a.io/x"'),
            '.metadata.finalizers[="a.io/x"]',
            id="set-item",
        ),
        pytest.param(("f:items", "i:3"), ".items[3]", id="index"),
    ],
)
def test_paths_print_as_kubernetes_prints_them(path: tuple[str, ...], printed: str) -> None:
    assert path_string(path) == printed


elements = st.one_of(
    st.sampled_from(["f:spec", "f:a", "f:b", 'k:{"name":"x"}', 'v:"y"', "i:0", "i:10"]),
)
field_paths = st.lists(elements, min_size=1, max_size=4).map(tuple)


@settings(max_examples=200, deadline=None)
@given(paths=st.sets(field_paths, max_size=8))
def test_fields_v1_round_trips(paths: set[tuple[str, ...]]) -> None:
    assert from_fields_v1(to_fields_v1(paths)) == paths


# --- properties ----------------------------------------------------------------------------


@st.composite
def configurations(draw: st.DrawFn) -> dict[str, Any]:
    labels = draw(
        st.dictionaries(st.sampled_from(["app", "tier", "env"]), st.sampled_from("xyz"), min_size=1)
    )
    names = draw(st.lists(st.sampled_from("abcd"), unique=True, min_size=1))
    containers = []
    for name in names:
        container: dict[str, Any] = {"name": name}
        if draw(st.booleans()):
            container["image"] = draw(st.sampled_from(["nginx:1", "redis"]))
        if draw(st.booleans()):
            container["ports"] = [
                {"containerPort": port}
                for port in draw(st.lists(st.sampled_from([80, 443]), unique=True))
            ]
        containers.append(container)
    replicas = draw(st.none() | st.integers(0, 3))
    return deployment(replicas=replicas, labels=labels, containers=containers)


@st.composite
def subsets(draw: st.DrawFn, config: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(config)
    labels = result["metadata"]["labels"]
    for key in list(labels):
        if draw(st.booleans()):
            del labels[key]
    kept = []
    for container in containers_of(result):
        if draw(st.booleans()):
            continue
        for field in ("image", "ports"):
            if field in container and draw(st.booleans()):
                del container[field]
        kept.append(container)
    result["spec"]["template"]["spec"]["containers"] = kept
    if "replicas" in result["spec"] and draw(st.booleans()):
        del result["spec"]["replicas"]
    return result


@settings(max_examples=100, deadline=None)
@given(config=configurations())
def test_applying_twice_is_idempotent(config: dict[str, Any]) -> None:
    once = apply(None, config)
    assert apply(once, config, now=T3) == once


@settings(max_examples=100, deadline=None)
@given(data=st.data(), config=configurations())
def test_applying_a_subset_removes_exactly_the_dropped_fields(
    data: st.DataObject, config: dict[str, Any]
) -> None:
    subset = data.draw(subsets(config))
    result = apply(apply(None, config), subset, now=T2)
    assert without_managed_fields(result) == without_managed_fields(apply(None, subset))
    (entry,) = read_managers(result)
    assert entry.fields == applied_fields(subset, DEPLOYMENT)
