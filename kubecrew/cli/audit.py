"""`kubecrew audit verify | list`: read the policy store's hash-chained audit log.

`verify` asks the store (`Store.verify_audit`) for every break: a record modified, deleted,
reordered or cut off the end, a head its key did not seal, a record stored otherwise than the
store wrote it, a decision that is not the one its record holds; it exits 1 listing them, so a
cron job or CI step fails loudly. It needs the store's identity, whose key seals the head (a
file beside a SQLite store, a Secret on Kubernetes). `list` prints records one per line for
people and grep; with `-o json|yaml` both print data, with the records' own field names.
Neither changes a record. The engine is imported when a command runs, so
`kubecrew --help` stays quick.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from kubecrew.cli.options import StoreOption, fail, policy_store
from kubecrew.cli.output import Format, OutputOption, emit

if TYPE_CHECKING:
    from core.policy.audit import AuditKind, AuditRecord

app = typer.Typer(
    name="audit",
    help="Verify and read the policy store's tamper-evident audit log.\n\n"
    "Example: `kubecrew audit verify`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


class KindChoice(StrEnum):
    proposal = "proposal"
    evaluation = "evaluation"
    decision = "decision"
    approval = "approval"
    answer = "answer"
    use = "use"
    mutation = "mutation"


_KINDS: dict[KindChoice, AuditKind] = {
    KindChoice.proposal: "proposal",
    KindChoice.evaluation: "evaluation",
    KindChoice.decision: "decision",
    KindChoice.approval: "approval",
    KindChoice.answer: "answer",
    KindChoice.use: "use",
    KindChoice.mutation: "mutation",
}


@app.command()
def verify(store: StoreOption = None, output: OutputOption = Format.table) -> None:
    """Check every record's hash, link and stored form, the head and its seal, and each
    decision against its record: exit 0 when intact, else 1 and why.

    **Examples**

    ```
    kubecrew audit verify --store ~/.kubecrew/policy/store.sqlite
    kubecrew audit verify -o json
    ```
    """
    with policy_store(store) as opened:
        report = opened.verify_audit()
    data = {
        "intact": not report.problems,
        "records": report.records,
        "head": report.head,
        "problems": report.problems,
    }
    intact = f"intact: {report.records} records, head {report.head.hash[:12]}"
    emit(output, data, report.problems or [intact])
    if report.problems:
        fail(f"the audit log is not intact: {len(report.problems)} problem(s) above")


@app.command("list")
def list_records(
    store: StoreOption = None,
    subject: Annotated[
        str | None, typer.Option(help="Only records about this proposal or approval id.")
    ] = None,
    kind: Annotated[KindChoice | None, typer.Option(help="Only records of this kind.")] = None,
    after: Annotated[int, typer.Option(help="Only records after this sequence number.")] = 0,
    limit: Annotated[int | None, typer.Option(help="At most this many records.")] = None,
    output: OutputOption = Format.table,
) -> None:
    """One line per record, oldest first: seq, time, kind, subject, who, what, result, citations.

    **Examples**

    ```
    kubecrew audit list --subject p-1a2b3c4d
    kubecrew audit list --kind decision -o json
    ```
    """

    with policy_store(store) as opened:
        records = opened.audit(
            after=after,
            limit=limit,
            subject=subject,
            kind=None if kind is None else _KINDS[kind],
        )
    emit(output, records, [_line(record) for record in records] or ["no audit records"])


def _line(record: AuditRecord) -> str:
    line = (
        f"{record.seq:>5}  {record.at:%Y-%m-%d %H:%M:%S}  {record.kind:<10}  "
        f"{record.subject}  {record.actor}: {record.summary}"
    )
    line += f" -> {record.result}" if record.result else ""
    return line + "".join(f"; cites {citation}" for citation in record.citations)
