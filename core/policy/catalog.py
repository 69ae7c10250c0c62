"""A validated set of policy documents, each with where it came from, looked up by kind and name.

A `PolicySet` is immutable and holds documents that already passed every check (`loading` builds
it, and refuses to build one from invalid files); evaluation, explanations and later the store
backends read it. Names are unique per kind and at most one PriorityPolicy exists, which the
loader checks across files and the constructor re-checks for sets built in code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from core.errors import InvalidArgument, NotFound
from core.policy.documents import KINDS, PolicyDocument, PriorityPolicy
from core.policy.documents.priority import DEFAULT_PRIORITY, PrioritySpec

T = TypeVar("T", bound=PolicyDocument)


@dataclass(frozen=True)
class Source:
    """Where a document was read: file, its 1-based position in the file, its first line."""

    path: str
    document: int
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class LoadedPolicy:
    document: PolicyDocument
    source: Source | None = None

    @property
    def kind(self) -> str:
        return self.document.kind

    @property
    def name(self) -> str:
        return self.document.metadata.name

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class PolicySet:
    def __init__(self, policies: Iterable[LoadedPolicy]) -> None:
        ordered = sorted(policies, key=lambda p: (KINDS.index(p.kind), p.name))
        seen: set[tuple[str, str]] = set()
        for policy in ordered:
            if (policy.kind, policy.name) in seen:
                raise InvalidArgument(f"two policies are named {policy}; names are unique per kind")
            seen.add((policy.kind, policy.name))
        if sum(policy.kind == "PriorityPolicy" for policy in ordered) > 1:
            raise InvalidArgument("a policy set holds at most one PriorityPolicy")
        self._policies = tuple(ordered)

    def __iter__(self) -> Iterator[LoadedPolicy]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def of_kind(self, kind: str) -> list[LoadedPolicy]:
        return [policy for policy in self._policies if policy.kind == kind]

    def documents(self, model: type[T]) -> list[T]:
        return [p.document for p in self._policies if isinstance(p.document, model)]

    def get(self, name: str, *, kind: str | None = None) -> LoadedPolicy:
        """The policy called `name` (of `kind`); NotFound or an ambiguity say what to give."""
        found = [p for p in self._policies if p.name == name and kind in (None, p.kind)]
        if not found:
            known = ", ".join(str(p) for p in self._policies if kind in (None, p.kind))
            raise NotFound(
                f"no {kind or 'policy'} named {name!r}; the set has: {known or 'nothing'}"
            )
        if len(found) > 1:
            kinds = ", ".join(p.kind for p in found)
            raise InvalidArgument(f"{name!r} names several policies ({kinds}); give the kind")
        return found[0]

    @property
    def priority(self) -> PriorityPolicy | None:
        found = self.documents(PriorityPolicy)
        return found[0] if found else None

    @property
    def priorities(self) -> PrioritySpec:
        """The org's PriorityPolicy spec, else the default order (and arbiter)."""
        declared = self.priority
        return declared.spec if declared is not None else DEFAULT_PRIORITY
