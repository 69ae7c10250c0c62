"""Server-side apply of one configuration over time: the created object and its Kubernetes-shaped
managedFields, re-applying (idempotent, also as a property), fields left out or set to null being
removed unless another manager owns them, bad configurations, and inputs left untouched.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.errors import BadRequest
from sandbox.patches.managed import applied_fields, read_managers
from tests.sandbox.server_side_apply_objects import (
    DEPLOYMENT,
    T1,
    T2,
    T3,
    apply,
    containers_of,
    deployment,
    owners,
    update,
    without_managed_fields,
)


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
