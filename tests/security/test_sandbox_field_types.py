"""Built-in objects keep their Go types: a wrong JSON type or an out-of-range number is refused.

kube-apiserver decodes every write into typed Go structs, so `replicas: "3"`, `1.5` or `2^63`,
a number in a ConfigMap's `data`, or a list as a label value never reach storage: the request
fails with 400 in every `fieldValidation` mode. The sandbox once stored them, after which
kubectl could not read the object back and `replicas: 2^63` set the controllers making pods
without end. Duplicate keys are a strict-decoding problem: an error under Strict, a warning
otherwise, the last value winning.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from sandbox.server import Sandbox
from tests.support.api_client import (
    APPLY_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    api_client,
    deployment,
    status_of,
    warnings_of,
)
from tests.support.kubectl import Kubectl

CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"
MODES = ["Strict", "Warn", "Ignore"]


@pytest.fixture(scope="module")
def http(shared_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with api_client(shared_sandbox) as client:
        yield client


def _refused_as_undecodable(response: httpx.Response, fragment: str) -> None:
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest"), status
    assert "cannot be handled as a" in status["message"], status["message"]
    assert fragment in status["message"], status["message"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("replicas", "fragment"),
    [
        ("3", "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas"),
        (1.5, "cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas"),
        (2**63, "cannot unmarshal number 9223372036854775808 into Go struct field"),
        (2**31, "of type int32"),
        (True, "cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas"),
        ([3], "cannot unmarshal array into Go struct field"),
    ],
    ids=["string", "fraction", "2^63", "2^31", "bool", "list"],
)
def test_wrong_replicas_type_is_refused_in_every_mode(
    http: httpx.Client, replicas: Any, fragment: str, mode: str
) -> None:
    name = f"bad-replicas-{mode.lower()}"
    body = json.dumps(deployment(name, replicas=replicas))
    response = http.post(f"{DEPLOY}?fieldValidation={mode}", content=body)
    _refused_as_undecodable(response, fragment)
    assert http.get(f"{DEPLOY}/{name}").status_code == 404


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            {"metadata": {"name": "cm-int"}, "data": {"a": 1}},
            "cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            {"metadata": {"name": "cm-label-list", "labels": {"a": ["x"]}}},
            "cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            {"metadata": {"name": "cm-annotation-map", "annotations": {"a": {"b": "c"}}}},
            "cannot unmarshal object into Go struct field ObjectMeta.metadata.annotations",
        ),
        (
            {"metadata": {"name": "cm-immutable", "labels": {}}, "immutable": "yes"},
            "cannot unmarshal string into Go struct field ConfigMap.immutable of type bool",
        ),
        (
            {"metadata": {"name": "cm-finalizers", "finalizers": "a/b"}},
            "cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers",
        ),
        (
            {"metadata": {"name": "cm-time", "deletionTimestamp": "yesterday"}},
            'parsing time "yesterday"',
        ),
    ],
    ids=["data-number", "label-list", "annotation-object", "bool-string", "list-string", "time"],
)
def test_wrong_types_in_configmaps_and_metadata_are_refused(
    http: httpx.Client, body: dict[str, Any], fragment: str
) -> None:
    response = http.post(CM, content=json.dumps(body))
    _refused_as_undecodable(response, fragment)
    assert http.get(f"{CM}/{body['metadata']['name']}").status_code == 404


def test_int_or_string_and_quantity_fields_take_both_forms(http: httpx.Client) -> None:
    body = deployment("int-or-string")
    body["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"limits": {"cpu": 1, "memory": "64Mi"}}
    assert http.post(DEPLOY, json=body).status_code == 201
    body["metadata"]["name"] = "int-or-string-bool"
    body["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = True
    _refused_as_undecodable(http.post(DEPLOY, json=body), "of type intstr.IntOrString")


@pytest.mark.parametrize(
    ("name", "headers", "patch"),
    [
        ("merge-string", MERGE_PATCH, {"spec": {"replicas": "4"}}),
        ("strategic-huge", STRATEGIC_PATCH, {"spec": {"replicas": 2**63}}),
        ("merge-label-number", MERGE_PATCH, {"metadata": {"labels": {"tier": 1}}}),
    ],
    ids=["merge-string", "strategic-2^63", "merge-label-number"],
)
def test_patches_cannot_store_wrong_types(
    http: httpx.Client, name: str, headers: dict[str, str], patch: dict[str, Any]
) -> None:
    http.post(DEPLOY, json=deployment(name, replicas=2))
    response = http.patch(f"{DEPLOY}/{name}", content=json.dumps(patch), headers=headers)
    _refused_as_undecodable(response, "cannot unmarshal")
    assert http.get(f"{DEPLOY}/{name}").json()["spec"]["replicas"] == 2


def test_server_side_apply_cannot_store_wrong_types(http: httpx.Client) -> None:
    body = json.dumps(deployment("applied-wrong", replicas="3"))
    response = http.patch(
        f"{DEPLOY}/applied-wrong?fieldManager=test", content=body, headers=APPLY_PATCH
    )
    _refused_as_undecodable(response, "DeploymentSpec.spec.replicas")
    assert http.get(f"{DEPLOY}/applied-wrong").status_code == 404


def test_integral_numbers_are_stored_as_integers(http: httpx.Client) -> None:
    """JSON has one number type: `3.0` is taken as 3 and stored as 3, so a typed client
    (kubectl decodes into int32) can read it back."""
    response = http.post(DEPLOY, content=json.dumps(deployment("float-three", replicas=3.0)))
    assert response.status_code == 201, response.text
    replicas = json.loads(http.get(f"{DEPLOY}/float-three").content)["spec"]["replicas"]
    assert (type(replicas), replicas) == (int, 3)


def test_negative_replicas_are_invalid(http: httpx.Client) -> None:
    response = http.post(DEPLOY, json=deployment("negative", replicas=-1))
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (422, "Invalid")
    assert (
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        in (status["message"])
    )


DUPLICATED = b'{"metadata": {"name": "%s"}, "data": {"a": "1", "a": "2"}}'


def test_duplicate_keys_are_refused_under_strict(http: httpx.Client) -> None:
    response = http.post(f"{CM}?fieldValidation=Strict", content=DUPLICATED % b"dup-strict")
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "data.a"'
    )
    assert http.get(f"{CM}/dup-strict").status_code == 404


@pytest.mark.parametrize("mode", ["Warn", ""], ids=["warn", "default"])
def test_duplicate_keys_are_a_warning_otherwise_and_the_last_value_wins(
    http: httpx.Client, mode: str
) -> None:
    name = f"dup-{mode.lower() or 'default'}"
    query = f"?fieldValidation={mode}" if mode else ""
    response = http.post(CM + query, content=DUPLICATED % name.encode())
    assert response.status_code == 201, response.text
    assert warnings_of(response) == ['duplicate field "data.a"']
    assert response.json()["data"] == {"a": "2"}


def test_duplicate_keys_are_silent_under_ignore(http: httpx.Client) -> None:
    response = http.post(f"{CM}?fieldValidation=Ignore", content=DUPLICATED % b"dup-ignore")
    assert response.status_code == 201
    assert warnings_of(response) == []


def test_duplicate_keys_in_a_merge_patch_are_reported(http: httpx.Client) -> None:
    http.post(CM, json={"metadata": {"name": "dup-patch"}})
    response = http.patch(
        f"{CM}/dup-patch?fieldValidation=Strict",
        content=b'{"data": {"a": "1", "a": "2"}}',
        headers=MERGE_PATCH,
    )
    status = status_of(response)
    assert 'strict decoding error: duplicate field "data.a"' in status["message"]


def test_duplicate_keys_in_yaml_are_reported_with_their_line(http: httpx.Client) -> None:
    manifest = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup-yaml\ndata:\n  a: '1'\n  a: '2'\n"
    )
    response = http.patch(
        f"{CM}/dup-yaml?fieldManager=test&fieldValidation=Strict",
        content=manifest,
        headers=APPLY_PATCH,
    )
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest")
    assert 'line 7: key "a" already set in map' in status["message"]


@pytest.mark.kubectl
def test_kubectl_apply_of_a_wrong_type_fails_with_gos_message(shared_kubectl: Kubectl) -> None:
    manifest = yaml.safe_dump(deployment("kubectl-wrong", replicas="3"))
    failed = shared_kubectl.fails("apply", "-n", "default", "-f", "-", input=manifest)
    assert "(BadRequest)" in failed.stderr
    assert (
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
        "of type int32"
    ) in failed.stderr
    missing = shared_kubectl.run("get", "deployment", "kubectl-wrong", "-n", "default", check=False)
    assert "NotFound" in missing.stderr
