"""Server-side Tables for custom resources: CRD additionalPrinterColumns filled from JSONPath
and typed per column, the Name/Age default, and the JSONPath subset the columns may use.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.registry import ResourceType
from sandbox.tables import render_table
from sandbox.tables.jsonpath import compile_path
from tests.sandbox.table_objects import NOW, Json, ago, meta

WIDGET_COLUMNS = (
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {
        "name": "Ready",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
        "description": "Whether the widget is ready.",
    },
    {"name": "Hosts", "type": "string", "jsonPath": ".spec.hosts", "priority": 1},
    {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
    {"name": "Ratio", "type": "number", "jsonPath": ".status.ratio"},
    {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)
WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": meta("w1", age=51 * 3600),
    "spec": {"size": 3, "hosts": ["a.example", "b<c>"], "paused": False},
    "status": {
        "ratio": 2,
        "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}],
    },
}


def widget_type(columns: tuple[dict[str, Any], ...]) -> ResourceType:
    return ResourceType(
        group="example.com",
        version="v1",
        plural="widgets",
        kind="Widget",
        namespaced=True,
        printer_columns=columns,
        custom=True,
    )


def test_crd_printer_columns_fill_cells_from_jsonpath() -> None:
    table = render_table(widget_type(WIDGET_COLUMNS), [WIDGET], now=NOW)
    definitions = {c["name"]: c for c in table["columnDefinitions"]}
    assert list(definitions) == [
        "Name",
        "Size",
        "Ready",
        "Hosts",
        "Paused",
        "Ratio",
        "Missing",
        "Age",
    ]
    assert (
        definitions["Hosts"]["priority"],
        definitions["Ready"]["description"],
        definitions["Size"]["description"],
    ) == (
        1,
        "Whether the widget is ready.",
        "Custom resource definition column (in JSONPath format): .spec.size",
    )
    assert table["rows"][0]["cells"] == [
        "w1",
        3,
        "True",
        '["a.example","b\\u003cc\\u003e"]',
        False,
        2.0,
        None,
        "2d3h",
    ]


def test_crd_without_printer_columns_shows_name_and_age() -> None:
    table = render_table(widget_type(()), [WIDGET], now=NOW)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Age", "date"),
    ]
    assert table["rows"][0]["cells"] == ["w1", "2d3h"]


def test_crd_columns_stop_at_an_unparsable_jsonpath() -> None:
    columns = (
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Bad", "type": "string", "jsonPath": ".spec[?(@.x =~ /y/)]"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
    )
    table = render_table(widget_type(columns), [WIDGET], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size"]
    assert table["rows"][0]["cells"] == ["w1", 3]


@pytest.mark.parametrize(
    ("column_type", "value", "expected"),
    [
        pytest.param("integer", 2.9, 2, id="integer-truncates-float"),
        pytest.param("integer", "3", None, id="integer-rejects-string"),
        pytest.param("integer", True, None, id="integer-rejects-bool"),
        pytest.param("string", 1.5, "1.5", id="string-of-float"),
        pytest.param("string", 3.0, "3", id="string-of-whole-float"),
        pytest.param("string", True, "true", id="string-of-bool"),
        pytest.param("string", {"b": 1, "a": [1]}, '{"a":[1],"b":1}', id="string-of-object"),
        pytest.param("date", "", "<unknown>", id="date-empty"),
        pytest.param("date", "yesterday", "<invalid>", id="date-invalid"),
        pytest.param("date", ago(45 * 86400), "45d", id="date-age"),
        pytest.param("boolean", "true", None, id="boolean-rejects-string"),
    ],
)
def test_crd_cells_follow_the_column_type(column_type: str, value: Any, expected: Any) -> None:
    columns = ({"name": "V", "type": column_type, "jsonPath": ".spec.value"},)
    obj = {"metadata": meta("w"), "spec": {"value": value}}
    assert render_table(widget_type(columns), [obj], now=NOW)["rows"][0]["cells"][1] == expected


DOC: Json = {
    "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"items": [{"n": 1, "tag": "a"}, {"n": 2, "tag": "b"}, {"n": 3}], "empty": None},
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(".metadata.name", ["x"], id="field"),
        pytest.param("{.metadata.name}", ["x"], id="braces"),
        pytest.param("$.metadata.name", ["x"], id="dollar"),
        pytest.param(".metadata.labels.app\\.kubernetes\\.io/name", ["web"], id="escaped-dots"),
        pytest.param(".metadata.labels['app.kubernetes.io/name']", ["web"], id="quoted-key"),
        pytest.param(
            ".metadata.labels['app\\.kubernetes\\.io/name']", ["web"], id="quoted-escaped-key"
        ),
        pytest.param(".spec.items[1].n", [2], id="index"),
        pytest.param(".spec.items[-1].n", [3], id="negative-index"),
        pytest.param(".spec.items[5].n", [], id="index-out-of-range"),
        pytest.param(".spec.items[0:2].n", [1, 2], id="slice"),
        pytest.param(".spec.items[*].tag", ["a", "b"], id="wildcard-skips-missing"),
        pytest.param(".spec.items[?(@.n > 1)].n", [2, 3], id="filter-greater"),
        pytest.param(".spec.items[?(@.tag != 'a')].n", [2], id="filter-not-equal-skips-missing"),
        pytest.param(".spec.items[?(@.tag)].n", [1, 2], id="filter-exists"),
        pytest.param(
            '.status.conditions[?(@.type=="Synced")].status', ["False"], id="filter-condition"
        ),
        pytest.param('.status.conditions[?(@.type=="Gone")].status', [], id="filter-no-match"),
        pytest.param(
            "..status",
            [{"conditions": DOC["status"]["conditions"]}, "True", "False"],
            id="recursive",
        ),
        pytest.param(".spec.empty", [None], id="null-value"),
        pytest.param(".nothing.here", [], id="missing"),
    ],
)
def test_jsonpath_subset(path: str, expected: list[Any]) -> None:
    assert compile_path(path).find(DOC) == expected


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(".spec[", id="unclosed-bracket"),
        pytest.param(".spec['a", id="unterminated-string"),
        pytest.param(".spec[a]", id="bad-index"),
        pytest.param(".spec[?(@.a == b)]", id="bare-word-operand"),
        pytest.param(".spec..", id="empty-name"),
    ],
)
def test_jsonpath_rejects_what_it_cannot_parse(path: str) -> None:
    with pytest.raises(ValueError, match="JSONPath"):
        compile_path(path)
