"""The server-side Table envelope and its shared cells: human-readable ages, the Table's list
metadata and column definitions, includeObject modes, odd timestamps, inputs left untouched, and
a 5,000-pod list rendered whole.
"""

from __future__ import annotations

import copy

import pytest

from sandbox.errors import BadRequest
from sandbox.tables import human_duration, render_table
from tests.sandbox.table_objects import (
    NOW,
    READY,
    TYPES,
    Json,
    ago,
    meta,
    pod,
    render,
    row_by_name,
    running,
    waiting,
)

# --- human_duration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        pytest.param(-5, "<invalid>", id="future-beyond-skew"),
        pytest.param(-1.5, "0s", id="one-second-skew"),
        pytest.param(0, "0s", id="zero"),
        pytest.param(5.9, "5s", id="truncates-fraction"),
        pytest.param(119, "119s", id="seconds-below-2m"),
        pytest.param(120, "2m", id="two-minutes"),
        pytest.param(200, "3m20s", id="minutes-and-seconds"),
        pytest.param(599, "9m59s", id="just-below-10m"),
        pytest.param(630, "10m", id="ten-minutes-drops-seconds"),
        pytest.param(3 * 3600 - 1, "179m", id="just-below-3h"),
        pytest.param(3 * 3600, "3h", id="three-hours"),
        pytest.param(3 * 3600 + 300, "3h5m", id="hours-and-minutes"),
        pytest.param(8 * 3600 + 300, "8h", id="eight-hours-drops-minutes"),
        pytest.param(48 * 3600 - 1, "47h", id="just-below-2d"),
        pytest.param(51 * 3600, "2d3h", id="days-and-hours"),
        pytest.param(8 * 86400 + 3 * 3600, "8d", id="eight-days-drops-hours"),
        pytest.param(45 * 86400, "45d", id="forty-five-days"),
        pytest.param(730 * 86400 - 1, "729d", id="just-below-2y"),
        pytest.param(730 * 86400, "2y", id="two-years"),
        pytest.param(740 * 86400, "2y10d", id="years-and-days"),
        pytest.param((8 * 365 + 10) * 86400, "8y", id="eight-years-drops-days"),
    ],
)
def test_human_duration_matches_kubernetes_breakpoints(seconds: float, expected: str) -> None:
    assert human_duration(seconds) == expected


# --- the Table envelope --------------------------------------------------------------------


def test_table_envelope_carries_list_metadata_and_full_column_definitions() -> None:
    table = render(
        "",
        "ConfigMap",
        {"metadata": meta("a")},
        list_meta={"resourceVersion": "42", "continue": "x"},
    )
    assert (table["kind"], table["apiVersion"], table["metadata"]) == (
        "Table",
        "meta.k8s.io/v1",
        {"resourceVersion": "42", "continue": "x"},
    )
    assert table["columnDefinitions"][0] == {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": table["columnDefinitions"][0]["description"],
        "priority": 0,
    }
    assert all(
        set(c) == {"name", "type", "format", "description", "priority"} and c["description"]
        for c in table["columnDefinitions"]
    )


def test_empty_list_renders_columns_and_no_rows() -> None:
    table = render_table(TYPES[("apps", "Deployment")], [], now=NOW)
    assert (table["rows"], table["metadata"], len(table["columnDefinitions"])) == ([], {}, 8)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(
            "Metadata",
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta("cfg"),
            },
            id="metadata",
        ),
        pytest.param(
            "Object",
            {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta("cfg"), "data": {"k": "v"}},
            id="object",
        ),
        pytest.param("None", None, id="none"),
    ],
)
def test_include_object_modes(mode: str, expected: Json | None) -> None:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta("cfg"), "data": {"k": "v"}}
    assert render("", "ConfigMap", obj, include_object=mode)["rows"][0]["object"] == expected


def test_unknown_include_object_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match='unrecognized includeObject value: "Everything"'):
        render("", "ConfigMap", {"metadata": meta("cfg")}, include_object="Everything")


def test_naive_now_is_taken_as_utc() -> None:
    table = render_table(
        TYPES[("", "ConfigMap")], [{"metadata": meta("a", age=200)}], now=NOW.replace(tzinfo=None)
    )
    assert row_by_name(table)["Age"] == "3m20s"


@pytest.mark.parametrize(
    ("created", "expected"),
    [
        pytest.param(None, "<unknown>", id="missing"),
        pytest.param("not-a-time", "<unknown>", id="unreadable"),
        pytest.param("2026-12-02T11:59:59.123456Z", "0s", id="fractional-seconds"),
    ],
)
def test_age_of_missing_or_odd_timestamps(created: str | None, expected: str) -> None:
    obj = {"metadata": {"name": "a", **({"creationTimestamp": created} if created else {})}}
    assert row_by_name(render("", "ConfigMap", obj))["Age"] == expected


def test_rendering_never_modifies_the_objects() -> None:
    objects = [pod(conditions=READY), pod(phase="Pending", init=[waiting("m", "PodInitializing")])]
    objects[1]["metadata"]["deletionTimestamp"] = ago(3)
    before = copy.deepcopy(objects)
    for mode in ("Metadata", "Object", "None"):
        render_table(TYPES[("", "Pod")], objects, include_object=mode, now=NOW)
    assert objects == before


# --- scale ---------------------------------------------------------------------------------


def test_rendering_5000_pods_keeps_every_row() -> None:
    """Speed is measured by `make bench` (list of 5,000 pods as a Table), not asserted here."""
    pods = []
    for i in range(5000):
        obj = pod(
            containers=[running("app", restarts=1), running("log")],
            conditions=READY,
            podIP=f"10.0.{i // 250}.{i % 250}",
        )
        obj["status"]["containerStatuses"][0]["lastState"] = {
            "terminated": {"exitCode": 1, "finishedAt": ago(300)}
        }
        obj["metadata"]["name"] = f"web-{i}"
        pods.append(obj)
    table = render_table(TYPES[("", "Pod")], pods, now=NOW)
    assert len(table["rows"]) == 5000
    assert table["rows"][-1]["cells"][:4] == ["web-4999", "2/2", "Running", "1 (5m ago)"]
