"""The /openapi/v3 root and per-group-version documents, in the shapes kubectl 1.37 reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sandbox.openapi import OpenAPI, crd_schema_name, group_version_path
from sandbox.registry import Registry, ResourceType
from sandbox.schemas import definition_name

COMPONENTS = "#/components/schemas/"
ALWAYS_PATCH_TYPES = {
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
}
SMP = "application/strategic-merge-patch+json"

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "description": "What the widget should be.",
            "properties": {"size": {"type": "integer", "description": "How big."}},
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def widget_type(schema: dict[str, Any] = WIDGET_SCHEMA, *, version: str = "v1") -> ResourceType:
    return ResourceType(
        group="stable.example.com",
        version=version,
        plural="widgets",
        kind="Widget",
        namespaced=True,
        subresources=("status", "scale"),
        schema=schema,
        custom=True,
    )


def registry_with_widgets() -> Registry:
    registry = Registry()
    registry.add(widget_type())
    return registry


SHARED = OpenAPI(registry_with_widgets())
GROUP_VERSIONS = sorted(SHARED.root()["paths"])
PATCHABLE = sorted(
    (rt for rt in registry_with_widgets() if "patch" in rt.verbs),
    key=lambda rt: (rt.api_version, rt.kind),
)


def patch_operations(document: dict[str, Any], rt: ResourceType) -> list[dict[str, Any]]:
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    found = []
    for path_item in document["paths"].values():
        patch = path_item.get("patch")
        if patch is not None and patch["x-kubernetes-group-version-kind"] == gvk:
            found.append(patch)
    return found


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def root_hashes(openapi: OpenAPI) -> dict[str, str]:
    paths = openapi.root()["paths"]
    return {gv: entry["serverRelativeURL"].split("?hash=")[1] for gv, entry in paths.items()}


def test_root_lists_every_group_version_with_a_hashed_url() -> None:
    registry = registry_with_widgets()
    expected = {
        group_version_path(group, version)
        for group, versions in registry.group_versions().items()
        for version in versions
    }
    paths = OpenAPI(registry).root()["paths"]
    assert set(paths) == expected
    assert "apis/stable.example.com/v1" in paths
    for gv, entry in paths.items():
        url = entry["serverRelativeURL"]
        assert url.startswith(f"/openapi/v3/{gv}?hash=")
        assert len(url.split("?hash=")[1]) >= 32


@pytest.mark.parametrize("rt", PATCHABLE, ids=lambda rt: f"{rt.api_version}/{rt.kind}")
def test_every_patch_of_a_kind_carries_its_gvk_and_field_validation(rt: ResourceType) -> None:
    document = SHARED.document(group_version_path(rt.group, rt.version))
    assert document is not None
    patches = patch_operations(document, rt)
    assert patches, f"no PATCH operation for {rt.kind}"
    # kubectl inspects whichever matching PATCH it meets first, so every one must qualify.
    for patch in patches:
        query = {p["name"] for p in patch["parameters"] if p["in"] == "query"}
        assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= query
        content = set(patch["requestBody"]["content"])
        assert content >= ALWAYS_PATCH_TYPES
        assert (SMP in content) is (not rt.custom)


@pytest.mark.parametrize("gv", GROUP_VERSIONS, ids=str)
def test_every_ref_resolves_inside_its_document(gv: str) -> None:
    document = SHARED.document(gv)
    assert document is not None
    schemas = document["components"]["schemas"]
    dangling = {ref for ref in refs(document) if ref.removeprefix(COMPONENTS) not in schemas}
    assert not dangling
    assert all(ref.startswith(COMPONENTS) for ref in refs(document))


@pytest.mark.parametrize("gv", GROUP_VERSIONS, ids=str)
def test_documents_are_openapi_3_without_json_schema_leftovers(gv: str) -> None:
    document = SHARED.document(gv)
    assert document is not None
    assert document["openapi"].startswith("3.0")

    def walk(node: Any) -> Iterator[tuple[str, Any]]:
        if isinstance(node, dict):
            for key, value in node.items():
                yield key, value
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    for key, value in walk(document["components"]):
        assert not (key == "type" and isinstance(value, list)), "nullable type list left over"
        assert not (key == "$ref" and isinstance(value, str) and "$defs" in value)


@pytest.mark.parametrize(
    "rt",
    [
        rt
        for rt in registry_with_widgets()
        if rt.custom or definition_name(rt.group, rt.version, rt.kind)
    ],
    ids=lambda rt: f"{rt.api_version}/{rt.kind}",
)
def test_kind_schema_is_found_by_its_gvk_list(rt: ResourceType) -> None:
    document = SHARED.document(group_version_path(rt.group, rt.version))
    assert document is not None
    gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    holders = [
        name
        for name, schema in document["components"]["schemas"].items()
        if gvk in schema.get("x-kubernetes-group-version-kind", [])
    ]
    assert holders
    kind_schema = document["components"]["schemas"][holders[0]]
    for field in ("apiVersion", "kind"):
        assert "enum" not in kind_schema["properties"][field]
        assert kind_schema["properties"][field]["type"] == "string"


def test_crd_kind_appears_under_its_reversed_group_name_with_its_schema() -> None:
    document = SHARED.document("apis/stable.example.com/v1")
    assert document is not None
    schemas = document["components"]["schemas"]
    widget = schemas["com.example.stable.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "Widget", "version": "v1"}
    ]
    assert widget["properties"]["spec"]["properties"]["size"]["description"] == "How big."
    assert widget["properties"]["metadata"]["allOf"] == [
        {"$ref": COMPONENTS + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    listing = schemas["com.example.stable.v1.WidgetList"]
    assert listing["properties"]["items"]["items"] == {
        "$ref": COMPONENTS + "com.example.stable.v1.Widget"
    }
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas  # the scale subresource's kind
    assert WIDGET_SCHEMA["properties"].keys() == {"spec", "status"}  # the input is untouched


def test_crd_schema_name_reverses_the_group() -> None:
    assert crd_schema_name("example.com", "v1", "Widget") == "com.example.v1.Widget"


def test_paths_follow_the_api_server_layout() -> None:
    document = SHARED.document("apis/apps/v1")
    assert document is not None
    paths = document["paths"]
    base = "/apis/apps/v1"
    item = f"{base}/namespaces/{{namespace}}/deployments/{{name}}"
    assert set(paths[item]) == {"get", "put", "patch", "delete", "parameters"}
    collection = f"{base}/namespaces/{{namespace}}/deployments"
    assert set(paths[collection]) == {"get", "post", "delete", "parameters"}
    assert set(paths[f"{base}/deployments"]) == {"get", "parameters"}
    scale = paths[f"{item}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling",
        "kind": "Scale",
        "version": "v1",
    }
    assert paths[item]["patch"]["operationId"] == "patchAppsV1NamespacedDeployment"
    path_params = {p["name"] for p in paths[item]["parameters"] if p["in"] == "path"}
    assert path_params == {"name", "namespace"}


def test_cluster_scoped_and_create_only_kinds_get_only_their_operations() -> None:
    core = SHARED.document("api/v1")
    reviews = SHARED.document("apis/authorization.k8s.io/v1")
    assert core is not None and reviews is not None
    assert "patch" in core["paths"]["/api/v1/nodes/{name}"]
    assert not any("namespaces/{namespace}/nodes" in path for path in core["paths"])
    review = reviews["paths"]["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]
    assert set(review) == {"post", "parameters"}


def test_kinds_without_definitions_are_served_without_schemas() -> None:
    metrics = SHARED.document("apis/metrics.k8s.io/v1beta1")
    assert metrics is not None
    listing = metrics["paths"]["/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"]
    assert set(listing) == {"get", "parameters"}
    assert not any(
        {"kind": "PodMetrics"}.items() <= gvk.items()
        for schema in metrics["components"]["schemas"].values()
        for gvk in schema.get("x-kubernetes-group-version-kind", [])
    )


@pytest.mark.parametrize("path", ["apis/nope.example.com/v1", "api/v2", "apis/apps", ""], ids=repr)
def test_unknown_group_version_has_no_document(path: str) -> None:
    assert SHARED.document(path) is None


def test_adding_a_crd_adds_its_group_version_and_leaves_other_hashes_alone() -> None:
    registry = Registry()
    openapi = OpenAPI(registry)
    before = root_hashes(openapi)
    registry.add(widget_type())
    after = root_hashes(openapi)
    assert set(after) - set(before) == {"apis/stable.example.com/v1"}
    assert {gv: after[gv] for gv in before} == before


def test_changing_a_crd_schema_changes_its_hash_and_rebuilds_the_document() -> None:
    registry = registry_with_widgets()
    openapi = OpenAPI(registry)
    gv = "apis/stable.example.com/v1"
    first_hash, first = root_hashes(openapi)[gv], openapi.document(gv)
    schema = {**WIDGET_SCHEMA, "properties": {**WIDGET_SCHEMA["properties"], "extra": {}}}
    registry.add(widget_type(schema))
    second = openapi.document(gv)
    assert root_hashes(openapi)[gv] != first_hash
    assert first is not None and second is not None
    assert (
        "extra" not in first["components"]["schemas"]["com.example.stable.v1.Widget"]["properties"]
    )
    assert "extra" in second["components"]["schemas"]["com.example.stable.v1.Widget"]["properties"]


def test_removing_a_crd_removes_its_group_version() -> None:
    registry = registry_with_widgets()
    openapi = OpenAPI(registry)
    assert openapi.document("apis/stable.example.com/v1") is not None
    registry.remove("stable.example.com", "widgets")
    assert "apis/stable.example.com/v1" not in openapi.root()["paths"]
    assert openapi.document("apis/stable.example.com/v1") is None


def test_core_document_is_built_once_and_cached() -> None:
    openapi = OpenAPI(Registry())
    first = openapi.document("api/v1")
    assert openapi.document("api/v1") is first
    assert first is not None
    assert "io.k8s.api.core.v1.Pod" in first["components"]["schemas"]
