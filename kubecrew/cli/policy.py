"""`kubecrew policy validate | list | explain | check`: the policy store's documents, offline.

Every command reads policy files (the defaults in `policies/` and `$KUBECREW_POLICIES`, or the
paths given with `-p/--policies`, as the crew's commands take them) through
`core.policy.loading`, which owns validation and its one-line problems; `check` runs the same
dry-run evaluation the policy MCP server exposes. Nothing here needs a cluster: a live object
comes from `--target-file`, metrics from `--metric`. This module only turns options into engine
calls and prints (`list`, `explain` and `check` as data with `-o json|yaml`); the engine is
imported when a command runs, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer
import yaml

from kubecrew.cli.options import fail, out
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from core.policy.catalog import LoadedPolicy, PolicySet


app = typer.Typer(
    name="policy",
    help="Validate, list, explain and dry-run the policy documents agents negotiate by.\n\n"
    "Example: `kubecrew policy check scale deployment/web -n shop --from 5 --replicas 1`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


PoliciesOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--policies",
        "-p",
        help="Policy file or directory (repeatable). [default: ./policies, else the shipped "
        "defaults, plus each path in $KUBECREW_POLICIES]",
        show_default=False,
    ),
]
KindOption = Annotated[
    str | None,
    typer.Option(help="Only this kind (CapacityPolicy, CostPolicy, ...).", show_default=False),
]


def _paths(given: list[Path] | None) -> list[Path]:
    from core.policy.settings import PolicySettings

    return PolicySettings(policies=tuple(given or ())).policy_paths()


def _policies(given: list[Path] | None) -> PolicySet:
    from core.policy.loading import load_report

    report = load_report(_paths(given))
    for problem in report.problems:
        print_failure(str(problem))
    if report.problems:
        raise typer.Exit(1)
    return report.policy_set()


# Paths given bare (`validate a.yaml b/`) are read as -p, for scripts written before it; they
# are taken as extra arguments, so the usage line shows only -p.
@app.command(context_settings={"allow_extra_args": True})
def validate(ctx: typer.Context, policies: PoliciesOption = None) -> None:
    """Check policy files: exit 1 with one line per problem, else one line per file.

    A problem names the file and line, the document, the field and the reason:
    `policies/x.yaml:14: document 2 (CapacityPolicy shop): spec.minReplica: unknown field ...`

    **Examples**

    ```
    kubecrew policy validate
    kubecrew policy validate -p ./org-policies/ -p extra.yaml
    ```
    """
    from core.policy.loading import load_report

    report = load_report(_paths([*(policies or ()), *map(Path, ctx.args)]))
    for file in report.files:
        if file.policies and not file.problems:
            names = ", ".join(str(policy) for policy in file.policies)
            out(f"ok {file.path}: {names}")
        elif not file.problems:
            out(f"ok {file.path}: no documents")
    for problem in report.problems:
        print_failure(str(problem))
    if report.problems:
        raise typer.Exit(1)


@app.command("list")
def list_policies(
    kind: KindOption = None,
    output: OutputOption = Format.table,
    policies: PoliciesOption = None,
) -> None:
    """List the policies, as a table or as the documents themselves.

    As YAML the documents are a stream (`---` between them), as policy files hold them, so the
    output validates as one.

    **Examples**

    ```
    kubecrew policy list
    kubecrew policy list --kind CapacityPolicy -o yaml
    kubecrew policy list -o json -p ./org-policies
    ```
    """
    from core.policy.explaining import summary
    from mcp_servers.common.yamltext import dump

    chosen = [p for p in _policies(policies) if kind in (None, p.kind)]
    documents = [_document(p) for p in chosen]
    if output is Format.yaml:
        out("---\n".join(dump(document) for document in documents).rstrip("\n"))
        return
    rows = [("KIND", "NAME", "SUMMARY", "SOURCE")]
    rows += [(p.kind, p.name, summary(p.document), str(p.source)) for p in chosen]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = ("   ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]) for row in rows)
    emit(output, documents, lines)


def _document(policy: LoadedPolicy) -> dict[str, Any]:
    return policy.document.model_dump(mode="json", exclude_unset=True)


@app.command()
def explain(
    name: Annotated[str, typer.Argument(help="The policy's metadata.name.")],
    kind: KindOption = None,
    output: OutputOption = Format.table,
    policies: PoliciesOption = None,
) -> None:
    """Say what one policy means, rule by rule, and which targets it selects.

    As data: the document (as `policy list` gives it) and its `explanation`, line by line.

    **Examples**

    ```
    kubecrew policy explain shop-min-capacity
    kubecrew policy explain shop --kind Ownership
    kubecrew policy explain shop-min-capacity -o json
    ```
    """
    from core.errors import ToolError
    from core.policy.explaining import explain as in_words

    try:
        policy = _policies(policies).get(name, kind=kind)
    except ToolError as exc:
        fail(exc.message)
    lines = in_words(policy)
    emit(output, _document(policy) | {"explanation": lines}, lines)


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values or []:
        key, equals, text = value.partition("=")
        if not equals or not key:
            fail(f"{option} {value!r}: write KEY=VALUE")
        pairs[key] = text
    return pairs


def _numbers(values: list[str] | None) -> dict[str, float]:
    numbers: dict[str, float] = {}
    for key, text in _pairs(values, "--metric").items():
        try:
            numbers[key] = float(text)
        except ValueError:
            fail(f"--metric {key}={text}: the value must be a number, such as 0.15")
    return numbers


def _target_object(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        fail(f"--target-file {path}: {exc}".splitlines()[0])
    if not isinstance(loaded, dict):
        fail(f"--target-file {path}: expected one Kubernetes object (a mapping)")
    return loaded


def _moment(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail(f"--now {text!r}: write an ISO 8601 time such as 2026-12-02T23:00:00+01:00")
    if moment.tzinfo is None:
        fail(f"--now {text!r}: add a time zone (Z or +01:00)")
    return moment


@app.command()
def check(
    action: Annotated[str, typer.Argument(help="scale, patch, apply, delete, drain, evict, ...")],
    target: Annotated[str, typer.Argument(help="KIND/NAME, as kubectl: deployment/web")],
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="[default: the target file's, else default]"),
    ] = None,
    replicas: Annotated[int | None, typer.Option(help="scale: replicas asked.")] = None,
    from_replicas: Annotated[
        int | None, typer.Option("--from", help="Replicas now [default: the target file's].")
    ] = None,
    pods: Annotated[int | None, typer.Option(help="drain/evict: pods disrupted.")] = None,
    via: Annotated[str, typer.Option(help="`direct` (an API call) or `pull-request`.")] = "direct",
    label: Annotated[list[str] | None, typer.Option(help="Target label KEY=VALUE.")] = None,
    namespace_label: Annotated[
        list[str] | None, typer.Option(help="Namespace label KEY=VALUE (egress classes).")
    ] = None,
    metric: Annotated[
        list[str] | None, typer.Option(help="NAME=NUMBER, e.g. cpu_utilization=0.1.")
    ] = None,
    target_file: Annotated[
        Path | None, typer.Option(help="The live object, YAML or JSON.", show_default=False)
    ] = None,
    now: Annotated[str | None, typer.Option(help="ISO time [default: now].")] = None,
    actor: Annotated[str | None, typer.Option(help="Who proposes it.")] = None,
    fired_only: Annotated[bool, typer.Option(help="Hide rules that did not fire.")] = False,
    output: OutputOption = Format.table,
    policies: PoliciesOption = None,
) -> None:
    """Dry-run an action against the policies: which rules fire and why, and the verdict.

    Offline: give the live object with --target-file and metrics with --metric.

    **Examples**

    ```
    kubecrew policy check scale deployment/web -n shop --from 5 --replicas 1 --metric cpu_utilization=0.1
    kubecrew policy check delete deployment/web -n shop
    kubecrew policy check drain node/worker-2 --pods 14 --metric evictions_last_hour=3 --now 2026-12-02T23:00:00+01:00
    kubecrew policy check apply networkpolicy/egress -n shop --target-file netpol.yaml -o json
    ```
    """  # noqa: E501
    from pydantic import ValidationError

    from core.errors import ToolError
    from core.policy.actions import Action, EvaluationRequest, ReplicaChange, parse_target
    from core.policy.documents.common import ActionType
    from core.policy.evaluation import evaluate
    from core.policy.reporting import render

    if action not in get_args(ActionType):
        fail(f"unknown action {action!r}; one of: {', '.join(get_args(ActionType))}")
    if via not in ("direct", "pull-request"):
        fail(f"--via {via!r}: direct or pull-request")
    live = _target_object(target_file)
    namespace = namespace or ((live or {}).get("metadata") or {}).get("namespace")
    try:
        change = None if replicas is None else ReplicaChange(from_=from_replicas, to=replicas)
        request = EvaluationRequest(
            action=Action.model_validate(
                {
                    "type": action,
                    "target": parse_target(target, namespace=namespace),
                    "labels": _pairs(label, "--label"),
                    "replicas": change,
                    "pods": pods,
                    "via": via,
                    "actor": actor,
                }
            ),
            target=live,
            metrics=_numbers(metric),
            now=_moment(now),
            namespace_labels=_pairs(namespace_label, "--namespace-label"),
        )
    except ToolError as exc:
        fail(exc.message)
    except ValidationError as exc:  # a negative count, say
        first = exc.errors()[0]
        fail(f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}")
    report = evaluate(_policies(policies), request)
    emit(output, report, render(report, passed=not fired_only))
