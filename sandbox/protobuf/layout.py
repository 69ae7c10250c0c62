"""Message layouts: which protobuf field number becomes which JSON field, and how.

The tables in `sandbox.protobuf.messages` describe each Kubernetes message in a one-line spec:

    "1 metadata meta.ObjectMeta; 2 replicas int!; 3 command []; 4 data {bytes}; 5 (inline) Ref"

Each `;`-separated entry is `NUMBER JSON-NAME [TYPE][!]`:

* TYPE is `string` (the default), `int`, `bool`, `bytes`, a special type (below), or a message:
  a bare name in the same package, or `alias.Name` for another package (aliases such as `meta`
  and `core` are declared by each `Package`). `[]T` is a repeated field, `{T}` a map keyed by
  string.
* `!` marks a field the Go JSON encoder prints even when it is zero: a pointer (`*int32`,
  `*bool`), or a field without `omitempty`. Without it, zero scalars are left out, as
  `omitempty` does. On a list or map, `!` means "print null when empty", as Go does for a nil
  slice without `omitempty`. On a Time, it means "print null when unset".
* `(inline)` as the name embeds the referenced message's fields in this one, as Go does for
  embedded structs (`LocalObjectReference` inside `SecretKeySelector`).

Special types: `Quantity` (a string), `IntOrString`, `Time`, `MicroTime`, `Duration`, `RawJSON`
(RawExtension and FieldsV1: JSON bytes in field 1) and `Strings` (a message wrapping a string list,
printed as the bare list, such as `ExtraValue`).

This module parses specs and links references; it knows nothing about bytes or HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

Kind = Literal[
    "string",
    "int",
    "bool",
    "bytes",
    "message",
    "Quantity",
    "IntOrString",
    "Time",
    "MicroTime",
    "Duration",
    "RawJSON",
    "Strings",
]
_SCALARS: dict[str, Kind] = {name: name for name in get_args(Kind) if name != "message"}
INLINE = "(inline)"


@dataclass(frozen=True)
class Field:
    number: int
    name: str  # the JSON name; empty for an inlined message
    kind: Kind
    message: str = ""  # full name of the referenced message when kind == "message"
    repeated: bool = False
    mapped: bool = False
    keep: bool = False
    inline: bool = False


@dataclass(frozen=True)
class Package:
    """The messages of one Kubernetes API package, and the kinds clients send as bodies."""

    name: str  # as in the OpenAPI definitions, e.g. "io.k8s.api.apps.v1"
    alias: str  # how other packages refer to it, e.g. "apps"
    messages: Mapping[str, str]
    api_version: str = ""  # the apiVersion of `kinds`; "" matches any (DeleteOptions)
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalog:
    layouts: Mapping[str, Mapping[int, Field]]  # full message name -> fields by number
    kinds: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (apiVersion, kind)

    def root(self, api_version: str, kind: str) -> str | None:
        """The message a body of this apiVersion and kind is encoded as, if we know it."""
        return self.kinds.get((api_version, kind)) or self.kinds.get(("", kind))


class LayoutError(ValueError):
    """A spec in the tables is wrong: a bug in the sandbox, raised when the catalog is built."""


def build_catalog(packages: Iterable[Package]) -> Catalog:
    packages = tuple(packages)
    aliases = {p.alias: p.name for p in packages}
    layouts: dict[str, dict[int, Field]] = {}
    kinds: dict[tuple[str, str], str] = {}
    for package in packages:
        for message, spec in package.messages.items():
            full = f"{package.name}.{message}"
            layouts[full] = _parse(spec, package=package.name, aliases=aliases, where=full)
        for kind in package.kinds:
            kinds[(package.api_version, kind)] = f"{package.name}.{kind}"
    _check_links(layouts, kinds)
    return Catalog(layouts=layouts, kinds=kinds)


def _parse(spec: str, *, package: str, aliases: Mapping[str, str], where: str) -> dict[int, Field]:
    fields: dict[int, Field] = {}
    for entry in filter(None, (e.strip() for e in spec.split(";"))):
        parts = entry.split()
        if len(parts) not in (2, 3) or not parts[0].isdigit():
            raise LayoutError(f"{where}: cannot parse {entry!r}")
        number, name = int(parts[0]), parts[1]
        type_token = parts[2] if len(parts) == 3 else "string"
        if name.endswith("!") and len(parts) == 2:
            name, type_token = name[:-1], "string!"
        if not (name.isidentifier() or name == INLINE):
            raise LayoutError(f"{where}: {name!r} is not a JSON field name")
        if number in fields:
            raise LayoutError(f"{where}: field {number} declared twice")
        fields[number] = _field(number, name, type_token, package=package, aliases=aliases)
    return fields


def _field(
    number: int, name: str, token: str, *, package: str, aliases: Mapping[str, str]
) -> Field:
    keep = token.endswith("!")
    token = token.rstrip("!")
    repeated = token.startswith("[]")
    mapped = token.startswith("{") and token.endswith("}")
    base = (token[2:] if repeated else token[1:-1] if mapped else token) or "string"
    kind: Kind = _SCALARS.get(base, "message")
    target = ""
    if kind == "message":
        alias, _, short = base.rpartition(".")
        target = f"{aliases.get(alias, alias)}.{short}" if alias else f"{package}.{short}"
    inline = name == INLINE
    return Field(
        number=number,
        name="" if inline else name,
        kind=kind,
        message=target,
        repeated=repeated,
        mapped=mapped,
        keep=keep,
        inline=inline,
    )


def _check_links(
    layouts: Mapping[str, Mapping[int, Field]], kinds: Mapping[tuple[str, str], str]
) -> None:
    for owner, fields in layouts.items():
        for f in fields.values():
            if f.kind == "message" and f.message not in layouts:
                raise LayoutError(f"{owner} field {f.number} refers to unknown {f.message}")
            if f.inline and (f.kind != "message" or f.repeated or f.mapped):
                raise LayoutError(f"{owner} field {f.number}: only a single message inlines")
    for root in kinds.values():
        if root not in layouts:
            raise LayoutError(f"kind root {root} has no layout")
