"""Deeply nested bodies are refused up front with 400, never answered with a 500.

The sandbox walks objects recursively (managed fields, merges, copies), and Python's stack
ends near 1,000 frames; a body nested 1,000 levels deep once made create, every patch type and
server-side apply fail with a RecursionError. kube-apiserver refuses JSON nested deeper than
10,000 levels ("exceeded max depth"); the sandbox's limit is lower, checked without recursion
before anything else reads the body, and far above what real manifests need: bodies exactly at the
limit, in a ControllerRevision's free-form `data`, work for every write and read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sandbox.limits import MAX_DEPTH
from sandbox.server import Sandbox
from tests.support.api_client import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_PATCH,
    api_client,
    status_of,
)

REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"


@pytest.fixture(scope="module")
def http(shared_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with api_client(shared_sandbox) as client:
        yield client


def _nested(depth: int) -> str:
    """A JSON object nested `depth` levels deep: {"a": {"a": ... 1 ...}}."""
    return '{"a":' * depth + "1" + "}" * depth


def _revision(name: str, data: str) -> str:
    return f'{{"metadata": {{"name": "{name}"}}, "revision": 1, "data": {data}}}'


def _refused_as_too_deep(response: httpx.Response) -> None:
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest"), status
    assert "exceeded max depth" in status["message"], status["message"]


@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_deep_create_is_refused(http: httpx.Client, depth: int) -> None:
    _refused_as_too_deep(http.post(REVISIONS, content=_revision(f"deep-{depth}", _nested(depth))))
    assert http.get(f"{REVISIONS}/deep-{depth}").status_code == 404


@pytest.mark.parametrize(
    ("headers", "template"),
    [
        (MERGE_PATCH, '{"data": VALUE}'),
        (STRATEGIC_PATCH, '{"data": VALUE}'),
        (JSON_PATCH, '[{"op": "add", "path": "/data", "value": VALUE}]'),
        (
            APPLY_PATCH,
            '{"apiVersion": "apps/v1", "kind": "ControllerRevision", '
            '"metadata": {"name": "shallow"}, "revision": 1, "data": VALUE}',
        ),
    ],
    ids=["merge", "strategic", "json", "apply"],
)
@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_deep_patches_are_refused(
    http: httpx.Client, shallow: None, headers: dict[str, str], template: str, depth: int
) -> None:
    before = http.get(f"{REVISIONS}/shallow").json()
    body = template.replace("VALUE", _nested(depth))
    response = http.patch(f"{REVISIONS}/shallow?fieldManager=test", content=body, headers=headers)
    _refused_as_too_deep(response)
    after = http.get(f"{REVISIONS}/shallow").json()
    # Not one write: the same resourceVersion and data (its stamps are shown on the wall clock
    # as of each read, and the test sandboxes live faster than that: sandbox/timeframe.py).
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["data"] == before["data"] == {"a": 1}


@pytest.fixture(scope="module")
def shallow(http: httpx.Client) -> None:
    assert http.post(REVISIONS, content=_revision("shallow", '{"a": 1}')).status_code == 201


def test_deep_yaml_is_refused(http: httpx.Client) -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: yaml-deep\n"
        "revision: 1\ndata: " + "[" * 5_000 + "]" * 5_000 + "\n"
    )
    response = http.patch(
        f"{REVISIONS}/yaml-deep?fieldManager=test", content=manifest, headers=APPLY_PATCH
    )
    _refused_as_too_deep(response)


def test_json_patch_cannot_build_depth_by_moving_values_into_each_other(
    http: httpx.Client,
) -> None:
    """Each value is shallow enough, but moved into one another they would nest 270 deep."""
    assert http.post(REVISIONS, content=_revision("chained", "{}")).status_code == 201
    chain = json.loads(_nested(90))
    leaf = "/a" * 89
    operations: list[dict[str, Any]] = [
        {"op": "add", "path": f"/data/c{i}", "value": chain} for i in range(3)
    ]
    operations += [
        {"op": "move", "from": "/data/c2", "path": f"/data/c1{leaf}/a"},
        {"op": "move", "from": "/data/c1", "path": f"/data/c0{leaf}/a"},
    ]
    response = http.patch(
        f"{REVISIONS}/chained", content=json.dumps(operations), headers=JSON_PATCH
    )
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (422, "Invalid"), status
    assert "exceeded max depth" in status["message"]
    assert http.get(f"{REVISIONS}/chained").json()["data"] == {}


def test_bodies_at_the_limit_are_stored_and_served_every_way(http: httpx.Client) -> None:
    """Every body here nests exactly MAX_DEPTH levels: accepted by every write, and the stored
    object (deeper still with its managedFields) is served by every read."""
    deep = _nested(MAX_DEPTH - 2)  # inside {"data": {"x": ...}}
    at_limit = _revision("at-limit", '{"x": ' + deep + "}")
    assert http.post(REVISIONS, content=at_limit).status_code == 201
    url = f"{REVISIONS}/at-limit?fieldManager=test"
    patches = [
        (MERGE_PATCH, '{"data": {"b": ' + deep + "}}"),
        (STRATEGIC_PATCH, '{"data": {"c": ' + deep + "}}"),
        (JSON_PATCH, '[{"op": "copy", "from": "/data/x", "path": "/data/d"}]'),
        (APPLY_PATCH, at_limit),
    ]
    for headers, body in patches:
        response = http.patch(url, content=body, headers=headers)
        assert response.status_code == 200, (headers, response.text[:300])
    assert http.get(f"{REVISIONS}/at-limit").status_code == 200
    table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    listed = http.get(f"{REVISIONS}?includeObject=Object", headers=table)
    assert listed.status_code == 200
    with http.stream("GET", f"{REVISIONS}?watch=true&timeoutSeconds=1") as stream:
        assert stream.status_code == 200
        events = [json.loads(line) for line in stream.iter_lines() if line]
    assert any(e["object"]["metadata"]["name"] == "at-limit" for e in events)


def test_one_level_past_the_limit_is_refused(http: httpx.Client) -> None:
    body = _revision("past-limit", '{"x": ' + _nested(MAX_DEPTH - 1) + "}")
    _refused_as_too_deep(http.post(REVISIONS, content=body))
