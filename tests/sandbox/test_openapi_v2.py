"""/openapi/v2 as kubectl reads it: gnostic protobuf that kube-openapi parses, and `kind: List`.

The document is decoded here with the read-only wire reader of `sandbox.protobuf.wire` and a few
lines of field-number navigation, independent of the encoder under test. The structural rules
checked are the ones kube-openapi enforces before kubectl validates anything: one failure and
kubectl rejects every manifest that needs v2.
"""

from __future__ import annotations

import copy
import json
import ssl
import struct
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import yaml

from sandbox.errors import NotAcceptable
from sandbox.openapi import OpenAPI, crd_schema_name
from sandbox.openapi_v2 import JSON, PROTOBUF, PROTOBUF_ASKED, OpenAPIV2, negotiate, to_v2_schema
from sandbox.protobuf.encode import Writer, varint
from sandbox.protobuf.wire import FIXED64, VARINT, fields, read_varint, signed
from sandbox.registry import BUILTINS, Registry, ResourceType
from sandbox.schemas import definitions
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

Message = dict[int, list[Any]]
# The Cluster API kinds are served as a management cluster serves their CRDs: a kind and a list
# definition each, beside the built-in definitions.
CLUSTER_API = {
    name + suffix
    for rt in BUILTINS
    if rt.custom
    for name in [crd_schema_name(rt.group, rt.version, rt.kind)]
    for suffix in ("", "List")
}
WIDGET = "com.example.stable.v1.Widget"
WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 1},
                "note": {"type": "string", "nullable": True},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
        "status": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"phase": {"type": "string"}},
        },
    },
}


def widget_type() -> ResourceType:
    return ResourceType(
        group="stable.example.com",
        version="v1",
        plural="widgets",
        kind="Widget",
        namespaced=True,
        subresources=("status", "scale"),
        schema=WIDGET_SCHEMA,
        custom=True,
    )


# -- an independent reader for the gnostic messages ------------------------------------------


def decode(data: bytes) -> Message:
    found: Message = defaultdict(list)
    for number, _wire_type, value in fields(data):
        found[number].append(value)
    return found


def text(message: Message, number: int) -> str:
    return str(message[number][0].decode()) if message.get(number) else ""


def named(entries: list[bytes]) -> dict[str, bytes]:
    """NamedSchema / NamedPathItem / NamedAny entries: name (1) -> encoded value (2)."""
    return {text(decode(e), 1): decode(e)[2][0] for e in entries}


def extensions(message: Message, number: int) -> dict[str, Any]:
    """Vendor extensions, with each Any's YAML (field 2) parsed as kube-openapi parses it."""
    return {n: yaml.safe_load(text(decode(a), 2)) for n, a in named(message[number]).items()}


def definitions_of(body: bytes) -> dict[str, bytes]:
    return named(decode(decode(body)[9][0])[1])


def paths_of(body: bytes) -> dict[str, bytes]:
    return named(decode(decode(body)[8][0])[2])


def subschemas(schema: bytes, where: str) -> Iterator[tuple[str, Message]]:
    """A schema and every schema nested in it (properties, items, additionalProperties)."""
    message = decode(schema)
    yield where, message
    for props in message.get(25, []):
        for name, child in named(decode(props)[1]).items():
            yield from subschemas(child, f"{where}.{name}")
    for items in message.get(23, []):
        for child in decode(items).get(1, []):
            yield from subschemas(child, f"{where}[]")
    for extra in message.get(21, []):
        for child in decode(extra).get(1, []):
            yield from subschemas(child, f"{where}{{}}")


def protobuf_of(registry: Registry) -> bytes:
    return OpenAPIV2(OpenAPI(registry)).render(PROTOBUF_ASKED).body


@pytest.fixture(scope="module")
def with_widgets() -> bytes:
    registry = Registry()
    registry.add(widget_type())
    return protobuf_of(registry)


@pytest.fixture(scope="module")
def every_schema(with_widgets: bytes) -> list[tuple[str, Message]]:
    return [
        found
        for name, schema in definitions_of(with_widgets).items()
        for found in subschemas(schema, name)
    ]


# -- the document ------------------------------------------------------------------------------


def test_document_is_swagger_2_0_with_kubernetes_info(with_widgets: bytes) -> None:
    document = decode(with_widgets)
    info = decode(document[2][0])
    assert (text(document, 1), text(info, 1), text(info, 2)) == ("2.0", "Kubernetes", "v1.37.0")


def test_builtin_definitions_are_all_the_v3_definitions() -> None:
    assert set(definitions_of(protobuf_of(Registry()))) == set(definitions()) | CLUSTER_API


def test_deployment_definition_carries_its_group_version_kind(with_widgets: bytes) -> None:
    deployment = decode(definitions_of(with_widgets)["io.k8s.api.apps.v1.Deployment"])
    gvk = extensions(deployment, 31)["x-kubernetes-group-version-kind"]
    assert gvk == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    properties = named(decode(deployment[25][0])[1])
    spec = decode(properties["spec"])
    assert text(spec, 1) == "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"


def test_patch_strategy_extensions_survive_on_properties(with_widgets: bytes) -> None:
    pod_spec = decode(definitions_of(with_widgets)["io.k8s.api.core.v1.PodSpec"])
    containers = decode(named(decode(pod_spec[25][0])[1])["containers"])
    found = extensions(containers, 31)
    assert found["x-kubernetes-patch-merge-key"] == "name"
    assert found["x-kubernetes-patch-strategy"] == "merge"


def test_crd_kind_and_list_are_definitions_with_their_gvk(with_widgets: bytes) -> None:
    found = definitions_of(with_widgets)
    assert len(found) == len(definitions()) + len(CLUSTER_API) + 2
    gvk = {"group": "stable.example.com", "version": "v1"}
    for name, kind in ((WIDGET, "Widget"), (f"{WIDGET}List", "WidgetList")):
        schema = decode(found[name])
        assert extensions(schema, 31)["x-kubernetes-group-version-kind"] == [{**gvk, "kind": kind}]
    widget = dict(subschemas(found[WIDGET], "Widget"))
    assert text(widget["Widget.metadata"], 1) == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert text(decode(widget["Widget.spec.size"][22][0]), 1) == "integer"


@pytest.mark.parametrize(
    ("where", "fields_absent"),
    [
        pytest.param("Widget.spec.note", (22,), id="nullable-field-is-untyped"),
        pytest.param("Widget.spec.port", (22,), id="int-or-string-is-untyped"),
        pytest.param("Widget.status", (25, 23), id="preserved-object-has-no-properties"),
    ],
)
def test_crd_schema_follows_the_api_servers_v2_rules(
    with_widgets: bytes, where: str, fields_absent: tuple[int, ...]
) -> None:
    widget = dict(subschemas(definitions_of(with_widgets)[WIDGET], "Widget"))
    assert where in widget
    assert not set(fields_absent) & set(widget[where])


def test_crd_type_appears_once_the_registry_has_it() -> None:
    registry = Registry()
    v2 = OpenAPIV2(OpenAPI(registry))
    before = v2.render(PROTOBUF_ASKED)
    assert v2.render(PROTOBUF_ASKED) is before  # built once, not per request
    registry.add(widget_type())
    after = v2.render(PROTOBUF_ASKED)
    assert WIDGET not in definitions_of(before.body)
    assert WIDGET in definitions_of(after.body)
    assert after.etag != before.etag


def _ref_resolves(message: Message, names: set[str]) -> str | None:
    ref = text(message, 1)
    if ref and ref.removeprefix("#/definitions/") not in names:
        return f"$ref {ref!r} names no definition"
    if ref and (22 in message or 25 in message):
        return "a $ref with a type or properties"
    return None


def _one_type(message: Message, names: set[str]) -> str | None:
    types = [t for item in message.get(22, []) for t in decode(item).get(1, [])]
    return f"{len(types)} types" if len(types) > 1 else None


def _array_has_one_item(message: Message, names: set[str]) -> str | None:
    types = [t.decode() for item in message.get(22, []) for t in decode(item).get(1, [])]
    items = [s for item in message.get(23, []) for s in decode(item).get(1, [])]
    return (
        f"array with {len(items)} item schemas" if types == ["array"] and len(items) != 1 else None
    )


def _extensions_parse(message: Message, names: set[str]) -> str | None:
    try:
        extensions(message, 31)
    except yaml.YAMLError as exc:
        return f"extension is not YAML: {exc}"
    return None


@pytest.mark.parametrize(
    "rule",
    [_ref_resolves, _one_type, _array_has_one_item, _extensions_parse],
    ids=["refs-resolve", "at-most-one-type", "arrays-have-one-item", "extensions-are-yaml"],
)
def test_every_schema_passes_kube_openapi_parsing(
    with_widgets: bytes,
    every_schema: list[tuple[str, Message]],
    rule: Callable[[Message, set[str]], str | None],
) -> None:
    names = set(definitions_of(with_widgets))
    broken = {where: error for where, m in every_schema if (error := rule(m, names))}
    assert broken == {}
    assert len(every_schema) > 4 * len(names)  # the walk reached nested schemas


def test_patch_operations_offer_field_validation_like_v3(with_widgets: bytes) -> None:
    """kubectl's v2 query-parameter check: the PATCH carrying the GVK lists `fieldValidation`."""
    item = decode(paths_of(with_widgets)["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"])
    patch = decode(item[8][0])
    assert extensions(patch, 13)["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "kind": "Deployment",
        "version": "v1",
    }
    parameters = [decode(decode(p)[1][0]) for p in patch[8]]  # ParametersItem -> Parameter
    non_body = [decode(decode(p[2][0]).get(3, [b""])[0]) for p in parameters if 2 in p]
    names = {text(query, 4) for query in non_body}
    assert {"fieldValidation", "fieldManager", "dryRun"} <= names
    assert "application/strategic-merge-patch+json" in {c.decode() for c in patch[7]}


def test_json_form_has_the_same_definitions_and_paths(with_widgets: bytes) -> None:
    registry = Registry()
    registry.add(widget_type())
    as_json = json.loads(OpenAPIV2(OpenAPI(registry)).render(JSON).body)
    assert as_json["swagger"] == "2.0"
    assert set(as_json["definitions"]) == set(definitions_of(with_widgets))
    assert set(as_json["paths"]) == set(paths_of(with_widgets))


# -- conversion and negotiation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"type": ["string", "null"]}, {"type": "string"}, id="null-dropped-from-type"),
        pytest.param(
            {"$ref": "#/$defs/a.B", "description": "d", "type": "object"},
            {"$ref": "#/definitions/a.B", "description": "d"},
            id="ref-keeps-only-description",
        ),
        pytest.param(
            {"allOf": [{"$ref": "#/components/schemas/a.B"}], "description": "d"},
            {"$ref": "#/definitions/a.B", "description": "d"},
            id="allof-wrapped-ref-unwrapped",
        ),
        pytest.param(
            {"oneOf": [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]},
            {"type": "string"},
            id="primitive-union-is-string",
        ),
        pytest.param({"type": "array"}, {}, id="array-without-items-untyped"),
        pytest.param(
            {"type": "object", "nullable": True, "properties": {"a": {"type": "string"}}},
            {},
            id="nullable-loses-type-and-children",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": False, "x-kubernetes-map-type": "atomic"},
            {"type": "object", "additionalProperties": False, "x-kubernetes-map-type": "atomic"},
            id="flags-and-extensions-kept",
        ),
        pytest.param({"$ref": "https://elsewhere/x"}, {}, id="foreign-ref-dropped"),
    ],
)
def test_schema_conversion_for_kube_openapi(schema: dict[str, Any], expected: Any) -> None:
    before = copy.deepcopy(schema)
    assert to_v2_schema(schema) == expected
    assert schema == before


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        pytest.param(PROTOBUF_ASKED, PROTOBUF, id="kubectl-gets-parseable-protobuf-type"),
        pytest.param(PROTOBUF, PROTOBUF, id="dotted-protobuf"),
        pytest.param("application/json, */*", JSON, id="json"),
        pytest.param("", JSON, id="no-accept-is-json"),
        pytest.param(f"text/html, {PROTOBUF_ASKED};q=0.9", PROTOBUF, id="first-served-wins"),
    ],
)
def test_negotiation(accept: str, media: str) -> None:
    assert negotiate(accept) == media


def test_unserved_media_type_is_not_acceptable() -> None:
    with pytest.raises(NotAcceptable, match="only the following media types are accepted"):
        negotiate("text/html")


# -- the protobuf writer ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [0, 1, 127, 128, 300, 2**31, 2**63 - 1, -1, -(2**63)],
    ids=["0", "1", "127", "128", "300", "2^31", "int64-max", "minus-1", "int64-min"],
)
def test_integers_read_back_through_the_wire_reader(value: int) -> None:
    [(number, wire_type, raw)] = list(fields(Writer().integer(7, value).to_bytes()))
    assert (number, wire_type) == (7, VARINT)
    assert isinstance(raw, int) and signed(raw) == value
    assert read_varint(varint(value), 0)[1] == len(varint(value))


def test_strings_doubles_and_nested_messages_read_back() -> None:
    inner = Writer().string(1, "größe").boolean(2, False)
    data = Writer().double(3, 2.5).message(4, inner).strings(5, ["a", "b"]).to_bytes()
    read = decode(data)
    assert struct.unpack("<d", read[3][0].to_bytes(8, "little")) == (2.5,)
    assert [wt for n, wt, _ in fields(data) if n == 3] == [FIXED64]
    assert text(decode(read[4][0]), 1) == "größe"
    assert decode(read[4][0])[2] == [0]  # written although it is proto3's default
    assert read[5] == [b"a", b"b"]


def test_varint_refuses_what_64_bits_cannot_hold() -> None:
    with pytest.raises(ValueError, match="64 bits"):
        varint(2**64)


# -- over HTTP, and with real kubectl ---------------------------------------------------------


def _client(sandbox: Sandbox) -> httpx.Client:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    token = config["users"][0]["user"]["token"]
    trust = ssl.create_default_context(cafile=str(sandbox.options.home / "tls" / "ca.crt"))
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=sandbox.url, verify=trust, timeout=30, headers=headers)


@pytest.mark.parametrize(
    ("accept", "code", "content_type"),
    [
        pytest.param(PROTOBUF_ASKED, 200, PROTOBUF, id="protobuf"),
        pytest.param("application/json", 200, JSON, id="json"),
        pytest.param("text/html", 406, JSON, id="unserved"),
    ],
)
def test_openapi_v2_over_http(
    shared_sandbox: Sandbox, accept: str, code: int, content_type: str
) -> None:
    with _client(shared_sandbox) as client:
        response = client.get("/openapi/v2", headers={"Accept": accept})
    assert (response.status_code, response.headers["content-type"]) == (code, content_type)
    if content_type == PROTOBUF:
        assert "io.k8s.api.core.v1.ConfigMap" in definitions_of(response.content)
    elif code == 200:
        assert response.json()["swagger"] == "2.0"
    else:
        assert response.json()["reason"] == "NotAcceptable"


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
        },
    },
}
CONFIG_MAP: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings"},
    "data": {"mode": "fast"},
}


def as_list(*items: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


@pytest.mark.kubectl
@pytest.mark.parametrize(
    ("verb", "said"),
    [pytest.param("create", "created", id="create"), pytest.param("apply", "created", id="apply")],
)
def test_kubectl_takes_a_list_of_a_config_map_and_a_deployment(
    shared_kubectl: Kubectl, namespace: str, verb: str, said: str
) -> None:
    printed = shared_kubectl(
        verb, "-n", namespace, "-f", "-", input=as_list(CONFIG_MAP, DEPLOYMENT)
    )
    assert printed == f"configmap/settings {said}\ndeployment.apps/web {said}\n"
    shown = shared_kubectl("get", "configmap,deployment", "-n", namespace, "-o", "name")
    assert shown.split() == ["configmap/settings", "deployment.apps/web"]


@pytest.mark.kubectl
@pytest.mark.parametrize("verb", ["create", "apply"])
def test_kubectl_rejects_a_list_item_with_an_unknown_field_before_sending_it(
    shared_kubectl: Kubectl, namespace: str, verb: str
) -> None:
    bad = {**CONFIG_MAP, "colour": "red"}
    done = shared_kubectl.fails(verb, "-n", namespace, "-f", "-", input=as_list(bad, DEPLOYMENT))
    assert done.stderr == (
        'error: error validating "STDIN": error validating data: ValidationError(ConfigMap): '
        'unknown field "colour" in io.k8s.api.core.v1.ConfigMap; if you choose to ignore these '
        "errors, turn validation off with --validate=false\n"
    )
    assert shared_kubectl("get", "configmap,deployment", "-n", namespace, "-o", "name") == ""


@pytest.mark.kubectl
def test_kubectl_validates_custom_resources_in_a_list_against_the_crd(kubectl: Kubectl) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
                }
            ],
        },
    }
    kubectl("apply", "-f", "-", input=json.dumps(crd))
    kubectl("wait", "--for=condition=Established", "crd/widgets.stable.example.com")
    widget = {"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    bad = {**widget, "spec": {"size": 2, "weight": 3}}
    done = kubectl.fails("apply", "-f", "-", input=as_list(bad))
    assert (
        'ValidationError(Widget.spec): unknown field "weight" in com.example.stable.v1.Widget.spec'
    ) in done.stderr
    good = {**widget, "spec": {"size": 2, "port": "http"}, "status": {"anything": 1}}
    assert (
        kubectl("apply", "-f", "-", input=as_list(good)) == "widget.stable.example.com/w created\n"
    )


@pytest.mark.kubectl
def test_kubectl_apply_of_a_single_manifest_still_validates_on_the_server(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    """v3 vouches for a Deployment, so kubectl sends `fieldValidation=Strict` and skips v2."""
    manifest = json.dumps(DEPLOYMENT)
    done = shared_kubectl.run("apply", "-v=6", "-n", namespace, "-f", "-", input=manifest)
    assert done.stdout == "deployment.apps/web created\n"
    assert "/openapi/v3/apis/apps/v1" in done.stderr
    assert "/openapi/v2" not in done.stderr
    typo = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicass": 2}}
    failed = shared_kubectl.fails("apply", "-n", namespace, "-f", "-", input=json.dumps(typo))
    assert 'strict decoding error: unknown field "spec.replicass"' in failed.stderr
