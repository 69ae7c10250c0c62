"""How near a misspelt image name or tag is to one that exists, said in words.

A typo is a few edits: a character inserted, dropped, changed, or two neighbours swapped
(Damerau's optimal string alignment distance). A name of four characters or fewer allows one,
a longer one two: `1.27` and `1.28` are one edit apart, and `ngnix` is one swap from `nginx`.

`nearest_tags` ranks a repository's tags for a tag that does not exist: first those a typo away
(fewest edits, then the longest common start, then the newest; when the version written is a
real one, only tags of that version: the typo is in the variant), then, for a version, the newest
tag of the same major.minor, else of the same major, else the closest version, each with the
same suffix (`-alpine`) as the tag written. Its confidence says which way it was found.

Docker Hub serves no catalog, so a misspelt official image is checked against `WELL_KNOWN`, the
official images most workloads run; other registries' catalogs, and the repositories the cluster
runs, are the callers'. Pure functions: no snapshot, no registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

WELL_KNOWN = (
    "alpine",
    "busybox",
    "caddy",
    "cassandra",
    "consul",
    "couchdb",
    "debian",
    "elasticsearch",
    "golang",
    "grafana",
    "haproxy",
    "httpd",
    "influxdb",
    "mariadb",
    "memcached",
    "mongo",
    "mysql",
    "nats",
    "nginx",
    "node",
    "openjdk",
    "php",
    "postgres",
    "python",
    "rabbitmq",
    "redis",
    "registry",
    "ruby",
    "tomcat",
    "traefik",
    "ubuntu",
    "vault",
    "wordpress",
    "zookeeper",
)

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")


def distance(a: str, b: str) -> int:
    """Edits from `a` to `b`: insertions, deletions, substitutions, adjacent swaps."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def typo_limit(text: str) -> int:
    return 1 if len(text) <= 4 else 2


def is_typo(written: str, real: str) -> bool:
    """Whether `written` is a typo of `real` (not `real` itself)."""
    return 0 < distance(written, real) <= typo_limit(real)


def edit_words(written: str, real: str) -> str:
    """`'ngnix' is one transposition from 'nginx'`, and the like."""
    edits = distance(written, real)
    if edits == 1 and len(written) == len(real) + 1:
        how = "one character longer than"
    elif edits == 1 and len(written) + 1 == len(real):
        how = "one character short of"
    elif edits == 1 and _swapped(written, real):
        how = "one transposition from"
    elif edits == 1:
        how = "one character different from"
    else:
        how = f"{edits} edits from"
    return f"{written!r} is {how} {real!r}"


def _swapped(a: str, b: str) -> bool:
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]


def nearest_names(written: str, names: Iterable[str]) -> list[tuple[int, str]]:
    """(edits, name) of the names `written` is a typo of, nearest first. A name with slashes
    (`library/nginx`) is judged by its last part's length."""
    found = {
        (distance(written, name), name)
        for name in names
        if 0 < distance(written, name) <= typo_limit(name.rpartition("/")[2])
    }
    return sorted(found)


@dataclass(frozen=True)
class Version:
    numbers: tuple[int, ...]
    suffix: str  # "-alpine", "" for none


def version(tag: str) -> Version | None:
    found = _VERSION.match(tag)
    if found is None:
        return None
    return Version(tuple(int(n) for n in found.group(1).split(".")), found.group(2))


@dataclass(frozen=True)
class TagMatch:
    tag: str
    confidence: float
    why: str  # "'1.277' is one character longer than '1.27'"


def nearest_tags(written: str, tags: Iterable[str], *, limit: int = 2) -> list[TagMatch]:
    """The tags most likely meant by `written`, which is not among them."""
    listed = sorted(set(tags) - {written})
    kept = _keeping_a_real_version(written, listed)
    typos = sorted(
        (t for t in kept if 0 < distance(written, t) <= typo_limit(written)),
        key=lambda t: (
            distance(written, t),
            -_common_start(written, t),
            _gap(version(written), version(t)),
            _newest_first(t),
        ),
    )
    found = [
        TagMatch(t, 0.85 if distance(written, t) == 1 else 0.7, edit_words(written, t))
        for t in typos
    ]
    wanted = version(written)
    if wanted is not None:
        found.extend(m for m in _by_version(wanted, listed) if m.tag not in typos)
    return found[:limit]


def _keeping_a_real_version(written: str, tags: list[str]) -> list[str]:
    """`tags`, without those of another version when the version written is a real one: in
    `1.27-alpinee` the typo is in the variant, and `1.28-alpine` would be an upgrade."""
    wanted = version(written)
    if wanted is None:
        return tags
    same = [t for t in tags if (v := version(t)) is None or v.numbers == wanted.numbers]
    return same if any(version(t) is not None for t in same) else tags


def _by_version(wanted: Version, tags: list[str]) -> list[TagMatch]:
    same = [(t, v) for t in tags if (v := version(t)) is not None and v.suffix == wanted.suffix]
    label = ".".join(str(n) for n in wanted.numbers)
    minor = [(t, v) for t, v in same if v.numbers[:2] == wanted.numbers[:2]]
    if len(wanted.numbers) >= 2 and minor:
        tag = max(minor, key=lambda tv: tv[1].numbers)[0]
        family = ".".join(str(n) for n in wanted.numbers[:2])
        return [TagMatch(tag, 0.6, f"{tag!r} is the newest {family} tag; {label} does not exist")]
    major = [(t, v) for t, v in same if v.numbers[:1] == wanted.numbers[:1]]
    pool, confidence = (major, 0.5) if major else (same, 0.4)
    ranked = sorted(pool, key=lambda tv: (_gap(wanted, tv[1]), _newest_first(tv[0])))
    return [
        TagMatch(
            tag, confidence, f"{tag!r} is the closest version to {label}, which does not exist"
        )
        for tag, _ in ranked[:1]
    ]


def _gap(a: Version | None, b: Version | None) -> tuple[int, ...]:
    """How far apart two versions are: majors first; within a major, part by part. Not two
    versions: as far as can be."""
    if a is None or b is None:
        return (1 << 30,)
    if a.numbers[0] != b.numbers[0]:
        return (abs(a.numbers[0] - b.numbers[0]),)
    width = max(len(a.numbers), len(b.numbers))
    x, y = a.numbers + (0,) * (width - len(a.numbers)), b.numbers + (0,) * (width - len(b.numbers))
    return (0, *(abs(p - q) for p, q in zip(x, y, strict=True)))


def _newest_first(tag: str) -> tuple[int, ...]:
    found = version(tag)
    return tuple(-n for n in found.numbers) if found else (1,)  # words after versions


def _common_start(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
