"""YAML bodies (server-side apply, `application/yaml`) are read as kube-apiserver reads them.

PyYAML builds aliases as shared objects, so a few hundred bytes of anchors ("billion laughs")
become 10^9 nodes the moment anything copies or serializes the document; it also builds Python
types JSON has no place for. The sandbox counts what aliases expand to before building
anything, refuses what JSON cannot carry (`.inf`, binary, integers past 64 bits) instead of
turning it into null or a 500, and keeps timestamps as the strings they were written as.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from sandbox.server import Sandbox
from tests.support.api_client import APPLY_PATCH, api_client, status_of

CM = "/api/v1/namespaces/default/configmaps"
REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"


@pytest.fixture(scope="module")
def http(shared_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with api_client(shared_sandbox, timeout=10) as client:
        yield client


def _apply(http: httpx.Client, url: str, manifest: str) -> httpx.Response:
    return http.patch(f"{url}?fieldManager=test", content=manifest.encode(), headers=APPLY_PATCH)


def _configmap(name: str, rest: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{rest}"


def test_alias_bomb_is_refused_at_once(http: httpx.Client) -> None:
    levels = "".join(f"  l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
    manifest = _configmap("bomb", "data:\n  l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + levels)
    started = time.monotonic()
    response = _apply(http, f"{CM}/bomb", manifest)
    assert time.monotonic() - started < 2
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest")
    assert "aliases expand it" in status["message"]


def test_a_few_aliases_still_work(http: httpx.Client) -> None:
    manifest = _configmap("aliases", "metadata2: &m {a: '1'}\ndata: *m\n")
    response = _apply(http, f"{CM}/aliases", manifest)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"a": "1"}


def test_timestamps_stay_strings(http: httpx.Client) -> None:
    manifest = _configmap("stamps", "data:\n  when: 2024-01-01T00:00:00Z\n  day: 2024-01-01\n")
    response = _apply(http, f"{CM}/stamps", manifest)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"when": "2024-01-01T00:00:00Z", "day": "2024-01-01"}


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (".inf", "not a number JSON can carry"),
        (".nan", "not a number JSON can carry"),
        ("!!binary aGVsbG8=", "JSON cannot carry"),
        ("18446744073709551616000", "JSON cannot carry"),
    ],
    ids=["infinity", "nan", "binary", "huge-integer"],
)
def test_values_json_cannot_carry_are_refused(
    http: httpx.Client, value: str, fragment: str
) -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: odd\n"
        f"revision: 1\ndata:\n  a: {value}\n"
    )
    response = _apply(http, f"{REVISIONS}/odd", manifest)
    status = status_of(response)
    assert (response.status_code, status["reason"]) == (400, "BadRequest"), status
    assert fragment in status["message"]
    assert http.get(f"{REVISIONS}/odd").status_code == 404


def test_non_string_keys_become_strings(http: httpx.Client) -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: keys\n"
        "revision: 1\ndata:\n  1: one\n  ~: nothing\n  2.5: half\n"
    )
    response = _apply(http, f"{REVISIONS}/keys", manifest)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"1": "one", "null": "nothing", "2.5": "half"}


def test_self_referencing_alias_is_refused(http: httpx.Client) -> None:
    manifest = _configmap("cycle", "data: &d\n  a: *d\n")
    response = _apply(http, f"{CM}/cycle", manifest)
    assert (response.status_code, status_of(response)["reason"]) == (400, "BadRequest")
