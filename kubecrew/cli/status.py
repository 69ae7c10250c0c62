"""`kubecrew status`: the crew at a glance, for a person (Rich) or a script (`-o json|yaml`).

It reads and never writes: the cluster the crew talks to (the crew file's, else $KUBECONFIG's)
and the folder of what it learned there (`core.home`), which agents are installed and how they
plan (the deterministic planner, or the model `KUBECREW_MODEL` names), the approval requests
waiting for a person, the incidents the notify step recorded in that cluster's incident book
(absent means none recorded, not an error; with `$KUBECREW_DATABASE_URL`, the book in that
database, which every replica of the crew shares), the open pull requests of a GitOps repository
(`--repo`, the local provider's records beside it), and the policy store's most recent
decisions. A policy store
that does not exist yet is an empty one here: `status` must not create files. The store and
the repository default to the crew file's (`kubecrew.crew`), as for every front door; an
incident whose heal waits for a person names the approval request it waits for. A waiting
approval request has the fields `kubecrew approvals show` gives it. `--json`, the flag before
`-o`, still works and is hidden.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from kubecrew.cli.options import StoreOption
from kubecrew.cli.output import Format, OutputOption, emit
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from agents.runtime.notify.incidents import Incident, Run
    from core.policy.proposals import ApprovalRequest
    from core.policy.store.base import Store

Json = dict[str, Any]


def status(
    store: StoreOption = None,
    repo: Annotated[
        Path | None,
        typer.Option(help="A GitOps repository: list its open pull requests (local provider)."),
    ] = None,
    decisions: Annotated[int, typer.Option(help="How many recent decisions to show.")] = 5,
    output: OutputOption = Format.table,
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="As -o json.")] = False,
) -> None:
    """The cluster, agents, pending approvals, open incidents, open PRs and recent decisions.

    **Examples**

    ```
    kubecrew status
    kubecrew status --repo ./deploy -o json
    ```
    """
    from core.errors import ToolError
    from kubecrew.crew import crew_file, read_crew_file

    try:
        crew = read_crew_file(crew_file())
    except ToolError as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from exc
    store, repo = store or crew.policy_store, repo or crew.repo
    try:
        data = {
            "cluster": _cluster(),
            "agents": _agents(),
            **_policy(store, decisions),
            "incidents": _incidents(),
            "pull_requests": _pull_requests(repo) if repo is not None else None,
        }
    except ToolError as exc:  # a store or a database that does not answer
        print_failure(exc.message)
        raise typer.Exit(1) from exc
    emit(Format.json if as_json else output, data, _lines(data), markup=True)


def _cluster() -> Json:
    """The cluster the crew talks to, and the folder of what it learned there (`core.home`)."""
    from core.home import state_home
    from kubecrew.crew import crew_cluster

    found = crew_cluster()
    return {"server": found.server if found else None, "state": str(state_home())}


def _agents() -> list[Json]:
    from agents.runtime.brain import brain_of
    from kubecrew.channels.frontdoor import AGENTS, installed

    return [
        {"name": name, "installed": installed(name), "brain": brain_of(name), "about": about}
        for name, about in AGENTS.items()
    ]


def _policy(spec: str | None, count: int) -> Json:
    opened = _existing_store(spec)
    if opened is None:
        return {"approvals": [], "decisions": []}
    try:
        pending = opened.approvals(state="pending")
        records = [opened.get(p.id) for p in opened.list() if p.state != "open"]
    finally:
        opened.close()
    decided = sorted(
        (r for r in records if r.decision is not None),
        key=lambda r: r.decision.at if r.decision else 0,
    )[-count:]
    return {
        "approvals": pending,
        "decisions": [
            {
                "proposal": r.proposal.id,
                "decision": r.decision.describe(),
                "at": r.decision.at.isoformat(),
            }
            for r in reversed(decided)
            if r.decision is not None
        ],
    }


def _existing_store(spec: str | None) -> Store | None:
    from core.policy.store import KUBERNETES, SPEC_ENV, open_store
    from core.policy.store.sqlite import default_path

    spec = spec or os.environ.get(SPEC_ENV)
    if spec is None or not (spec == KUBERNETES or spec.startswith(KUBERNETES + ":")):
        path = Path(spec).expanduser() if spec else default_path()
        if not path.is_file():
            return None
    return open_store(spec)


def _incidents() -> list[Json]:
    """The book's unresolved incidents: `$KUBECREW_DATABASE_URL`'s when it is set, else the
    cluster's file, when there is one (a missing file is not created)."""
    try:
        from agents.runtime.notify.incidents import default_path, open_incidents
        from agents.runtime.persistence import database_url
    except ImportError:  # the notify step is not installed: nothing can have been recorded
        return []
    if database_url() is None and not default_path().is_file():
        return []
    recorded = open_incidents()
    try:
        found = recorded.unresolved()
        waits = {i.fingerprint: w.request for i, w in recorded.waiting()}
        runs = {run.fingerprint: run for run in recorded.runs()}
    finally:
        recorded.close()
    return [
        {"subject": i.subject, "state": i.state, "summary": i.summary, "count": i.count}
        | ({"waiting_for": waits[i.fingerprint]} if i.fingerprint in waits else {})
        | (_heal(i, runs[i.fingerprint]) if i.fingerprint in runs else {})
        for i in found
    ]


def _heal(incident: Incident, run: Run) -> Json:
    """A heal booked on the incident: running, or interrupted and how to continue it."""
    if not run.interrupted:
        return {"heal": f"running (process {run.pid} on {run.host}, thread {run.thread})"}
    where = f" -n {incident.namespace}" if incident.namespace else ""
    kind = "" if incident.kind == "Deployment" else f"{incident.kind.lower()}/"
    return {
        "heal": f"interrupted (thread {run.thread}): `kubecrew heal {kind}{incident.name}{where}` "
        "continues it"
    }


def _state(incident: Json) -> str:
    waiting, heal = incident.get("waiting_for"), incident.get("heal")
    if waiting:
        return f"waiting for approval {waiting}"
    return f"{incident['state']}, heal {heal}" if heal else str(incident["state"])


def _pull_requests(repo: Path) -> list[Json]:
    from mcp_servers.gitops.providers.local import LocalProvider
    from mcp_servers.gitops.repo import Repository
    from mcp_servers.gitops.settings import GitopsSettings

    root = repo.resolve()
    forge = LocalProvider(
        Repository(root, author_name="kubecrew", author_email=""),
        GitopsSettings.default_state_dir(root),
    )
    return [
        {"number": pr.number, "title": pr.title, "author": pr.author, "head": pr.head,
         "approved": pr.approved}
        for pr in forge.list_prs(state="open")
    ]  # fmt: skip


def _lines(data: Json) -> list[str]:
    cluster = data["cluster"]
    server = cluster["server"] or "none (no kubeconfig names a server)"
    lines = [f"[bold]Cluster[/] {escape(server)}, what the crew learned there in "
             f"{escape(cluster['state'])}", "[bold]Agents[/]"]  # fmt: skip
    for agent in data["agents"]:
        state = agent["brain"] if agent["installed"] else "not installed"
        lines.append(f"  {agent['name']}: {escape(state)}")
    pending: list[ApprovalRequest] = data["approvals"]
    lines.append(f"[bold]Pending approvals[/] ({len(pending)})")
    lines += [
        f"  {a.id}: {escape(a.action.describe())} for {escape(a.approvers.describe())}, "
        f"until {a.expires_at.isoformat()}"
        for a in pending
    ] or ["  none"]
    lines.append(f"[bold]Open incidents[/] ({len(data['incidents'])})")
    lines += [
        f"  {escape(i['subject'])} ({_state(i)}, {i['count']} signal(s)): {escape(i['summary'])}"
        for i in data["incidents"]
    ] or ["  none recorded"]
    prs = data["pull_requests"]
    if prs is None:
        lines.append("[bold]Open pull requests[/]: give --repo to list them")
    else:
        lines.append(f"[bold]Open pull requests[/] ({len(prs)})")
        lines += [
            f"  #{p['number']} {escape(p['title'])} by {escape(p['author'])}"
            + (" (approved)" if p["approved"] else "")
            for p in prs
        ] or ["  none"]
    lines.append("[bold]Recent decisions[/]")
    lines += [
        f"  {d['proposal']}: {escape(d['decision'])} ({d['at']})" for d in data["decisions"]
    ] or ["  none"]
    return lines
