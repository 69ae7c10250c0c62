"""Tables for custom resources, built from the CRD's `additionalPrinterColumns`.

As in Kubernetes: NAME comes first, then each declared column; a CRD that declares none gets a
single AGE column (type `date` on `.metadata.creationTimestamp`); AGE is not added otherwise. The
first match of a column's JSONPath fills its cell: `string` columns print scalars as text and
objects or lists as compact JSON, `integer`/`number`/`boolean` keep JSON types, `date` columns
print as an age. A missing value is a null cell (kubectl shows `<none>`). A column whose JSONPath
does not parse ends the list, since Kubernetes keeps only the columns before it.

Paths are compiled once per path text, never per row. Knows nothing of storage or the CRD object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sandbox.tables.durations import epoch, human_duration
from sandbox.tables.jsonpath import JsonPath, compile_path
from sandbox.tables.printer import AGE, NAME, Column, Printer, name_of

_DEFAULT_COLUMNS = (
    {
        "name": AGE.name,
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
        "description": AGE.description,
    },
)
# Go's encoding/json escapes these for safe embedding in HTML; kubectl shows the escapes.
_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def custom_printer(printer_columns: Sequence[Mapping[str, Any]]) -> Printer:
    columns: list[Column] = [NAME]
    paths: list[tuple[str, JsonPath]] = []
    for declared in printer_columns or _DEFAULT_COLUMNS:
        json_path = str(declared.get("jsonPath", ""))
        try:
            path = compile_path(json_path)
        except ValueError:
            break
        column = _column(declared, json_path)
        columns.append(column)
        paths.append((column.type, path))

    def cells(obj: dict[str, Any], now: float) -> list[Any]:
        return [name_of(obj), *(_cell(kind, path.find(obj), now) for kind, path in paths)]

    return Printer(tuple(columns), cells)


def _column(declared: Mapping[str, Any], json_path: str) -> Column:
    description = declared.get("description") or (
        f"Custom resource definition column (in JSONPath format): {json_path}"
    )
    return Column(
        str(declared.get("name", "")),
        str(description),
        type=str(declared.get("type", "string")),
        priority=int(declared.get("priority") or 0),
        format=str(declared.get("format") or ""),
    )


def _cell(kind: str, found: list[Any], now: float) -> Any:
    if not found or found[0] is None:
        return None
    value = found[0]
    if kind == "string":
        return text(value)
    if kind == "date":
        return _age(value, now)
    return _typed(kind, value)


def _typed(kind: str, value: Any) -> Any:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "integer" and is_number:
        return int(value)
    if kind == "number" and is_number:
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    return None


def _age(value: Any, now: float) -> Any:
    if not isinstance(value, str):
        return None
    if value in ("", "null"):
        return "<unknown>"
    moment = epoch(value)
    return "<invalid>" if moment is None else human_duration(now - moment)


def text(value: Any) -> str:
    """A JSON value as Kubernetes' JSONPath printer writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # Go prints whole floats without a fraction and uses exponents only from 1e21.
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    encoded = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return encoded.translate(_HTML_ESCAPES)
