"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as kube-apiserver applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.errors import BadRequest, Invalid
from sandbox.patches import apply_json_patch, apply_merge_patch
from sandbox.patches.merge import json_equal


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "paused": False,
            "template": {
                "spec": {"containers": [{"name": "web", "image": "nginx:1", "args": ["-v"]}]}
            },
        },
    }


# --- merge patch ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "expected_spec_or_labels"),
    [
        pytest.param({"spec": {"replicas": 5}}, ("spec", "replicas", 5), id="scalar-replaced"),
        pytest.param(
            {"metadata": {"labels": {"tier": None}}},
            ("metadata", "labels", {"app": "web"}),
            id="null-deletes-key",
        ),
        pytest.param(
            {"metadata": {"labels": {"env": "prod"}}},
            ("metadata", "labels", {"app": "web", "tier": "front", "env": "prod"}),
            id="objects-merge",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"name": "side"}]}}}},
            ("spec", "template", {"spec": {"containers": [{"name": "side"}]}}),
            id="lists-replaced-whole",
        ),
        pytest.param(
            {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}},
            ("spec", "strategy", {"type": "Recreate"}),
            id="nulls-dropped-from-new-object",
        ),
        pytest.param(
            {"spec": {"paused": {"really": True}}},
            ("spec", "paused", {"really": True}),
            id="object-replaces-scalar",
        ),
    ],
)
def test_merge_patch_follows_rfc_7386(
    patch: dict[str, Any], expected_spec_or_labels: tuple[str, str, Any]
) -> None:
    section, field, expected = expected_spec_or_labels
    assert apply_merge_patch(deployment(), patch)[section][field] == expected


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param([{"op": "add"}], id="array"),
        pytest.param("spec", id="string"),
        pytest.param(None, id="null"),
        pytest.param(3, id="number"),
    ],
)
def test_merge_patch_that_is_not_an_object_is_bad_request(patch: Any) -> None:
    with pytest.raises(BadRequest, match="must be a JSON object"):
        apply_merge_patch(deployment(), patch)


def test_merge_patch_leaves_its_inputs_untouched() -> None:
    target, patch = deployment(), {"metadata": {"labels": {"tier": None, "x": {"y": None}}}}
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    result = apply_merge_patch(target, patch)
    result["spec"]["template"]["spec"]["containers"][0]["image"] = "changed"
    assert target == target_before
    assert patch == patch_before


json_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=2)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("xyz", max_size=2), inner),
    max_leaves=6,
)
json_objects = st.dictionaries(st.text("abc", max_size=2), json_values, max_size=4)


def create_merge_patch(source: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The RFC 7386 patch that turns `source` into `wanted` (the test's own independent diff)."""
    patch: dict[str, Any] = {key: None for key in source if key not in wanted}
    for key, value in wanted.items():
        if key not in source:
            patch[key] = value
        elif isinstance(value, dict) and isinstance(source[key], dict):
            nested = create_merge_patch(source[key], value)
            if nested:
                patch[key] = nested
        elif not json_equal(source[key], value):
            patch[key] = value
    return patch


def without_nulls_in_objects(value: Any) -> Any:
    """A merge patch cannot store null in an object (null means delete); lists keep theirs."""
    if isinstance(value, dict):
        return {k: without_nulls_in_objects(v) for k, v in value.items() if v is not None}
    return value


@settings(max_examples=100, deadline=None)
@given(source=json_objects, wanted=json_objects)
def test_merge_patch_of_a_diff_turns_source_into_target(
    source: dict[str, Any], wanted: dict[str, Any]
) -> None:
    wanted = without_nulls_in_objects(wanted)
    assert apply_merge_patch(source, create_merge_patch(source, wanted)) == wanted


@settings(max_examples=100, deadline=None)
@given(source=json_objects, patch=json_objects)
def test_merge_patch_is_idempotent(source: dict[str, Any], patch: dict[str, Any]) -> None:
    once = apply_merge_patch(source, patch)
    assert apply_merge_patch(once, patch) == once


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        pytest.param(True, 1, False, id="true-is-not-1"),
        pytest.param(False, 0, False, id="false-is-not-0"),
        pytest.param(1, 1.0, True, id="numbers-by-value"),
        pytest.param({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True, id="nested"),
        pytest.param({"a": 1}, {"a": 1, "b": 2}, False, id="extra-key"),
        pytest.param([1, 2], [2, 1], False, id="list-order-matters"),
        pytest.param("1", 1, False, id="string-is-not-number"),
    ],
)
def test_json_equal_uses_json_rules(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


# --- JSON patch ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operations", "path", "expected"),
    [
        pytest.param(
            [{"op": "replace", "path": "/spec/replicas", "value": 4}],
            ("spec", "replicas"),
            4,
            id="replace",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/labels/env", "value": "prod"}],
            ("metadata", "labels"),
            {"app": "web", "tier": "front", "env": "prod"},
            id="add-map-key",
        ),
        pytest.param(
            [{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "-q"}],
            ("spec", "template"),
            {"spec": {"containers": [{"name": "web", "image": "nginx:1", "args": ["-v", "-q"]}]}},
            id="append-to-list",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/labels/tier"}],
            ("metadata", "labels"),
            {"app": "web"},
            id="remove",
        ),
        pytest.param(
            [
                {"op": "test", "path": "/spec/replicas", "value": 2},
                {"op": "copy", "from": "/spec/replicas", "path": "/spec/minReadySeconds"},
                {"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/labels/t"},
            ],
            ("metadata", "labels"),
            {"app": "web", "t": "front"},
            id="test-copy-move",
        ),
    ],
)
def test_json_patch_applies_operations_in_order(
    operations: list[dict[str, Any]], path: tuple[str, str], expected: Any
) -> None:
    result = apply_json_patch(deployment(), operations)
    assert result[path[0]][path[1]] == expected


@pytest.mark.parametrize(
    ("operations", "message"),
    [
        pytest.param({"op": "add"}, "must be a JSON array of operations", id="not-a-list"),
        pytest.param(["add"], "operation 0 is malformed: expected an object", id="string-op"),
        pytest.param([{"path": "/a"}], '"op" must be one of', id="missing-op"),
        pytest.param([{"op": "upsert", "path": "/a"}], "got 'upsert'", id="unknown-op"),
        pytest.param([{"op": "remove"}], '"path" is required', id="missing-path"),
        pytest.param(
            [{"op": "remove", "path": "spec"}], "must be a JSON pointer", id="path-without-slash"
        ),
        pytest.param([{"op": "add", "path": "/a"}], '"add" needs a "value"', id="add-no-value"),
        pytest.param(
            [{"op": "test", "path": "/spec/replicas", "value": 2}, {"op": "move", "path": "/b"}],
            'operation 1 is malformed: "from" is required',
            id="move-without-from",
        ),
    ],
)
def test_malformed_json_patch_is_bad_request(operations: Any, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        apply_json_patch(deployment(), operations)


@pytest.mark.parametrize(
    ("operations", "message", "field"),
    [
        pytest.param(
            [{"op": "test", "path": "/spec/replicas", "value": 3}],
            'test operation 0 does not apply: value at "/spec/replicas" is 2, not 3',
            "/spec/replicas",
            id="test-value-differs",
        ),
        pytest.param(
            [{"op": "test", "path": "/spec/paused", "value": 0}],
            'test operation 0 does not apply: value at "/spec/paused" is false, not 0',
            "/spec/paused",
            id="test-false-is-not-zero",
        ),
        pytest.param(
            [
                {"op": "test", "path": "/spec/replicas", "value": 2},
                {"op": "test", "path": "/spec/nope", "value": 1},
            ],
            'test operation 1 does not apply: doc is missing path "/spec/nope"',
            "/spec/nope",
            id="test-missing-path",
        ),
        pytest.param(
            [{"op": "replace", "path": "/spec/strategy", "value": {}}],
            'replace operation 0 does not apply: doc is missing path "/spec/strategy"',
            "/spec/strategy",
            id="replace-missing",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/annotations/a"}],
            'remove operation 0 does not apply: doc is missing path "/metadata/annotations/a"',
            "/metadata/annotations/a",
            id="remove-missing",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/annotations/a", "value": "x"}],
            'doc is missing path "/metadata/annotations", the parent of',
            "/metadata/annotations/a",
            id="add-under-missing-parent",
        ),
        pytest.param(
            [{"op": "add", "path": "/spec/template/spec/containers/5", "value": {}}],
            "is not a valid index into a list of 1 items",
            "/spec/template/spec/containers/5",
            id="add-index-out-of-range",
        ),
        pytest.param(
            [{"op": "move", "from": "/spec/gone", "path": "/spec/here"}],
            'move operation 0 does not apply: doc is missing "from" path "/spec/gone"',
            "/spec/here",
            id="move-from-missing",
        ),
        pytest.param(
            [{"op": "replace", "path": "", "value": [1]}],
            "turned the object into array",
            "",
            id="root-replaced-by-array",
        ),
    ],
)
def test_json_patch_that_cannot_apply_is_invalid_and_names_the_operation(
    operations: list[dict[str, Any]], message: str, field: str
) -> None:
    with pytest.raises(Invalid) as caught:
        apply_json_patch(deployment(), operations)
    status = caught.value.status()
    assert status["code"] == 422
    assert message in status["message"]
    assert "the server rejected our request" not in status["message"]
    assert status["details"]["causes"][0]["field"] == field


def test_failed_json_patch_leaves_the_target_untouched() -> None:
    target = deployment()
    before = copy.deepcopy(target)
    operations = [
        {"op": "replace", "path": "/spec/replicas", "value": 9},
        {"op": "test", "path": "/spec/replicas", "value": 2},
    ]
    with pytest.raises(Invalid):
        apply_json_patch(target, operations)
    assert target == before


def test_json_patch_result_shares_nothing_with_inputs() -> None:
    target, value = deployment(), {"deep": ["x"]}
    result = apply_json_patch(target, [{"op": "add", "path": "/spec/extra", "value": value}])
    result["spec"]["extra"]["deep"].append("y")
    result["metadata"]["labels"]["app"] = "changed"
    assert value == {"deep": ["x"]}
    assert target["metadata"]["labels"]["app"] == "web"
