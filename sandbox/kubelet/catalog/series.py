"""A repository's tags written by release series, as its publisher forms them.

A real repository tags each release in several forms and variants: nginx 1.27.3 is `1.27.3`,
`1.27` and `1`, each also `-alpine`, `-perl`, `-alpine-slim`...; listed one by one that is
thousands of tags per repository. A `TagSet` holds them as the publisher's rules: `Group`s of
`Series` (`1.27.0-5`: patches 0 to 5 of 1.27), the forms every release of a group is tagged
with (`full` 1.27.3, `minor` 1.27, `major` 1), the variant suffixes every form carries
(`""` for the bare tag), an optional prefix (`v1.31.0`), and literal tags (`latest`,
`bookworm`). `contains` parses a tag against the groups without expanding them; `tags` expands
them, for a tag list. `compact` is the inverse, for the refresh script: any set of tags to
groups that expand to exactly that set, the rest kept literal.

Strings in, strings out: this module knows nothing of registries, images or the sandbox.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast

Form = Literal["full", "minor", "major"]
FORMS: tuple[Form, ...] = ("full", "minor", "major")
_VERSION = re.compile(r"^(v?)(\d+(?:\.\d+)*)(.*)$")


@dataclass(frozen=True)
class Series:
    """Releases `stem.first` to `stem.last` (`1.27.0-5`), or the one release `stem.first`."""

    stem: str  # "1.27"; "" for a one-number version such as "21"
    first: str  # "0"; a single release keeps its last component as written ("04")
    last: str

    @classmethod
    def parse(cls, text: str) -> Series:
        stem, _, tail = text.rpartition(".")
        first, dash, last = tail.partition("-")
        if not first.isdigit() or (dash and (not last.isdigit() or int(last) < int(first))):
            raise ValueError(f"{text!r} is no series: write 1.27.0-5, 1.24.0, 22.04 or 21")
        if stem and not all(part.isdigit() for part in stem.split(".")):
            raise ValueError(f"{text!r} is no series: its stem must be dotted numbers")
        return cls(stem, first, last if dash else first)

    def releases(self) -> Iterator[str]:
        if self.first == self.last:
            yield _join(self.stem, self.first)
            return
        for patch in range(int(self.first), int(self.last) + 1):
            yield _join(self.stem, str(patch))

    def holds(self, patch: str) -> bool:
        if self.first == self.last:
            return patch == self.first
        return _canonical(patch) and self._range(int(patch))

    def _range(self, patch: int) -> bool:
        return int(self.first) <= patch <= int(self.last)

    @property
    def major(self) -> str:
        return self.stem.split(".")[0] if self.stem else ""

    def __str__(self) -> str:
        tail = self.first if self.first == self.last else f"{self.first}-{self.last}"
        return _join(self.stem, tail)


@dataclass(frozen=True)
class Group:
    """Series tagged alike: every release in each of `forms`, each form with every variant."""

    series: tuple[Series, ...]
    forms: frozenset[Form] = frozenset({"full"})
    variants: tuple[str, ...] = ("",)
    prefix: str = ""

    def contains(self, tag: str) -> bool:
        for variant in self._suffixes:
            if variant and not tag.endswith(variant):
                continue
            base = tag[: len(tag) - len(variant)]
            if base.startswith(self.prefix) and self._holds(base[len(self.prefix) :]):
                return True
        return False

    def tags(self) -> Iterator[str]:
        for version in self._versions():
            for variant in self.variants:
                yield f"{self.prefix}{version}{variant}"

    def _versions(self) -> Iterator[str]:
        for series in self.series:
            if "full" in self.forms:
                yield from series.releases()
            if "minor" in self.forms and series.stem:
                yield series.stem
            if "major" in self.forms and series.major:
                yield series.major

    def _holds(self, version: str) -> bool:
        stem, _, patch = version.rpartition(".")
        if "full" in self.forms and any(s.holds(patch) for s in self._by_stem.get(stem, ())):
            return True
        if "minor" in self.forms and version in self._by_stem:
            return True
        return "major" in self.forms and version in self._majors

    @cached_property
    def _suffixes(self) -> tuple[str, ...]:
        return tuple(sorted(self.variants, key=len, reverse=True))

    @cached_property
    def _by_stem(self) -> dict[str, list[Series]]:
        found: dict[str, list[Series]] = defaultdict(list)
        for series in self.series:
            found[series.stem].append(series)
        return dict(found)

    @cached_property
    def _majors(self) -> frozenset[str]:
        return frozenset(s.major for s in self.series if s.major)

    @classmethod
    def from_data(cls, raw: Mapping[str, Any]) -> Group:
        unknown = set(raw) - {"series", "forms", "variants", "prefix"}
        if unknown:
            raise ValueError(f"unknown group fields {sorted(unknown)}")
        forms = _words(raw.get("forms", "full"), "forms")
        if not forms or not set(forms) <= set(FORMS):
            raise ValueError(f"forms {forms} must be among {', '.join(FORMS)}")
        variants = raw.get("variants", [""])
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise ValueError(f"variants must be a list of quoted strings, not {variants!r}")
        return cls(
            series=tuple(Series.parse(s) for s in _words(raw["series"], "series")),
            forms=frozenset(cast(Form, f) for f in forms),
            variants=tuple(variants),
            prefix=str(raw.get("prefix", "")),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"series": " ".join(str(s) for s in self.series)}
        if self.forms != {"full"}:
            data["forms"] = " ".join(f for f in FORMS if f in self.forms)
        if self.variants != ("",):
            data["variants"] = list(self.variants)
        if self.prefix:
            data["prefix"] = self.prefix
        return data


@dataclass(frozen=True)
class TagSet:
    """All the tags of one repository: literal ones and the expansion of its groups."""

    literal: frozenset[str] = frozenset()
    groups: tuple[Group, ...] = field(default=())

    def contains(self, tag: str) -> bool:
        return tag in self.literal or any(group.contains(tag) for group in self.groups)

    def tags(self) -> frozenset[str]:
        expanded = set(self.literal)
        for group in self.groups:
            expanded.update(group.tags())
        return frozenset(expanded)

    @classmethod
    def from_data(cls, raw: Mapping[str, Any]) -> TagSet:
        groups = raw.get("groups") or []
        return cls(
            literal=frozenset(_words(raw.get("tags", ""), "tags")),
            groups=tuple(Group.from_data(g) for g in groups),
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.literal:
            data["tags"] = " ".join(sorted(self.literal, key=_tag_order))
        if self.groups:
            data["groups"] = [group.to_data() for group in self.groups]
        return data


def compact(tags: Iterable[str]) -> TagSet:
    """The groups that expand to exactly `tags` (the rest literal): releases whose patches
    carry the same variants form one group; the minor and major forms join it when every
    series and variant of the group has them."""
    given = set(tags)
    matches = [_VERSION.match(tag) for tag in given]
    versions = [(m.group(1), m.group(2), m.group(3)) for m in matches if m]
    depth: dict[str, int] = defaultdict(int)
    for prefix, version, _ in versions:
        depth[prefix] = max(depth[prefix], version.count(".") + 1)
    carried: dict[tuple[str, str], set[str]] = defaultdict(set)  # release -> its variants
    for prefix, version, variant in versions:
        carried[(prefix, version)].add(variant)
    releases: dict[tuple[str, str], dict[str, frozenset[str]]] = defaultdict(dict)
    for (prefix, version), variants in carried.items():
        if version.count(".") + 1 >= max(depth[prefix], 2) or depth[prefix] == 1:
            stem, _, patch = version.rpartition(".")
            releases[(prefix, stem)][patch] = frozenset(variants)
    runs: dict[tuple[str, frozenset[str]], list[Series]] = defaultdict(list)
    for (prefix, stem), signatures in releases.items():
        for first, last, signature in _runs(signatures):
            runs[(prefix, signature)].append(Series(stem, first, last))
    groups = []
    for (prefix, signature), series in sorted(runs.items(), key=_group_order):
        ordered = tuple(sorted(series, key=lambda s: _numbers(str(s))))
        suffixes = tuple(sorted(signature, key=_tag_order))
        forms: set[Form] = {"full"}
        formed = set(Group(ordered, frozenset(forms), suffixes, prefix).tags())
        for form in FORMS[1:]:
            trial = set(Group(ordered, frozenset({form}), suffixes, prefix).tags())
            if trial and trial <= given and not trial <= formed:
                forms.add(form)
                formed |= trial
        groups.append(Group(ordered, frozenset(forms), suffixes, prefix))
    covered = set().union(*(set(g.tags()) for g in groups)) if groups else set()
    return TagSet(frozenset(given - covered), tuple(groups))


def _runs(signatures: Mapping[str, frozenset[str]]) -> Iterator[tuple[str, str, frozenset[str]]]:
    """Consecutive canonical patch numbers with the same variants as one range; any other
    patch (`04`) as a release of its own."""
    numbers = sorted(int(p) for p in signatures if _canonical(p))
    for patch, signature in signatures.items():
        if not _canonical(patch):
            yield patch, patch, signature
    start = 0
    for index in range(1, len(numbers) + 1):
        ended = index == len(numbers) or (
            numbers[index] != numbers[index - 1] + 1
            or signatures[str(numbers[index])] != signatures[str(numbers[start])]
        )
        if ended:
            first, last = str(numbers[start]), str(numbers[index - 1])
            yield first, last, signatures[first]
            start = index


def _canonical(patch: str) -> bool:
    return patch.isdigit() and str(int(patch)) == patch


def _group_order(item: tuple[tuple[str, frozenset[str]], list[Series]]) -> tuple[Any, ...]:
    (prefix, signature), series = item
    return (prefix, min(_numbers(str(s)) for s in series), sorted(signature))


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _tag_order(tag: str) -> tuple[Any, ...]:
    return (_numbers(tag), tag)


def _join(stem: str, last: str) -> str:
    return f"{stem}.{last}" if stem else last


def _words(value: Any, what: str) -> list[str]:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be one quoted string of words, not {value!r}")
    return value.split()
