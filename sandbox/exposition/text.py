"""The Prometheus text exposition format 0.0.4: families, label escaping, number formatting.

Sections of the exposition add samples to named families in any order; `Exposition.text()` writes
each family once, HELP and TYPE first, its samples together, as the format requires. Labels are
passed as pre-rendered strings (`labels(...)`) because a 5,000-pod cluster renders some 100,000
samples per scrape: building them with plain string joins keeps a scrape well under a second.
This module knows nothing of Kubernetes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["gauge", "counter", "histogram", "untyped"]

_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n"})
_HELP_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n"})


def escape(value: str) -> str:
    """A label value as the format wants it: backslash, double quote and newline escaped."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.translate(_ESCAPES)
    return value


def labels(*pairs: tuple[str, str]) -> str:
    """`name="value",...` for the inside of a sample's braces (values escaped)."""
    return ",".join(f'{name}="{escape(value)}"' for name, value in pairs)


def number(value: float) -> str:
    """A sample value: integers without a fraction, floats in full precision, Inf and NaN as
    Prometheus spells them."""
    if type(value) is int:
        return str(value)
    if value != value:  # NaN is the only value unequal to itself
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


@dataclass
class Family:
    name: str
    kind: Kind
    help: str
    lines: list[str] = field(default_factory=list)

    def add(self, label_text: str, value: float, *, suffix: str = "") -> None:
        """One sample; `suffix` for a histogram's `_bucket`, `_sum` and `_count` series."""
        if label_text:
            self.lines.append(f"{self.name}{suffix}{{{label_text}}} {number(value)}")
        else:
            self.lines.append(f"{self.name}{suffix} {number(value)}")

    def flag(self, label_text: str, on: bool) -> None:
        """A 1/0 sample: the state series kube-state-metrics is mostly made of."""
        self.lines.append(f"{self.name}{{{label_text}}} {'1' if on else '0'}")


class Exposition:
    """Families in the order they were first declared."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}

    def family(self, name: str, kind: Kind, help: str) -> Family:
        found = self._families.get(name)
        if found is None:
            found = self._families[name] = Family(name, kind, help)
        elif found.kind != kind:
            raise ValueError(f"metric family {name} declared as {found.kind} and {kind}")
        return found

    def gauge(self, name: str, help: str) -> Family:
        return self.family(name, "gauge", help)

    def counter(self, name: str, help: str) -> Family:
        return self.family(name, "counter", help)

    def text(self) -> str:
        out: list[str] = []
        for family in self._families.values():
            out.append(f"# HELP {family.name} {family.help.translate(_HELP_ESCAPES)}")
            out.append(f"# TYPE {family.name} {family.kind}")
            out.extend(family.lines)
        out.append("")
        return "\n".join(out)
