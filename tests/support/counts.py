"""What the crew's metrics registry (core.telemetry.metrics) counted during a test: `Counts()`
remembers every sample, `added(name, **labels)` is how much one grew since. The registry is the
process's, shared by every test of a worker, so a test reads differences, never totals."""

from __future__ import annotations

from core.telemetry import REGISTRY

Key = tuple[str, tuple[tuple[str, str], ...]]


class Counts:
    def __init__(self) -> None:
        self.before = self._all()

    @staticmethod
    def _all() -> dict[Key, float]:
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in REGISTRY.collect()
            for s in family.samples
        }

    def added(self, name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return self._all().get(key, 0.0) - self.before.get(key, 0.0)
