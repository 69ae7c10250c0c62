"""A JSON patch cannot make the sandbox build a huge object: kube-apiserver's limits hold.

The attack: `copy` an object's annotations into themselves, op after op. Each copy doubles the
object, so 22 operations in a 2.4 KB body once held the server for a minute and 4 GB. Like
kube-apiserver, the sandbox takes at most 10,000 operations, counts the bytes every `copy`
adds (3 MiB in all), and refuses with 413 as soon as the growing object would pass 3 MiB,
without ever building it. Ordinary patches, large ones included, are untouched.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandbox.server import Sandbox
from tests.support.api_client import JSON_PATCH, api_client, status_of

CM = "/api/v1/namespaces/default/configmaps"
# A ControllerRevision's `data` is free-form and unbounded by validation (a ConfigMap's stops
# at 1 MiB), so it carries the large values here.
REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"
LIMIT = 3 * 1024 * 1024


@pytest.fixture(scope="module")
def http(shared_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with api_client(shared_sandbox, timeout=20) as client:
        yield client


def _configmap(http: httpx.Client, name: str, **fields: Any) -> None:
    body = {"metadata": {"name": name, "annotations": {"note": "x" * 100}}, **fields}
    assert http.post(CM, json=body).status_code == 201


def _revision(http: httpx.Client, name: str, data: dict[str, Any]) -> None:
    body = {"metadata": {"name": name}, "revision": 1, "data": data}
    assert http.post(REVISIONS, json=body).status_code == 201


def _patch(
    http: httpx.Client, name: str, operations: list[dict[str, Any]], *, path: str = CM
) -> httpx.Response:
    return http.patch(f"{path}/{name}", content=json.dumps(operations), headers=JSON_PATCH)


def _self_copies(count: int) -> list[dict[str, Any]]:
    return [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/a{i}"}
        for i in range(count)
    ]


@pytest.mark.parametrize("copies", [18, 40], ids=["18-copies", "40-copies"])
def test_self_copying_patch_is_refused_quickly_as_too_large(
    http: httpx.Client, copies: int
) -> None:
    name = f"bomb-{copies}"
    _configmap(http, name)
    started = time.monotonic()
    response = _patch(http, name, _self_copies(copies))
    elapsed = time.monotonic() - started

    status = status_of(response)
    assert (response.status_code, status["reason"]) == (413, "RequestEntityTooLarge"), status
    assert status["message"].startswith(f"Request entity too large: limit is {LIMIT}")
    assert elapsed < 2, f"the refusal took {elapsed:.1f} s"
    stored = http.get(f"{CM}/{name}").json()
    assert stored["metadata"]["annotations"] == {"note": "x" * 100}


def test_more_than_ten_thousand_operations_are_refused(http: httpx.Client) -> None:
    _configmap(http, "many-ops")
    operations = [{"op": "test", "path": "/metadata/name", "value": "many-ops"}] * 10_001
    response = _patch(http, "many-ops", operations)
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (413, "RequestEntityTooLarge")
    assert status["message"] == (
        "The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_ten_thousand_operations_are_allowed(http: httpx.Client) -> None:
    _configmap(http, "max-ops")
    operations = [{"op": "test", "path": "/metadata/name", "value": "max-ops"}] * 10_000
    assert _patch(http, "max-ops", operations).status_code == 200


def test_copies_count_against_the_limit_even_when_removed_again(http: httpx.Client) -> None:
    """Copy a 1 MiB value and remove the copy, four times: the object never grows, but 4 MiB
    were copied, which kube-apiserver's copy budget (3 MiB) refuses."""
    _revision(http, "copy-loop", {"big": "y" * (1024 * 1024)})
    operations = [
        {"op": "copy", "from": "/data/big", "path": "/data/copy"},
        {"op": "remove", "path": "/data/copy"},
    ] * 4
    response = _patch(http, "copy-loop", operations, path=REVISIONS)
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (413, "RequestEntityTooLarge"), status
    assert "copy" in status["message"]


def test_large_values_may_be_replaced_when_the_result_stays_under_the_limit(
    http: httpx.Client,
) -> None:
    """Only the object's real size counts: replacing 2 MiB with 2 MiB is fine, although the
    two together would pass the limit."""
    two_mib = 2 * 1024 * 1024
    _revision(http, "big-replace", {"big": "a" * two_mib})
    operations = [{"op": "replace", "path": "/data/big", "value": "b" * two_mib}]
    response = _patch(http, "big-replace", operations, path=REVISIONS)
    assert response.status_code == 200, response.text[:300]
    assert http.get(f"{REVISIONS}/big-replace").json()["data"]["big"] == "b" * two_mib


def test_a_few_copies_of_a_small_value_still_apply(http: httpx.Client) -> None:
    _configmap(http, "few-copies", data={"a": "1"})
    operations = [{"op": "copy", "from": "/data/a", "path": f"/data/b{i}"} for i in range(5)]
    response = _patch(http, "few-copies", operations)
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "1", **{f"b{i}": "1" for i in range(5)}}
