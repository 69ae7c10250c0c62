"""Deprecated API versions over HTTPS (sandbox/deprecations.py): batch/v1beta2 CronJob is served as
an alias of batch/v1 until the control plane reaches v1.38, policy/v1beta2 PodDisruptionBudget
until v1.39. An object written in either version is one object, read and written in both, each
answer in the version asked; every request to a deprecated version carries the API server's
warning and sets `apiserver_requested_deprecated_apis` on /metrics (and for a real Prometheus);
once the control plane reaches the removal, discovery, OpenAPI and the paths forget the version
while the object lives on in its current one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import kubernetes
import orjson
import pytest
from kubernetes import client

from sandbox.server import Sandbox
from tests.support.api_client import MERGE_PATCH, api_client, status_of, warnings_of
from tests.support.prometheus import PROMETHEUS, running_prometheus
from tests.support.waiting import eventually

ALIAS = "/apis/batch/v1beta2/namespaces/default/cronjobs"
CURRENT = "/apis/batch/v1/namespaces/default/cronjobs"
WARNING = (
    "batch/v1beta2 CronJob is deprecated in v1.35+, unavailable in v1.38+; use batch/v1 CronJob"
)
VERSION = "/kubecrew/v1/version"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def cronjob(name: str, *, api_version: str = "batch/v1beta2") -> dict[str, Any]:
    container = {"name": "report", "image": "busybox:1.36"}
    template = {"spec": {"restartPolicy": "OnFailure", "containers": [container]}}
    return {
        "apiVersion": api_version,
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "0 2 * * *",
            "suspend": True,  # no Job runs: the object is what the test is about
            "jobTemplate": {"spec": {"template": template}},
        },
    }


@pytest.fixture
def api(sandbox: Sandbox) -> Iterator[httpx.Client]:
    with api_client(sandbox) as raw:
        yield raw


@pytest.fixture
def batch(sandbox: Sandbox) -> Iterator[client.BatchV1Api]:
    with kubernetes.config.new_client_from_config(str(sandbox.kubeconfig)) as typed:
        yield client.BatchV1Api(typed)


def move_control_plane(api: httpx.Client, version: str) -> None:
    moved = api.put(VERSION, json={"gitVersion": version})
    assert moved.status_code == 200, moved.text


def metric_lines(api: httpx.Client) -> list[str]:
    answer = api.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return [line for line in answer.text.splitlines() if not line.startswith("#")]


def test_an_object_written_in_the_deprecated_version_is_one_object_in_both(
    api: httpx.Client, batch: client.BatchV1Api
) -> None:
    created = api.post(ALIAS, json=cronjob("report"))
    assert created.status_code == 201, created.text
    assert (created.json()["apiVersion"], created.json()["kind"]) == ("batch/v1beta2", "CronJob")
    assert int(created.headers["content-length"]) == len(created.content)

    typed = batch.read_namespaced_cron_job("report", "default")
    assert typed.metadata is not None
    assert typed.metadata.uid == created.json()["metadata"]["uid"]
    assert typed.api_version == "batch/v1"
    batch.patch_namespaced_cron_job("report", "default", {"spec": {"schedule": "0 3 * * *"}})

    read = api.get(f"{ALIAS}/report").json()
    assert (read["apiVersion"], read["spec"]["schedule"]) == ("batch/v1beta2", "0 3 * * *")
    listed = api.get(ALIAS).json()
    assert (listed["apiVersion"], listed["kind"]) == ("batch/v1beta2", "CronJobList")
    assert [item["apiVersion"] for item in listed["items"]] == ["batch/v1beta2"]
    assert api.get(CURRENT).json()["items"][0]["apiVersion"] == "batch/v1"

    patched = api.patch(f"{ALIAS}/report", json={"spec": {"suspend": False}}, headers=MERGE_PATCH)
    assert patched.json()["apiVersion"] == "batch/v1beta2"
    assert batch.read_namespaced_cron_job("report", "default").spec.suspend is False


def test_a_watch_in_the_deprecated_version_streams_objects_in_it(
    api: httpx.Client, batch: client.BatchV1Api
) -> None:
    created = api.post(ALIAS, json=cronjob("nightly")).json()
    since = created["metadata"]["resourceVersion"]
    batch.patch_namespaced_cron_job("nightly", "default", {"spec": {"schedule": "0 4 * * *"}})

    query = {"watch": "true", "resourceVersion": since, "timeoutSeconds": "1"}
    answer = api.get(ALIAS, params=query)

    events = [orjson.loads(line) for line in answer.text.splitlines() if line.strip()]
    assert events, answer.text  # the patch, and whatever the CronJob controller wrote since
    assert {(e["type"], e["object"]["apiVersion"]) for e in events} == {
        ("MODIFIED", "batch/v1beta2")
    }
    assert events[-1]["object"]["spec"]["schedule"] == "0 4 * * *"
    assert warnings_of(answer) == [WARNING]


def test_every_deprecated_request_is_warned_and_recorded_as_the_api_server_does(
    api: httpx.Client,
) -> None:
    assert metric_lines(api) == []  # the family exists once a deprecated API was requested
    api.post(CURRENT, json=cronjob("report", api_version="batch/v1"))
    assert warnings_of(api.get(f"{CURRENT}/report")) == []
    assert metric_lines(api) == []

    assert warnings_of(api.get(f"{ALIAS}/report")) == [WARNING]
    missing = api.get(f"{ALIAS}/absent")
    assert status_of(missing)["reason"] == "NotFound"
    assert warnings_of(missing) == [WARNING]  # errors carry it too
    assert warnings_of(api.get(f"{ALIAS}/report/status")) == [WARNING]

    assert metric_lines(api) == [
        'apiserver_requested_deprecated_apis{group="batch",removed_release="1.38",'
        'resource="cronjobs",subresource="",version="v1beta2"} 1',
        'apiserver_requested_deprecated_apis{group="batch",removed_release="1.38",'
        'resource="cronjobs",subresource="status",version="v1beta2"} 1',
    ]


def test_a_version_not_yet_deprecated_is_served_without_a_warning(api: httpx.Client) -> None:
    move_control_plane(api, "v1.34.0")

    answer = api.get(ALIAS)

    assert answer.status_code == 200 and warnings_of(answer) == []
    assert metric_lines(api) == []


def test_reaching_the_removal_minor_stops_serving_the_version_only(
    api: httpx.Client, batch: client.BatchV1Api
) -> None:
    api.post(ALIAS, json=cronjob("report"))
    assert "batch/v1beta2" in served_group_versions(api)

    move_control_plane(api, "v1.38.0")

    gone = api.get(f"{ALIAS}/report")
    assert gone.status_code == 404
    assert status_of(gone)["message"] == "the server could not find the requested resource"
    assert api.post(ALIAS, json=cronjob("again")).status_code == 404
    assert api.get("/apis/batch/v1beta2").status_code == 404
    batch_group = api.get("/apis/batch").json()
    assert [v["version"] for v in batch_group["versions"]] == ["v1"]
    assert "apis/batch/v1beta2" not in api.get("/openapi/v3").json()["paths"]
    served = served_group_versions(api)
    assert "batch/v1beta2" not in served and "policy/v1beta2" in served  # policy's goes at v1.39
    assert batch.read_namespaced_cron_job("report", "default").api_version == "batch/v1"
    # The gauge tells what was requested since the API server started, not what is served now.
    assert any('version="v1beta2"' in line for line in metric_lines(api))

    move_control_plane(api, "v1.39.0")
    assert "policy/v1beta2" not in served_group_versions(api)


def served_group_versions(api: httpx.Client) -> set[str]:
    """Group/versions as both discovery forms list them (they must agree)."""
    groups = api.get("/apis").json()["groups"]
    listed = {v["groupVersion"] for g in groups for v in g["versions"]}
    aggregated = api.get("/apis", headers={"Accept": AGGREGATED}).json()["items"]
    assert listed == {f"{g['metadata']['name']}/{v['version']}" for g in aggregated
                      for v in g["versions"]}  # fmt: skip
    return listed


@pytest.mark.skipif(
    PROMETHEUS is None and not os.environ.get("CI"),
    reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
)
@pytest.mark.timeout(90)
def test_prometheus_scrapes_the_deprecation_gauge(
    sandbox: Sandbox, api: httpx.Client, tmp_path: Path
) -> None:
    api.get("/apis/policy/v1beta2/poddisruptionbudgets")
    query = 'apiserver_requested_deprecated_apis{group="policy",version="v1beta2"}'
    with running_prometheus(sandbox.kubeconfig, tmp_path / "prometheus") as prom:

        def scraped() -> bool:
            assert prom.value(query) == 1
            return True

        eventually(scraped, timeout=30, what=f"{query} == 1 in Prometheus")
        [series] = prom.query(query)
        assert series["metric"]["removed_release"] == "1.39"
        assert series["metric"]["resource"] == "poddisruptionbudgets"
