"""What a printer is: the columns of one kind and the function that fills a row's cells.

A `Printer` mirrors a Kubernetes table handler. The server always renders every column, wide ones
included (priority > 0); kubectl hides the wide ones unless asked for `-o wide`. Cell functions
take the object and `now` as epoch seconds and return plain JSON values in column order.

Also here: the two generic printers Kubernetes falls back on, `NAME CREATED AT` for built-in kinds
that have no printer of their own, and `NAME AGE`. This module knows nothing of particular kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sandbox.tables.durations import epoch, since

Cells = Callable[[dict[str, Any], float], list[Any]]
RowConditions = Callable[[dict[str, Any]], list[dict[str, str]] | None]


@dataclass(frozen=True)
class Column:
    """One `columnDefinitions[]` entry; `priority` 1 marks a column shown only by `-o wide`."""

    name: str
    description: str
    type: str = "string"
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class Printer:
    columns: tuple[Column, ...]
    cells: Cells
    conditions: RowConditions | None = None


def wide(name: str, description: str, type_: str = "string") -> Column:
    return Column(name, description, type=type_, priority=1)


NAME = Column(
    "Name",
    "The object's name, unique among objects of its kind in its namespace (or cluster).",
    format="name",
)
AGE = Column("Age", "Time elapsed since the object was created (metadata.creationTimestamp).")
CONTAINERS = wide("Containers", "Names of the containers in the pod template.")
IMAGES = wide("Images", "Images of the containers in the pod template.")
SELECTOR = wide("Selector", "The label selector that picks the pods this object manages.")


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = obj.get("metadata") or {}
    return meta


def name_of(obj: dict[str, Any]) -> str:
    return str(metadata(obj).get("name", ""))


def age_of(obj: dict[str, Any], now: float) -> str:
    return since(metadata(obj).get("creationTimestamp"), now)


def _name_and_age(obj: dict[str, Any], now: float) -> list[Any]:
    return [name_of(obj), age_of(obj, now)]


def _name_and_created_at(obj: dict[str, Any], now: float) -> list[Any]:
    # Kubernetes prints the zero time when the timestamp is missing, in RFC 3339 UTC.
    moment = epoch(metadata(obj).get("creationTimestamp"))
    created = (
        datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if moment is not None
        else "0001-01-01T00:00:00Z"
    )
    return [name_of(obj), created]


NAME_AGE = Printer((NAME, AGE), _name_and_age)
NAME_CREATED_AT = Printer(
    (NAME, Column("Created At", "The object's creation time, in RFC 3339.", type="date")),
    _name_and_created_at,
)
