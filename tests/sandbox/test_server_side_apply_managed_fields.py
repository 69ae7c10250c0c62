"""managedFields bookkeeping outside apply, and its encoding: plain writes (`record_update`) make
the writer own what it set or changed, keep the entry time when nothing changes, honour
managedFields the writer resets, and sort entries as Kubernetes does; field paths print as
Kubernetes prints them and FieldsV1 round-trips.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.patches.managed import from_fields_v1, path_string, to_fields_v1
from tests.sandbox.server_side_apply_objects import (
    T0,
    T1,
    T2,
    T3,
    apply,
    deployment,
    owners,
    scaled,
    update,
)


def test_create_makes_the_writer_own_every_field() -> None:
    created = update(None, deployment(), manager="kubectl-create", now=T0)
    (entry,) = created["metadata"]["managedFields"]
    assert {key: entry[key] for key in ("manager", "operation", "apiVersion", "time")} == {
        "manager": "kubectl-create",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "time": T0,
    }
    # As in Kubernetes, objects and list items that appear are owned as nodes too (".").
    assert entry["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        ".": {},
        'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}},
    }


def test_update_moves_changed_fields_and_drops_removed_ones() -> None:
    created = apply(None, deployment(labels={"app": "web", "tier": "x"}))
    edited = scaled(created, 4)
    del edited["metadata"]["labels"]["tier"]
    result = update(created, edited, manager="kubectl-edit")
    assert owners(result)["kubectl-edit"] == {".spec.replicas"}
    assert ".spec.replicas" not in owners(result)["kubectl"]
    assert ".metadata.labels.tier" not in owners(result)["kubectl"]


def test_update_that_changes_nothing_keeps_the_entry_time() -> None:
    created = update(None, deployment(), manager="kubectl-create", now=T0)
    again = update(created, copy.deepcopy(created), manager="kubectl-create", now=T3)
    assert again == created


def test_managed_fields_sent_by_the_writer_replace_the_live_ones() -> None:
    created = apply(None, deployment())
    reset = copy.deepcopy(created)
    reset["metadata"]["managedFields"] = [{}]
    result = update(created, reset, manager="kubectl-edit")
    assert "managedFields" not in result["metadata"]


def test_entries_are_sorted_apply_first_then_by_time() -> None:
    created = update(None, deployment(), manager="zeta", now=T0)
    applied = apply(
        created,
        {**deployment(), "metadata": {"name": "web", "labels": {"x": "1"}}},
        manager="alpha",
        now=T1,
    )
    scaled_obj = update(applied, scaled(applied, 9), manager="beta", now=T2)
    entries = scaled_obj["metadata"]["managedFields"]
    assert [(e["operation"], e["manager"]) for e in entries] == [
        ("Apply", "alpha"),
        ("Update", "zeta"),
        ("Update", "beta"),
    ]


# --- field paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "printed"),
    [
        pytest.param(("f:spec", "f:replicas"), ".spec.replicas", id="fields"),
        pytest.param(
            ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"),
            '.spec.ports[port=80,protocol="TCP"].name',
            id="keyed-item",
        ),
        pytest.param(
            ("f:metadata", "f:finalizers", 'v:"a.io/x"'),
            '.metadata.finalizers[="a.io/x"]',
            id="set-item",
        ),
        pytest.param(("f:items", "i:3"), ".items[3]", id="index"),
    ],
)
def test_paths_print_as_kubernetes_prints_them(path: tuple[str, ...], printed: str) -> None:
    assert path_string(path) == printed


elements = st.one_of(
    st.sampled_from(["f:spec", "f:a", "f:b", 'k:{"name":"x"}', 'v:"y"', "i:0", "i:10"]),
)
field_paths = st.lists(elements, min_size=1, max_size=4).map(tuple)


@settings(max_examples=200, deadline=None)
@given(paths=st.sets(field_paths, max_size=8))
def test_fields_v1_round_trips(paths: set[tuple[str, ...]]) -> None:
    assert from_fields_v1(to_fields_v1(paths)) == paths
