"""The sandbox's API under fuzzing: no request makes it fail, stall, or spoil what it stores.

Hypothesis sends bent manifests (wrong types, huge numbers, deep nesting, long strings, repeated
keys, odd YAML), patches of all four types, and reads with every list and watch parameter. For
each request: never a 5xx, an answer within `DEADLINE` seconds, and every error a well-formed
`Status`. After each run the store is checked as a client would find it: every list still
works, an object no request aimed at is unchanged, and real kubectl can decode every stored
object into its Go type (`kubectl describe` fails on `replicas: "3"`, which `get` would not).

Objects that set controllers working (Pods, Deployments) are written with dryRun=All only,
so a fuzzed but valid `replicas: 2147483647` is judged without starting a pod storm.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sandbox.server import Sandbox
from tests.support import fuzzing as fz
from tests.support.api_client import api_client, deployment, status_of
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

DEADLINE = 5.0  # seconds any one answer may take
# 500 per run in CI; KUBECREW_FUZZ_EXAMPLES=5000 digs deeper on a developer's machine.
EXAMPLES = settings(
    max_examples=int(os.environ.get("KUBECREW_FUZZ_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ANCHOR = "/apis/apps/v1/namespaces/fuzz-anchor/deployments/anchor"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"
NAMES = st.sampled_from(["target", "f0", "f1", "Bad_Name", ""]) | st.from_regex(
    r"[a-z][a-z0-9-]{0,12}", fullmatch=True
)
WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.fuzz.example.com"},
    "spec": {
        "group": "fuzz.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "format": "int32"},
                                    "extra": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


@dataclass(frozen=True)
class World:
    http: httpx.Client
    kubectl: Kubectl
    anchor: dict[str, Any]


@pytest.fixture(scope="module")
def world(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Two namespaces, a CRD, a `target` of every kind to patch, and an anchor nobody touches."""
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("fuzz") / "cache")
    with api_client(shared_sandbox, timeout=DEADLINE) as http:
        for namespace in (fz.NAMESPACE, "fuzz-anchor"):
            http.post("/api/v1/namespaces", json={"metadata": {"name": namespace}})
        crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        assert http.post(crds, json=WIDGETS).status_code == 201
        _wait_for(http, "/apis/fuzz.example.com/v1/namespaces/fuzz/widgets")
        for path, body in fz.manifests("target").values():
            assert http.post(path, json=body).status_code == 201, path
        anchor = deployment("anchor", replicas=2)
        assert http.post(ANCHOR.rsplit("/", 1)[0], json=anchor).status_code == 201
        yield World(http, kubectl, http.get(ANCHOR).json())


def _wait_for(http: httpx.Client, path: str) -> None:
    deadline = time.monotonic() + 10
    while http.get(path).status_code != 200:
        assert time.monotonic() < deadline, f"{path} was never served"
        time.sleep(0.05)


def _answered(response: httpx.Response, started: float) -> None:
    elapsed = time.monotonic() - started
    event(f"answered {response.status_code}")  # the spread, with --hypothesis-show-statistics
    assert response.status_code < 500, response.text[:1000]
    assert elapsed < DEADLINE, f"the answer took {elapsed:.1f} s"
    if response.status_code >= 400:
        status_of(response)


def _intact(world: World) -> None:
    """What a client finds after the run: lists work, the anchor is as it was, and kubectl
    decodes every stored object into its Go type."""
    for path, _ in fz.manifests("x").values():
        listed = world.http.get(path)
        assert listed.status_code == 200, listed.text[:500]
        assert all(item["metadata"]["name"] for item in listed.json()["items"])
    anchor = world.http.get(ANCHOR).json()
    assert anchor["spec"] == world.anchor["spec"]
    assert type(anchor["spec"]["replicas"]) is int
    kinds = "configmaps,secrets,serviceaccounts,services,pods,deployments,controllerrevisions,roles"
    world.kubectl("describe", kinds, "-n", fz.NAMESPACE)
    world.kubectl("describe", "deployments", "-n", "fuzz-anchor")
    world.kubectl("get", "widgets", "-n", fz.NAMESPACE, "-o", "json")


def _write_query(kind: str, given: dict[str, str], dry_run: str) -> dict[str, str]:
    return {**given, "dryRun": "All" if kind in fz.ACTIVE_KINDS else dry_run}


def test_create_and_update_bodies_never_break_the_sandbox(world: World) -> None:
    @EXAMPLES
    @given(
        kind=fz.KINDS,
        name=NAMES,
        data=st.data(),
        params=fz.query(fz.WRITE_QUERY),
        dry_run=fz.DRY_RUN,
        content_type=st.sampled_from(["application/json", "application/yaml", None]),
        replace=st.booleans(),
    )
    def create(
        kind: str,
        name: str,
        data: st.DataObject,
        params: dict[str, str],
        dry_run: str,
        content_type: str | None,
        replace: bool,
    ) -> None:
        path, manifest = fz.manifests("target" if replace else name)[kind]
        doc = data.draw(fz.bent(manifest) | fz.TREES)
        body = data.draw(fz.encoded(doc))
        headers = {"Content-Type": content_type} if content_type else {}
        method, url = ("PUT", f"{path}/target") if replace else ("POST", path)
        started = time.monotonic()
        response = world.http.request(
            method, url, params=_write_query(kind, params, dry_run), content=body, headers=headers
        )
        _answered(response, started)

    create()
    _intact(world)


PATCH_TYPES = st.sampled_from(["json", "merge", "strategic", "apply"])


def test_patches_never_break_the_sandbox(world: World) -> None:
    @EXAMPLES
    @given(
        kind=fz.KINDS,
        patch_type=PATCH_TYPES,
        data=st.data(),
        params=fz.query(fz.WRITE_QUERY),
        dry_run=fz.DRY_RUN,
        subresource=st.sampled_from(["", "", "", "/status", "/scale"]),
    )
    def patch(
        kind: str,
        patch_type: str,
        data: st.DataObject,
        params: dict[str, str],
        dry_run: str,
        subresource: str,
    ) -> None:
        path, manifest = fz.manifests("target")[kind]
        if patch_type == "apply":
            body = data.draw(fz.apply_bodies(kind, "target"))
            params.setdefault("fieldManager", "fuzz")  # required: one in a few draws go without
        else:
            body = data.draw(fz.PATCH_BODIES[patch_type])
        started = time.monotonic()
        response = world.http.patch(
            f"{path}/target{subresource}",
            params=_write_query(kind, params, dry_run),
            content=body,
            headers={"Content-Type": fz.CONTENT_TYPES[patch_type]},
        )
        _answered(response, started)
        if response.status_code < 300 and len(response.content) > 100_000:
            # Keep the targets small, so later examples stay fast.
            world.http.put(f"{path}/target", json=manifest)

    patch()
    _intact(world)


READ_PATHS = st.sampled_from(
    [path for path, _ in fz.manifests("x").values()]
    + [path + "/target" for path, _ in fz.manifests("x").values()]
    + ["/api/v1/pods", "/apis/apps/v1/deployments", "/api/v1/namespaces", "/api/v1/events"]
)


def test_reads_and_watches_never_break_the_sandbox(world: World) -> None:
    @EXAMPLES
    @given(path=READ_PATHS, params=fz.query(fz.QUERY_VALUES), table=st.booleans())
    def read(path: str, params: dict[str, str], table: bool) -> None:
        headers = {"Accept": TABLE} if table else {}
        started = time.monotonic()
        with world.http.stream("GET", path, params=params, headers=headers) as response:
            watching = response.headers.get("content-length") is None
            if not watching:  # a watch streams on: its headers were the answer
                response.read()
            _answered(response, started)

    read()
    _intact(world)
