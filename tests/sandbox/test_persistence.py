"""`--state FILE`: the store survives a restart; a crash (SIGKILL) loses no acknowledged write."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import kubernetes
import pytest
from kubernetes import client, watch

from sandbox.clock import Clock
from sandbox.cluster import Cluster


def start(home: Path, state: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox.server", "--home", str(home), "--state", str(state)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert re.search(r"ready at https://", line), line
    return process


def stop(process: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> int:
    process.send_signal(sig)
    code = process.wait(timeout=15)
    if process.stdout is not None:
        process.stdout.close()
    return code


@pytest.fixture
def server_paths(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield tmp_path / "home", tmp_path / "state.sqlite"


def test_acknowledged_writes_survive_sigkill(server_paths: tuple[Path, Path]) -> None:
    home, state = server_paths
    first = start(home, state)
    try:
        with kubernetes.config.new_client_from_config(str(home / "kubeconfig")) as api:
            core = client.CoreV1Api(api)
            core.create_namespace({"metadata": {"name": "durable"}})
            last_rv = ""
            for i in range(50):
                made = core.create_namespaced_config_map(
                    "durable", {"metadata": {"name": f"c{i}"}, "data": {"i": str(i)}}
                )
                last_rv = made.metadata.resource_version
            core.patch_namespaced_config_map("c7", "durable", {"data": {"i": "patched"}})
            core.delete_namespaced_config_map("c8", "durable")
    finally:
        stop(first, signal.SIGKILL)

    second = start(home, state)
    try:
        with kubernetes.config.new_client_from_config(str(home / "kubeconfig")) as api:
            core = client.CoreV1Api(api)
            items = core.list_namespaced_config_map("durable").items
            data = {i.metadata.name: i.data["i"] for i in items if i.metadata.name != "default"}
            assert len(data) == 49
            assert data["c7"] == "patched" and "c8" not in data
            listed = core.list_namespaced_config_map("durable").metadata.resource_version
            after = core.create_namespaced_config_map("durable", {"metadata": {"name": "new"}})
            assert int(after.metadata.resource_version) > int(last_rv)
            events = [
                (e["type"], e["object"].metadata.name)
                for e in watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "durable",
                    resource_version=listed,
                    timeout_seconds=1,
                )
            ]
            assert events == [("ADDED", "new")]
    finally:
        assert stop(second) == 0


def test_custom_resource_types_come_back_after_restart(server_paths: tuple[Path, Path]) -> None:
    home, state = server_paths
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
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
                                    "properties": {"size": {"type": "integer"}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    process = start(home, state)
    try:
        with kubernetes.config.new_client_from_config(str(home / "kubeconfig")) as api:
            client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
            client.CustomObjectsApi(api).create_namespaced_custom_object(
                "example.com",
                "v1",
                "default",
                "widgets",
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Widget",
                    "metadata": {"name": "w"},
                    "spec": {"size": 3},
                },
            )
    finally:
        stop(process)
    process = start(home, state)
    try:
        with kubernetes.config.new_client_from_config(str(home / "kubeconfig")) as api:
            widget = client.CustomObjectsApi(api).get_namespaced_custom_object(
                "example.com", "v1", "default", "widgets", "w"
            )
            assert widget["spec"] == {"size": 3}
    finally:
        stop(process)


def test_a_restarted_sandbox_never_goes_back_in_time(tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    start = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    first = Cluster(admin_token="t", signing_key=b"k" * 32, state=state, clock=Clock(start, rate=0))
    first.clock.advance(timedelta(hours=5))  # an accelerated run lived five hours
    first.tick()
    first.close()
    again = Cluster(admin_token="t", signing_key=b"k" * 32, state=state, clock=Clock(start, rate=0))
    assert again.clock.now() >= start + timedelta(hours=5)
    again.close()
