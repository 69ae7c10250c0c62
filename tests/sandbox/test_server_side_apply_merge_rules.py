"""Server-side apply merge rules by list and map type, as the schema declares them: keyed lists
keep live items and append new ones, set items are owned one by one, atomic maps and lists are
replaced whole, granular maps let managers own separate keys, and Service ports are keyed by port
and defaulted protocol.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.server_side_apply_objects import (
    CONFIGMAP,
    SERVICE,
    T0,
    T2,
    apply,
    containers_of,
    deployment,
    owners,
    update,
)


def test_keyed_list_keeps_live_items_and_appends_new_ones() -> None:
    live = apply(
        None, deployment(containers=[{"name": "a", "image": "1"}, {"name": "b", "image": "1"}])
    )
    config = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "2"}, {"name": "a", "image": "3"}]}
            }
        },
    }
    result = apply(live, config, manager="other", force=True)
    assert containers_of(result) == [
        {"name": "c", "image": "2"},
        {"name": "a", "image": "3"},
        {"name": "b", "image": "1"},
    ]


def test_set_list_items_are_owned_separately() -> None:
    first = apply(None, {**deployment(), "metadata": {"name": "web", "finalizers": ["a.io/x"]}})
    second = apply(
        first,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "finalizers": ["b.io/y"]},
        },
        manager="other",
    )
    assert second["metadata"]["finalizers"] == ["a.io/x", "b.io/y"]
    assert owners(second)["other"] == {'.metadata.finalizers[="b.io/y"]'}


@pytest.mark.parametrize(
    ("path", "live_value", "config_value"),
    [
        pytest.param(
            ("spec", "selector"),
            {"matchLabels": {"app": "web", "x": "y"}},
            {"matchLabels": {"app": "web"}},
            id="atomic-map",
        ),
        pytest.param(
            ("spec", "template", "spec", "containers", 0, "args"),
            ["-a", "-b"],
            ["-c"],
            id="atomic-list",
        ),
    ],
)
def test_atomic_values_are_replaced_whole(
    path: tuple[str | int, ...], live_value: Any, config_value: Any
) -> None:
    live, config = deployment(), deployment()
    for obj, value in ((live, live_value), (config, config_value)):
        node: Any = obj
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    result: Any = apply(update(None, live, manager="creator", now=T0), config, force=True)
    for step in path:
        result = result[step]
    assert result == config_value


def test_granular_maps_let_managers_own_separate_keys() -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    first = apply(None, {**configmap, "data": {"a": "1"}}, manager="one", schema=CONFIGMAP)
    both = apply(first, {**configmap, "data": {"b": "2"}}, manager="two", schema=CONFIGMAP)
    assert both["data"] == {"a": "1", "b": "2"}
    assert owners(both) == {"one": {".data.a"}, "two": {".data.b"}}


def test_service_ports_are_keyed_by_port_and_defaulted_protocol() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}]},
    }
    created = apply(None, service, schema=SERVICE)
    fields = created["metadata"]["managedFields"][0]["fieldsV1"]
    assert list(fields["f:spec"]["f:ports"]) == ['k:{"port":80,"protocol":"TCP"}']
    dropped = apply(created, {**service, "spec": {"ports": []}}, schema=SERVICE, now=T2)
    assert dropped["spec"]["ports"] == []
