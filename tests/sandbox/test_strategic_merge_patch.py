"""Strategic merge patch against the real Kubernetes 1.37 schemas, directives included."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.errors import BadRequest
from sandbox.patches import apply_merge_patch, apply_strategic_merge_patch
from sandbox.schemas import SchemaNode, for_kind


def schema(group: str, kind: str) -> SchemaNode:
    found = for_kind(group, "v1", kind)
    assert found is not None
    return found


DEPLOYMENT = schema("apps", "Deployment")
POD = schema("", "Pod")
SERVICE = schema("", "Service")
CONFIGMAP = schema("", "ConfigMap")


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1",
                            "args": ["-a", "-b"],
                            "ports": [{"containerPort": 80}, {"containerPort": 443}],
                        },
                        {"name": "log", "image": "busybox"},
                    ],
                    "tolerations": [{"key": "a", "operator": "Exists"}],
                },
            },
        },
    }


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "finalizers": ["a.io/one", "b.io/two"]},
        "spec": {
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "secret": {"x": 1}}],
            "containers": [{"name": "c", "image": "i"}],
        },
    }


def template_spec(patch: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": patch}}}


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


# --- merging lists by key ------------------------------------------------------------------


def test_container_merges_by_name_and_keeps_its_other_fields() -> None:
    result = apply_strategic_merge_patch(
        deployment(),
        template_spec({"containers": [{"name": "web", "image": "nginx:2"}]}),
        DEPLOYMENT,
    )
    web, log = containers_of(result)
    assert web == {**containers_of(deployment())[0], "image": "nginx:2"}
    assert log == {"name": "log", "image": "busybox"}


@pytest.mark.parametrize(
    ("patch_names", "expected"),
    [
        # kube-apiserver puts items named by the patch before live items they are compared with.
        pytest.param(["side"], ["side", "web", "log"], id="new-item-goes-first"),
        pytest.param(["log", "web"], ["log", "web"], id="patch-order-wins-for-named-items"),
        pytest.param(["log"], ["web", "log"], id="named-live-item-stays-in-place"),
        pytest.param(["log", "side"], ["web", "log", "side"], id="new-item-after-named-item"),
    ],
)
def test_merged_list_order_follows_kubernetes(patch_names: list[str], expected: list[str]) -> None:
    patch = template_spec({"containers": [{"name": name} for name in patch_names]})
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert names(containers_of(result)) == expected


def test_set_element_order_places_items_exactly() -> None:
    patch = template_spec(
        {
            "$setElementOrder/containers": [{"name": "log"}, {"name": "side"}, {"name": "web"}],
            "containers": [{"name": "side", "image": "s"}],
        }
    )
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert names(containers_of(result)) == ["log", "side", "web"]
    assert "$setElementOrder/containers" not in result["spec"]["template"]["spec"]


def test_kubectl_set_image_patch_changes_only_the_image() -> None:
    # The shape kubectl 1.37 sends for `kubectl set image deploy/web web=nginx:3`.
    patch = template_spec(
        {
            "$setElementOrder/containers": [{"name": "web"}, {"name": "log"}],
            "containers": [{"image": "nginx:3", "name": "web"}],
        }
    )
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    expected = deployment()
    containers_of(expected)[0]["image"] = "nginx:3"
    assert result == expected


def test_container_ports_merge_by_container_port() -> None:
    patch = template_spec(
        {"containers": [{"name": "web", "ports": [{"containerPort": 443, "name": "https"}]}]}
    )
    ports = containers_of(apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT))[0]["ports"]
    assert ports == [{"containerPort": 80}, {"containerPort": 443, "name": "https"}]


def test_service_ports_merge_by_port() -> None:
    service = {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}
    patch = {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}
    result = apply_strategic_merge_patch(service, patch, SERVICE)
    assert result["spec"]["ports"] == [{"port": 80, "targetPort": 9090}, {"port": 443}]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("tolerations", [{"key": "b", "operator": "Exists"}], id="tolerations"),
        pytest.param("imagePullSecrets", [], id="empty-list"),
    ],
)
def test_lists_without_merge_strategy_are_replaced(field: str, value: list[Any]) -> None:
    result = apply_strategic_merge_patch(deployment(), template_spec({field: value}), DEPLOYMENT)
    assert result["spec"]["template"]["spec"][field] == value


def test_primitive_list_without_merge_strategy_is_replaced() -> None:
    patch = template_spec({"containers": [{"name": "web", "args": ["-c"]}]})
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert containers_of(result)[0]["args"] == ["-c"]


# --- directives ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "expected_names"),
    [
        pytest.param(
            {"containers": [{"name": "log", "$patch": "delete"}]}, ["web"], id="delete-item"
        ),
        pytest.param(
            {"containers": [{"name": "nope", "$patch": "delete"}]},
            ["web", "log"],
            id="delete-absent-item",
        ),
        pytest.param(
            {"containers": [{"name": "solo", "image": "s"}, {"$patch": "replace"}]},
            ["solo"],
            id="replace-list",
        ),
        pytest.param({"containers": [{"$patch": "replace"}]}, [], id="replace-with-nothing"),
    ],
)
def test_patch_directive_in_list_items(patch: dict[str, Any], expected_names: list[str]) -> None:
    result = apply_strategic_merge_patch(deployment(), template_spec(patch), DEPLOYMENT)
    assert names(containers_of(result)) == expected_names
    assert all("$patch" not in item for item in containers_of(result))


@pytest.mark.parametrize(
    ("strategy_patch", "expected"),
    [
        pytest.param(
            {"$patch": "replace", "type": "Recreate"}, {"type": "Recreate"}, id="replace-map"
        ),
        pytest.param({"$patch": "delete"}, {}, id="delete-map"),
        pytest.param(
            {"rollingUpdate": None},
            {"type": "RollingUpdate"},
            id="null-deletes-key",
        ),
        pytest.param(
            {"$retainKeys": ["type"], "type": "Recreate"}, {"type": "Recreate"}, id="retain-keys"
        ),
        pytest.param(
            {"rollingUpdate": {"maxUnavailable": 0}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            id="plain-merge",
        ),
    ],
)
def test_map_directives(strategy_patch: dict[str, Any], expected: dict[str, Any]) -> None:
    result = apply_strategic_merge_patch(
        deployment(), {"spec": {"strategy": strategy_patch}}, DEPLOYMENT
    )
    assert result["spec"]["strategy"] == expected


def test_retain_keys_switches_a_volume_source() -> None:
    # kubectl sends this for `volumes` (strategy merge,retainKeys) when a source changes kind.
    patch = {
        "spec": {
            "volumes": [
                {"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "c"}}
            ]
        }
    }
    volumes = apply_strategic_merge_patch(pod(), patch, POD)["spec"]["volumes"]
    assert volumes == [{"name": "data", "configMap": {"name": "c"}}, pod()["spec"]["volumes"][1]]


@pytest.mark.parametrize(
    ("metadata_patch", "expected"),
    [
        pytest.param(
            {"finalizers": ["c.io/three"]},
            ["c.io/three", "a.io/one", "b.io/two"],
            id="union-adds",
        ),
        pytest.param(
            {"finalizers": ["b.io/two", "a.io/one"]},
            ["b.io/two", "a.io/one"],
            id="union-never-duplicates",
        ),
        pytest.param(
            {"$deleteFromPrimitiveList/finalizers": ["a.io/one"]},
            ["b.io/two"],
            id="delete-from-primitive-list",
        ),
        pytest.param(
            {
                "$setElementOrder/finalizers": ["c.io/three", "a.io/one"],
                "$deleteFromPrimitiveList/finalizers": ["b.io/two"],
                "finalizers": ["c.io/three"],
            },
            ["c.io/three", "a.io/one"],
            id="kubectl-apply-style-replacement",
        ),
        pytest.param(
            {"$setElementOrder/finalizers": ["b.io/two", "a.io/one"]},
            ["b.io/two", "a.io/one"],
            id="reorder-only",
        ),
    ],
)
def test_primitive_merge_list_behaves_as_a_set(
    metadata_patch: dict[str, Any], expected: list[str]
) -> None:
    result = apply_strategic_merge_patch(pod(), {"metadata": metadata_patch}, POD)
    assert result["metadata"]["finalizers"] == expected
    assert not any(key.startswith("$") for key in result["metadata"])


def test_configmap_data_keys_merge_and_null_deletes() -> None:
    configmap = {"data": {"a": "1", "b": "2"}, "binaryData": {"z": "AA=="}}
    patch = {"data": {"b": None, "c": "3"}}
    result = apply_strategic_merge_patch(configmap, patch, CONFIGMAP)
    assert result == {"data": {"a": "1", "c": "3"}, "binaryData": {"z": "AA=="}}


def test_directives_and_nulls_inside_new_values_are_processed_not_stored() -> None:
    side = {"name": "side", "resources": {"limits": {"cpu": "1", "memory": None}}}
    patch = {
        "spec": {
            "selector": {"matchLabels": {"$patch": "replace", "app": "web"}},
            "template": {"spec": {"containers": [side]}},
        }
    }
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert result["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert containers_of(result)[0] == {"name": "side", "resources": {"limits": {"cpu": "1"}}}


def test_without_a_schema_it_is_a_json_merge_patch() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web"}]}}}}
    assert apply_strategic_merge_patch(deployment(), patch, None) == apply_merge_patch(
        deployment(), patch
    )


def test_unknown_fields_merge_like_a_merge_patch() -> None:
    patch = {"spec": {"custom": {"list": [3]}, "template": {"spec": {"extra": {"a": 1}}}}}
    result = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert result["spec"]["custom"] == {"list": [3]}
    assert result["spec"]["template"]["spec"]["extra"] == {"a": 1}


def test_inputs_are_never_modified_and_result_shares_nothing() -> None:
    target = deployment()
    patch = template_spec(
        {
            "$setElementOrder/containers": [{"name": "web"}, {"name": "log"}],
            "containers": [{"name": "web", "ports": [{"containerPort": 8080}]}],
        }
    )
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(target, patch, DEPLOYMENT)
    containers_of(result)[0]["ports"].append({"containerPort": 1})
    result["metadata"]["labels"]["app"] = "changed"
    assert target == target_before
    assert patch == patch_before


# --- invalid patches -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        pytest.param(["op"], "must be a JSON object", id="not-an-object"),
        pytest.param({"spec": {"$patch": "merge"}}, "unknown patch type: 'merge'", id="merge-map"),
        pytest.param({"spec": {"$patch": "bogus"}}, "unknown patch type: 'bogus'", id="bogus-map"),
        pytest.param(
            template_spec({"containers": [{"name": "x", "$patch": "merge"}]}),
            "merging lists cannot yet be specified",
            id="merge-in-list",
        ),
        pytest.param(
            template_spec({"containers": [{"name": "x", "$patch": "oops"}]}),
            "unknown patch type: 'oops'",
            id="bogus-in-list",
        ),
        pytest.param(
            template_spec({"containers": [{"$patch": "delete", "image": "x"}]}),
            "does not contain declared merge key: name",
            id="delete-without-key",
        ),
        pytest.param(
            template_spec({"containers": [{"image": "x"}]}),
            "does not contain declared merge key: name",
            id="item-without-key",
        ),
        pytest.param(
            template_spec({"$setElementOrder/containers": {"name": "web"}}),
            "invalid patch format of setElementOrder list",
            id="set-order-not-a-list",
        ),
        pytest.param(
            template_spec(
                {
                    "$setElementOrder/containers": [{"name": "web"}, {"name": "log"}],
                    "containers": [{"name": "log"}, {"name": "web"}],
                }
            ),
            "doesn't match \\$setElementOrder list",
            id="set-order-contradicts-patch",
        ),
        pytest.param(
            {"spec": {"strategy": {"$retainKeys": "type"}}},
            "invalid patch format of retainKeys",
            id="retain-keys-not-a-list",
        ),
        pytest.param(
            {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
            '"rollingUpdate" is set by the patch but missing from \\$retainKeys',
            id="retain-keys-missing-a-patched-key",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
            "invalid patch format of primitive list",
            id="delete-list-not-a-list",
        ),
        pytest.param(
            {"metadata": {"finalizers": [{"name": "a"}]}},
            "list element types are not identical",
            id="mixed-element-types",
        ),
    ],
)
def test_invalid_patches_are_bad_requests(patch: Any, message: str) -> None:
    target = deployment() | {"metadata": {"name": "web", "finalizers": ["a"]}}
    with pytest.raises(BadRequest, match=message):
        apply_strategic_merge_patch(target, patch, DEPLOYMENT)


# --- properties ----------------------------------------------------------------------------

container_names = st.sampled_from(["a", "b", "c", "d", "e"])
images = st.sampled_from(["nginx:1", "nginx:2", "redis", None])


@st.composite
def containers(draw: st.DrawFn) -> list[dict[str, Any]]:
    chosen = draw(st.lists(container_names, unique=True, max_size=5))
    result = []
    for name in chosen:
        item: dict[str, Any] = {"name": name}
        image = draw(images)
        if image is not None:
            item["image"] = image
        result.append(item)
    return result


@st.composite
def deployments(draw: st.DrawFn) -> dict[str, Any]:
    labels = draw(
        st.dictionaries(st.sampled_from(["app", "tier", "env"]), st.text("xy", max_size=2))
    )
    return {
        "metadata": {"name": "d", "labels": labels},
        "spec": {
            "replicas": draw(st.integers(0, 5)),
            "template": {"spec": {"containers": draw(containers())}},
        },
    }


@settings(max_examples=150, deadline=None)
@given(target=deployments())
def test_empty_patch_is_identity(target: dict[str, Any]) -> None:
    assert apply_strategic_merge_patch(target, {}, DEPLOYMENT) == target


@settings(max_examples=150, deadline=None)
@given(target=deployments(), patch_containers=containers())
def test_merging_by_key_never_duplicates_a_merge_key(
    target: dict[str, Any], patch_containers: list[dict[str, Any]]
) -> None:
    result = apply_strategic_merge_patch(
        target, template_spec({"containers": patch_containers}), DEPLOYMENT
    )
    merged = names(containers_of(result))
    assert len(merged) == len(set(merged))
    assert set(merged) == set(names(containers_of(target))) | set(names(patch_containers))


@settings(max_examples=150, deadline=None)
@given(target=deployments(), patch_containers=containers(), data=st.data())
def test_set_element_order_yields_exactly_that_order(
    target: dict[str, Any], patch_containers: list[dict[str, Any]], data: st.DataObject
) -> None:
    live = names(containers_of(target))
    listed = data.draw(st.permutations(sorted(set(live) | set(names(patch_containers)))))
    # kubectl lists every item it names in the patch, in the same relative order.
    patch_list = sorted(patch_containers, key=lambda c: listed.index(c["name"]))
    patch = template_spec(
        {
            "$setElementOrder/containers": [{"name": name} for name in listed],
            "containers": patch_list,
        }
    )
    result = names(containers_of(apply_strategic_merge_patch(target, patch, DEPLOYMENT)))
    assert [name for name in result if name in listed] == [
        name for name in listed if name in result
    ]


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.sampled_from("abcd"), st.text("xy", max_size=2)),
    patch=st.dictionaries(st.sampled_from("abcdef"), st.none() | st.text("xy", max_size=2)),
)
def test_configmap_patch_equals_merge_patch(data: dict[str, str], patch: dict[str, Any]) -> None:
    target = {"kind": "ConfigMap", "data": data}
    assert apply_strategic_merge_patch(target, {"data": patch}, CONFIGMAP) == apply_merge_patch(
        target, {"data": patch}
    )


@settings(max_examples=150, deadline=None)
@given(
    live=st.lists(st.sampled_from("abcdef"), unique=True),
    added=st.lists(st.sampled_from("abcdefgh")),
)
def test_finalizers_merge_as_a_set_union(live: list[str], added: list[str]) -> None:
    target = {"metadata": {"finalizers": live}}
    result = apply_strategic_merge_patch(target, {"metadata": {"finalizers": added}}, POD)
    merged = result["metadata"]["finalizers"]
    assert sorted(merged) == sorted(set(live) | set(added))
    assert [item for item in merged if item not in added] == [
        item for item in live if item not in added
    ]
