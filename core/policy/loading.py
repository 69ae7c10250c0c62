"""Policy files -> a validated PolicySet, or every problem found, one precise line each.

A path is a file or a directory (searched recursively for .yaml and .yml); a file may hold
several YAML documents. A problem names the file and line, the document (1-based) and its kind
and name when known, the field path as written in YAML (`spec.rules[1].when`) and the reason:

    policies/shop.yaml:14: document 2 (CapacityPolicy shop-min): spec.minReplica: unknown field
    'minReplica'; did you mean 'minReplicas'?

Nothing stops at the first problem: a reviewer fixing a policy repository wants them all. Across
files, names must be unique per kind and one PriorityPolicy at most may exist. Field-level detail
(paths, lines, suggestions) comes from `fields`; this module walks files and documents.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from core.errors import InvalidArgument
from core.policy.catalog import LoadedPolicy, PolicySet, Source
from core.policy.documents import API_VERSION, KINDS, MODELS
from core.policy.fields import duplicate_keys, line_of, problems_of

SUFFIXES = (".yaml", ".yml")
PARSED_KEPT = 256  # policy texts kept parsed (`parse_text`)


@dataclass(frozen=True)
class LoadProblem:
    path: str
    reason: str
    line: int | None = None
    document: int | None = None
    title: str | None = None  # "CapacityPolicy shop-min", when the document says so
    field: str | None = None

    def __str__(self) -> str:
        parts = [self.path + (f":{self.line}" if self.line else "")]
        if self.document is not None:
            parts.append(f"document {self.document}" + (f" ({self.title})" if self.title else ""))
        if self.field:
            parts.append(self.field)
        return ": ".join([*parts, self.reason])


@dataclass(frozen=True)
class FileReport:
    path: str
    policies: tuple[LoadedPolicy, ...] = ()
    problems: tuple[LoadProblem, ...] = ()


@dataclass(frozen=True)
class LoadReport:
    files: tuple[FileReport, ...]
    set_problems: tuple[LoadProblem, ...] = ()  # across files: duplicate names, priorities

    @property
    def problems(self) -> list[LoadProblem]:
        return [p for f in self.files for p in f.problems] + list(self.set_problems)

    def policy_set(self) -> PolicySet:
        """The set, if nothing is wrong; else PolicyLoadError listing every problem."""
        if self.problems:
            raise PolicyLoadError(self.problems)
        return PolicySet(p for f in self.files for p in f.policies)


class PolicyLoadError(InvalidArgument):
    def __init__(self, problems: Sequence[LoadProblem]) -> None:
        super().__init__(
            f"{len(problems)} problem(s) in the policies; fix them and load again:\n"
            + "\n".join(str(problem) for problem in problems)
        )
        self.problems = tuple(problems)


def load(paths: Sequence[Path]) -> PolicySet:
    return load_report(paths).policy_set()


def load_report(paths: Sequence[Path]) -> LoadReport:
    files: list[FileReport] = []
    for path in paths:
        found = discover(path)
        if isinstance(found, LoadProblem):
            files.append(FileReport(str(path), problems=(found,)))
            continue
        for file in found:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                files.append(FileReport(str(file), problems=(LoadProblem(str(file), str(exc)),)))
                continue
            files.append(parse_text(text, path=str(file)))
    return LoadReport(tuple(files), tuple(_set_problems(p for f in files for p in f.policies)))


def discover(path: Path) -> list[Path] | LoadProblem:
    """The policy files at `path`: the file itself, or a directory's .yaml/.yml files, sorted."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return LoadProblem(str(path), "no such file or directory")
    found = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    if not found:
        return LoadProblem(str(path), "holds no policy file (.yaml or .yml)")
    return found


@functools.lru_cache(maxsize=PARSED_KEPT)
def parse_text(text: str, *, path: str = "<text>") -> FileReport:
    """Every document of one YAML text, validated; a YAML syntax error ends the file.

    Kept per text and path: every gate, server and agent of a process loads the same policy
    files (8 ms a file to parse), and what comes back is frozen."""
    policies: list[LoadedPolicy] = []
    problems: list[LoadProblem] = []
    loader = yaml.SafeLoader(text)
    index = 0
    try:
        while True:
            index += 1  # the document being read, 1-based, also where a YAML error is
            node = loader.get_node() if loader.check_node() else None
            if node is None:
                break
            source = Source(path, index, node.start_mark.line + 1)
            loaded = _document(node, loader.construct_document(node), source)
            if isinstance(loaded, LoadedPolicy):
                policies.append(loaded)
            else:
                problems.extend(loaded)
    except yaml.YAMLError as exc:
        problems.append(_yaml_problem(exc, path, index))
    finally:
        loader.dispose()
    return FileReport(path, tuple(policies), tuple(problems))


def _document(node: yaml.Node, data: object, source: Source) -> LoadedPolicy | list[LoadProblem]:
    if data is None:  # an empty document, as between two `---`
        return []
    if not isinstance(data, dict):
        reason = f"a policy document is a mapping, not a {type(data).__name__}"
        return [LoadProblem(source.path, reason, source.line, source.document)]
    kind, version = data.get("kind"), data.get("apiVersion")
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    title = f"{kind} {name}" if isinstance(kind, str) and isinstance(name, str) else None

    def problem(reason: str, field: str | None = None, line: int | None = None) -> LoadProblem:
        return LoadProblem(source.path, reason, line or source.line, source.document, title, field)

    found = [problem(*dup) for dup in duplicate_keys(node)]
    if version != API_VERSION:
        line = line_of(node, ["apiVersion"])
        reason = "required" if version is None else f"{version!r} is not {API_VERSION}"
        found.append(problem(reason, "apiVersion", line))
    model = MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        found.append(problem(_kind_reason(kind), "kind", line_of(node, ["kind"])))
        return found
    try:
        document = model.model_validate(data)
    except ValidationError as exc:
        details = sorted(problems_of(exc, model, node), key=lambda detail: detail[2] or 0)
        # apiVersion and kind were judged above, with better words than a Literal mismatch.
        details = [d for d in details if d[1] not in ("apiVersion", "kind")]
        return found + [problem(*detail) for detail in details]
    return found or LoadedPolicy(document, source)


def _kind_reason(kind: object) -> str:
    if kind is None:
        return f"required; one of {', '.join(KINDS)}"
    close = difflib.get_close_matches(str(kind), KINDS, n=1)
    hint = f"; did you mean {close[0]}?" if close else f"; the kinds are {', '.join(KINDS)}"
    return f"unknown kind {kind!r}{hint}"


def _yaml_problem(exc: yaml.YAMLError, path: str, document: int) -> LoadProblem:
    mark = getattr(exc, "problem_mark", None)
    reason = " ".join(
        str(part) for part in (getattr(exc, "context", None), getattr(exc, "problem", None)) if part
    )
    line = mark.line + 1 if mark is not None else None
    return LoadProblem(path, f"not valid YAML: {reason or exc}", line, document)


def _set_problems(policies: Iterable[LoadedPolicy]) -> list[LoadProblem]:
    problems: list[LoadProblem] = []
    first: dict[tuple[str, str], LoadedPolicy] = {}
    priority: LoadedPolicy | None = None
    for policy in policies:
        source = policy.source or Source("<code>", 1, 1)
        earlier = first.setdefault((policy.kind, policy.name), policy)
        if earlier is not policy:
            problems.append(_clash(policy, source, f"another {policy} is in {earlier.source}"))
        if policy.kind == "PriorityPolicy":
            if priority is not None:
                problems.append(
                    _clash(
                        policy,
                        source,
                        f"one PriorityPolicy at most; {priority.name} is in {priority.source}",
                    )
                )
            priority = priority or policy
    return problems


def _clash(policy: LoadedPolicy, source: Source, reason: str) -> LoadProblem:
    return LoadProblem(
        source.path, reason, source.line, source.document, str(policy), "metadata.name"
    )
