"""Bad input gets a precise Kubernetes Status: never a 500 or a traceback, never a changed store."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.http import MAX_BODY
from sandbox.server import Sandbox


@pytest.fixture(scope="module")
def http(shared_sandbox: Sandbox) -> Iterator[httpx.Client]:
    config = yaml.safe_load(shared_sandbox.kubeconfig.read_text())
    token = config["users"][0]["user"]["token"]
    with httpx.Client(
        base_url=shared_sandbox.url,
        verify=_trust(shared_sandbox),
        timeout=30,
        headers={"Authorization": f"Bearer {token}"},
    ) as client:
        yield client


def _trust(sandbox: Sandbox) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(sandbox.options.home / "tls" / "ca.crt"))


def _status(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert body["kind"] == "Status", body
    assert body["code"] == response.status_code
    return body


CM = "/api/v1/namespaces/default/configmaps"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


@pytest.mark.parametrize(
    ("method", "path", "content", "headers", "code", "reason", "fragment"),
    [
        ("POST", CM, b"{not json", {}, 400, "BadRequest", "not valid JSON"),
        ("POST", CM, b"[1, 2]", {}, 400, "BadRequest", "must be a ConfigMap object"),
        (
            "POST",
            CM,
            b'{"metadata": {"name": "x"}, "kind": "Secret"}',
            {},
            400,
            "BadRequest",
            "does not match the resource",
        ),
        (
            "POST",
            CM,
            b'{"apiVersion": "v2", "metadata": {"name": "x"}}',
            {},
            400,
            "BadRequest",
            "API version 'v2'",
        ),
        (
            "POST",
            CM,
            b'{"metadata": {"name": "Bad_Name"}}',
            {},
            422,
            "Invalid",
            "a lowercase RFC 1123 subdomain",
        ),
        ("POST", CM, b'{"metadata": {}}', {}, 422, "Invalid", "metadata.name"),
        (
            "POST",
            CM,
            b"\x00\x01\x02",
            {"Content-Type": "application/vnd.kubernetes.protobuf"},
            400,
            "BadRequest",
            "",
        ),
        (
            "POST",
            CM,
            b"a: b",
            {"Content-Type": "text/plain"},
            415,
            "UnsupportedMediaType",
            "unknown format",
        ),
        ("GET", CM + "?labelSelector=a%20in%20(", b"", {}, 400, "BadRequest", ""),
        (
            "GET",
            CM + "?fieldSelector=spec.bogus%3Dx",
            b"",
            {},
            400,
            "BadRequest",
            "field label not supported",
        ),
        ("GET", CM + "?limit=ten", b"", {}, 400, "BadRequest", "limit"),
        ("GET", CM + "?continue=garbage", b"", {}, 400, "BadRequest", "continue token"),
        ("GET", CM + "?watch=maybe", b"", {}, 400, "BadRequest", "invalid boolean"),
        (
            "GET",
            "/apis/nope.example.com/v1/widgets",
            b"",
            {},
            404,
            "NotFound",
            "could not find the requested resource",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/configmaps/missing",
            b"",
            {},
            404,
            "NotFound",
            'configmaps "missing" not found',
        ),
        (
            "PATCH",
            CM + "/kube-root",
            b'{"data": 1}',
            {"Content-Type": "application/merge-patch+json"},
            404,
            "NotFound",
            "not found",
        ),
        (
            "PATCH",
            DEPLOY + "/web",
            b'[{"op": "explode"}]',
            {"Content-Type": "application/json-patch+json"},
            400,
            "BadRequest",
            "",
        ),
        (
            "PATCH",
            DEPLOY + "/web",
            b'{"spec": {"$patch": "sideways"}}',
            {"Content-Type": "application/strategic-merge-patch+json"},
            400,
            "BadRequest",
            "",
        ),
        (
            "PATCH",
            DEPLOY + "/web",
            b'{"spec": {}}',
            {"Content-Type": "application/xml"},
            415,
            "UnsupportedMediaType",
            "not supported",
        ),
        (
            "PATCH",
            DEPLOY + "/web",
            b"kind: [",
            {"Content-Type": "application/apply-patch+yaml"},
            400,
            "BadRequest",
            "YAML",
        ),
        ("POST", DEPLOY + "?dryRun=Some", b"{}", {}, 400, "BadRequest", "dryRun"),
        (
            "DELETE",
            DEPLOY + "/web",
            b'{"propagationPolicy": "Sideways"}',
            {},
            400,
            "BadRequest",
            "propagationPolicy",
        ),
    ],
    ids=[
        "malformed-json",
        "not-an-object",
        "wrong-kind",
        "wrong-api-version",
        "invalid-name",
        "missing-name",
        "garbage-protobuf",
        "unknown-content-type",
        "bad-label-selector",
        "unsupported-field-selector",
        "bad-limit",
        "bad-continue",
        "bad-watch-flag",
        "unknown-group",
        "missing-object",
        "patch-missing",
        "bad-json-patch-op",
        "bad-smp-directive",
        "unknown-patch-type",
        "bad-apply-yaml",
        "bad-dry-run",
        "bad-propagation",
    ],
)
def test_bad_request_gets_a_precise_status(
    http: httpx.Client,
    deployment: None,
    method: str,
    path: str,
    content: bytes,
    headers: dict[str, str],
    code: int,
    reason: str,
    fragment: str,
) -> None:
    before = _what_clients_wrote(http)
    response = http.request(method, path, content=content, headers=headers)
    status = _status(response)
    assert (response.status_code, status["reason"]) == (code, reason), status
    assert fragment in status["message"]
    assert _what_clients_wrote(http) == before


def _what_clients_wrote(http: httpx.Client) -> dict[str, Any]:
    """The ConfigMaps (by resourceVersion) and Deployments (by generation and spec) of
    `default`: what a bad request must leave alone. Not the list's resourceVersion: the cluster's
    own controllers and node heartbeats move that all the time."""
    configmaps = {
        item["metadata"]["name"]: item["metadata"]["resourceVersion"]
        for item in http.get(CM).json()["items"]
    }
    deployments = {
        item["metadata"]["name"]: (item["metadata"]["generation"], item["spec"])
        for item in http.get(DEPLOY).json()["items"]
    }
    return {"configmaps": configmaps, "deployments": deployments}


@pytest.fixture(scope="module")
def deployment(http: httpx.Client) -> None:
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert http.post(DEPLOY, json=body).status_code == 201


def test_oversized_body_is_refused(http: httpx.Client) -> None:
    big = json.dumps({"metadata": {"name": "big"}, "data": {"k": "x" * (MAX_BODY + 10)}})
    response = http.post(CM, content=big.encode())
    status = _status(response)
    assert (response.status_code, status["reason"]) == (413, "RequestEntityTooLarge")
    assert http.get(CM + "/big").status_code == 404


def test_unauthenticated_token_is_401(shared_sandbox: Sandbox) -> None:
    response = httpx.get(
        shared_sandbox.url + CM,
        verify=_trust(shared_sandbox),
        headers={"Authorization": "Bearer forged"},
    )
    assert (response.status_code, _status(response)["reason"]) == (401, "Unauthorized")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(
        [
            CM,
            DEPLOY,
            DEPLOY + "/web",
            "/api/v1/namespaces",
            "/api/v1/namespaces/default/pods/p/eviction",
            "/api/v1/namespaces/default/serviceaccounts/default/token",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        ]
    ),
    method=st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]),
    content_type=st.sampled_from(
        [
            "application/json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/json-patch+json",
            "application/apply-patch+yaml",
            "application/vnd.kubernetes.protobuf",
        ]
    ),
    body=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=8), inner, max_size=3)
            ),
            max_leaves=12,
        ).map(lambda v: json.dumps(v).encode()),
    ),
)
def test_arbitrary_bodies_never_cause_a_server_error(
    http: httpx.Client, path: str, method: str, content_type: str, body: bytes
) -> None:
    response = http.request(
        method, path + "?fieldManager=fuzz", content=body, headers={"Content-Type": content_type}
    )
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        _status(response)
