"""How a command prints what it lists or shows: `-o table|json|yaml`, kubectl's flag.

Every list and show command takes `OutputOption` and hands `emit` its records with the way a
person reads them (`table`: the command's own lines); `json` and `yaml` print the records as
data. A record keeps its model's own field names (a pydantic model dumped in JSON mode, a
dataclass as its fields, times in ISO 8601), so one thing reads the same in every command: an
approval request has the same fields in `approvals list`, `approvals show`, `proposals show`
and `status`. Data goes out with plain writes, never through Rich, so nothing in it is taken
for markup or an emoji code; YAML is written by the kubectl-like writer `policy list` uses, so
a multi-line answer reads as a block. This module knows no command and no record.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any

import typer

from kubecrew.cli.options import out
from kubecrew.terminal import print_failure

USAGE = 2  # a bad choice exits as every other usage error does


class Format(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


# `policy check -o text` came before every command spoke alike: old scripts keep working.
_ALIASES = {"text": Format.table}


def _chosen(given: str | Format) -> Format:
    if isinstance(given, Format):  # the default
        return given
    chosen = _ALIASES.get(given) or next((f for f in Format if f.value == given), None)
    if chosen is None:
        print_failure(f"-o {given}: choose table, json or yaml")
        raise typer.Exit(USAGE)
    return chosen


OutputOption = Annotated[
    Format,
    typer.Option(
        "--output",
        "-o",
        parser=_chosen,
        help="table for people; json or yaml for scripts (the same field names in every command).",
    ),
]


def emit(output: Format, data: Any, lines: Iterable[str], *, markup: bool = False) -> None:
    """`data` (a record, or a list of records) as JSON or YAML on stdout, or for a person its
    `lines` (Rich markup with `markup`). A generator of lines is read only for the table."""
    if output is Format.table:
        for line in lines:
            out(line, markup=markup)
    elif output is Format.json:
        typer.echo(json.dumps(data, indent=2, default=_jsonable))
    else:
        from mcp_servers.common.yamltext import dump

        typer.echo(dump(_json_types(data)), nl=False)


def _json_types(data: Any) -> Any:
    """`data` as JSON's own types (dicts, lists, strings, numbers, booleans, None)."""
    return json.loads(json.dumps(data, default=_jsonable))


def _jsonable(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model, with its own field names and serialisers
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)  # a path, an enum member: its text
