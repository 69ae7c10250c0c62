"""Unknown-field detection and the fieldValidation modes, against built-in and CRD schemas."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sandbox.errors import BadRequest
from sandbox.fieldcheck import decode, enforce, unknown_fields
from sandbox.registry import Registry, ResourceType


def builtin(api_version: str, kind: str) -> ResourceType:
    rt = Registry().by_kind(api_version, kind)
    assert rt is not None
    return rt


DEPLOYMENT = builtin("apps/v1", "Deployment")
POD = builtin("v1", "Pod")
CONFIGMAP = builtin("v1", "ConfigMap")
CRD = builtin("apiextensions.k8s.io/v1", "CustomResourceDefinition")
POD_METRICS = builtin("metrics.k8s.io/v1beta1", "PodMetrics")

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "port": {"x-kubernetes-int-or-string": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "parts": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "properties": {"x": {"type": "string"}}}
                    },
                },
                "opaque": {"type": "object"},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def widget_type(schema: dict[str, Any] | None = WIDGET_SCHEMA) -> ResourceType:
    return ResourceType(
        group="example.com",
        version="v1",
        plural="widgets",
        kind="Widget",
        namespaced=True,
        schema=schema,
        custom=True,
    )


WIDGET = widget_type()


def deployment(**spec_extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a/b": "c"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1},
            },
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.25",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "500m", "memory": 128974848}},
                            "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
                        }
                    ]
                },
            },
            **spec_extra,
        },
        "status": {},
    }


def with_container_field(key: str, value: Any) -> dict[str, Any]:
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"][0][key] = value
    return obj


def pod(**spec_extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [
                {
                    "manager": "kubectl",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}}}}},
                },
            ],
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox", "securityContext": {"runAsUser": 1000}}
            ],
            "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
            **spec_extra,
        },
    }


def widget(spec: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
        **top,
    }


CASES = [
    pytest.param(DEPLOYMENT, deployment(), [], id="deployment-good"),
    pytest.param(DEPLOYMENT, deployment(replicass=3), ["spec.replicass"], id="deployment-typo"),
    pytest.param(
        DEPLOYMENT,
        with_container_field("imagee", "x"),
        ["spec.template.spec.containers[0].imagee"],
        id="deployment-container-typo",
    ),
    pytest.param(
        DEPLOYMENT,
        {**deployment(), "extra": 1, "metadata": {"name": "w", "labelz": {}}},
        ["metadata.labelz", "extra"],
        id="deployment-top-level-and-metadata",
    ),
    pytest.param(
        DEPLOYMENT,
        with_container_field("ports", [{"containerPort": 1}, {"prt": 2}]),
        ["spec.template.spec.containers[0].ports[1].prt"],
        id="deployment-second-port",
    ),
    pytest.param(POD, pod(), [], id="pod-good-with-free-form-fieldsV1"),
    pytest.param(
        POD,
        pod(volumes=[{"name": "v", "configMap": {"nmae": "cm"}}]),
        ["spec.volumes[0].configMap.nmae"],
        id="pod-volume-typo",
    ),
    pytest.param(
        POD,
        pod(restartPolicy="Never", overhead={"cpu": "1"}, nodeSelectr={}),
        ["spec.nodeSelectr"],
        id="pod-quantity-map-and-typo",
    ),
    pytest.param(
        CONFIGMAP,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c"},
            "data": {"any.key": "v", "other": "w"},
        },
        [],
        id="configmap-map-keys",
    ),
    pytest.param(
        CONFIGMAP,
        {"kind": "ConfigMap", "metadata": {"name": "c"}, "datas": {"k": "v"}},
        ["datas"],
        id="configmap-typo",
    ),
    pytest.param(
        CRD,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
                    }
                ],
            },
        },
        [],
        id="crd-manifest-with-recursive-schema",
    ),
    pytest.param(
        WIDGET,
        widget(
            {
                "size": 1,
                "port": "http",
                "labels": {"x": "y"},
                "parts": [{"name": "a"}],
                "extra": {"any": {"thing": 1}},
                "template": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "t"},
                    "spec": {"x": "y"},
                },
            },
            status={"whatever": [1]},
        ),
        [],
        id="widget-good",
    ),
    pytest.param(
        WIDGET,
        widget({"sise": 1, "parts": [{"name": "a"}, {"nam": "b"}]}),
        ["spec.sise", "spec.parts[1].nam"],
        id="widget-typos",
    ),
    pytest.param(
        WIDGET,
        widget({"template": {"metadata": {"nme": "t"}, "spec": {"y": 1}}}),
        ["spec.template.metadata.nme", "spec.template.spec.y"],
        id="widget-embedded-resource",
    ),
    pytest.param(
        WIDGET,
        widget({"opaque": {"dropped": True}}),
        ["spec.opaque.dropped"],
        id="widget-object-without-properties-prunes-everything",
    ),
    pytest.param(
        WIDGET,
        {**widget({}), "metadata": {"name": "w", "labls": {}}, "top": 1},
        ["metadata.labls", "top"],
        id="widget-metadata-is-object-meta",
    ),
    pytest.param(POD_METRICS, {"kind": "PodMetrics", "anything": 1}, [], id="no-schema-kind"),
    pytest.param(widget_type(None), widget({"anything": 1}), [], id="crd-without-schema"),
]


@pytest.mark.parametrize(("rt", "obj", "expected"), CASES)
def test_unknown_fields_are_reported_in_kubernetes_spelling(
    rt: ResourceType, obj: dict[str, Any], expected: list[str]
) -> None:
    assert unknown_fields(rt, obj) == expected


def test_unknown_fields_leaves_the_object_untouched() -> None:
    obj = with_container_field("imagee", "x")
    before = copy.deepcopy(obj)
    unknown_fields(DEPLOYMENT, obj)
    assert obj == before


def test_changed_crd_schema_is_not_served_from_a_stale_cache() -> None:
    unknown_fields(WIDGET, widget({"colour": "red"}))
    schema = copy.deepcopy(WIDGET_SCHEMA)
    schema["properties"]["spec"]["properties"]["colour"] = {"type": "string"}
    assert unknown_fields(widget_type(schema), widget({"colour": "red"})) == []
    assert unknown_fields(WIDGET, widget({"colour": "red"})) == ["spec.colour"]


def test_strict_rejects_with_the_api_server_message() -> None:
    with pytest.raises(BadRequest) as caught:
        enforce(DEPLOYMENT, with_container_field("imagee", "x") | {"extra": 1}, "Strict")
    assert caught.value.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].imagee", unknown field "extra"'
    )
    assert caught.value.status()["code"] == 400


def test_strict_names_a_custom_kind_and_its_version() -> None:
    with pytest.raises(
        BadRequest,
        match=r'^Widget in version "v1" cannot be handled as a Widget: '
        r'strict decoding error: unknown field "spec.sise"$',
    ):
        enforce(WIDGET, widget({"sise": 1}), "Strict")


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param("Warn", ['unknown field "spec.replicass"'], id="warn"),
        pytest.param("Ignore", [], id="ignore"),
        pytest.param("", [], id="absent"),
    ],
)
def test_non_strict_modes_return_warnings_or_nothing(mode: str, expected: list[str]) -> None:
    assert enforce(DEPLOYMENT, deployment(replicass=1), mode) == expected


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore", ""], ids=str)
def test_clean_objects_pass_every_mode(mode: str) -> None:
    assert enforce(DEPLOYMENT, deployment(), mode) == []


@pytest.mark.parametrize("mode", ["strict", "Error", "true"], ids=str)
def test_unsupported_mode_is_a_bad_request(mode: str) -> None:
    with pytest.raises(BadRequest, match="fieldValidation must be one of Ignore, Warn or Strict"):
        enforce(DEPLOYMENT, deployment(), mode)


@pytest.mark.parametrize(
    ("mode", "warnings"),
    [("Warn", ['unknown field "spec.replicass"']), ("Ignore", []), ("", [])],
    ids=["warn", "ignore", "absent"],
)
def test_decode_drops_unknown_fields_and_reports_per_mode(mode: str, warnings: list[str]) -> None:
    sent = deployment(replicass=1)
    kept, reported = decode(DEPLOYMENT, sent, mode)
    assert "replicass" not in kept["spec"] and "replicass" in sent["spec"]
    assert kept["spec"]["replicas"] == sent["spec"]["replicas"]
    assert reported == warnings


def test_decode_hands_back_a_clean_object_itself() -> None:
    clean = deployment()
    assert decode(DEPLOYMENT, clean, "Warn") == (clean, [])
    assert decode(DEPLOYMENT, clean, "Warn")[0] is clean
