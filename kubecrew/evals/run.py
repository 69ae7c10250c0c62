"""Running scenarios: one run = a fresh world, the trigger through the same entry points people
use (a Dev Team conversation as `kubecrew ask`, `heal` as `kubecrew heal`, the Cluster
Operator's `patrol` and `capacity` ticks as the watch helper schedules them), a record of what
happened, a score.

Runs go to worker processes (`jobs` at a time): each sandbox is an API server on a thread of its
own, and a process apiece keeps their event loops, caches and clocks apart. A run that cannot
build its world or whose agent raises is an `error`, not a fail: the report keeps the two apart.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

import anyio

from agents.cluster_operator.conversation import conversation as operator_conversation
from agents.dev_team.conversation import conversation
from agents.dev_team.heal import heal
from agents.runtime.brain import Deterministic, Planner, planner_from_env
from agents.runtime.roles import load_role
from agents.runtime.toolbox import Json, Servers, open_toolbox
from kubecrew.evals.format import Scenario, load
from kubecrew.evals.observe import changed
from kubecrew.evals.scoring import Call, Record, score
from kubecrew.evals.world import Built, build
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.policy.store import open_store

Mode = Literal["deterministic", "llm"]


def run_file(path: Path, *, mode: Mode, workdir: Path) -> dict[str, Any]:
    """One run of the scenario in `path`, as JSON: status pass | fail | error, score, record."""
    started = time.monotonic()
    result: dict[str, Any] = {"scenario": path.stem, "file": _shown(path), "mode": mode}
    try:
        scenario = load(path)
        result["domain"] = scenario.domain
        with build(scenario, workdir) as world:
            record = _trigger(scenario, world, mode)
            scored = score(scenario, record, world.cluster)
        result.update(
            status="pass" if scored.passed else "fail",
            score=scored.as_json(),
            record=_record_json(record),
        )
    except Exception as exc:  # an error is reported per run, the other runs carry on
        result.update(status="error", error=f"{type(exc).__name__}: {exc}")
        result["traceback"] = traceback.format_exc(limit=8)
    result["elapsed"] = round(time.monotonic() - started, 2)
    return result


def run_many(
    paths: list[Path],
    *,
    mode: Mode,
    repeat: int,
    jobs: int,
    workdir: Path,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every scenario `repeat` times, `jobs` runs at a time, results in submission order."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = [
            pool.submit(run_file, p, mode=mode, workdir=workdir / f"{p.stem}-{i + 1}")
            for p in paths
            for i in range(repeat)
        ]
        results = []
        for future in futures:
            results.append(future.result())
            if on_result is not None:
                on_result(results[-1])
    return results


def _planner(mode: Mode) -> Planner:
    return Deterministic() if mode == "deterministic" else planner_from_env()


def _trigger(scenario: Scenario, world: Built, mode: Mode) -> Record:
    record = Record()
    kinds = anyio.run(_mutating_tools, world.servers, world.role)
    seen: list[tuple[str, Json]] = []
    before = world.cluster.fingerprint()
    clock, wall = world.clock(), time.monotonic()
    trigger = scenario.trigger
    if trigger.ask is not None:
        record.answer, calls = anyio.run(_ask, world, trigger.ask, trigger.namespace, mode)
        record.calls = [Call(c.tool, c.arguments, c.error, kinds.get(c.tool, True)) for c in calls]
    elif trigger.operator:
        task = "patrol" if trigger.patrol is not None else "capacity"
        ticks = trigger.patrol or trigger.capacity or 1
        record.answer, calls = anyio.run(_operate, world, task, ticks, trigger.counters, mode)
        record.calls = [Call(c.tool, c.arguments, c.error, kinds.get(c.tool, True)) for c in calls]
    else:
        assert trigger.heal is not None
        outcome, summary = anyio.run(_heal, world, trigger.heal, mode, seen.append)
        record.outcome, record.answer = outcome, summary
        # heal keeps its toolbox to itself: calls are seen as made, their errors not
        record.calls = [Call(n, a, None, kinds.get(n, True)) for n, a in seen]
    record.sandbox_seconds = round(world.clock() - clock, 1)
    record.wall_seconds = round(time.monotonic() - wall, 2)
    record.changed = changed(before, world.cluster.fingerprint())
    record.audit = _audit(world)
    record.prs = _prs(world)
    return record


async def _mutating_tools(servers: Servers, role: str) -> dict[str, bool]:
    """Tool name -> whether it may write (not annotated read-only by its server)."""
    async with open_toolbox(load_role(role), servers) as toolbox:
        return {
            name: not (tool.metadata or {}).get("readOnlyHint", False)
            for name, tool in toolbox.tools.items()
        }


async def _ask(world: Built, question: str, namespace: str | None, mode: Mode) -> tuple[str, Any]:
    async with conversation(world.servers, _planner(mode), home=world.home) as talk:
        outcome = await talk.ask(question, namespace=namespace)
        return outcome.answer, list(talk.toolbox.calls)


async def _operate(
    world: Built, task: str, ticks: int, counters: Literal["accept", "refuse"], mode: Mode
) -> tuple[str, list[Any]]:
    """`ticks` runs of the Cluster Operator's `task`, each a fresh conversation on one home (what
    a patrol remembers, the next reads); the answers joined, every tick's calls in order."""
    answers: list[str] = []
    calls: list[Any] = []
    for _ in range(ticks):
        async with operator_conversation(
            world.servers, _planner(mode), home=world.home, counters=counters
        ) as talk:
            outcome = await getattr(talk, task)()
            answers.append(outcome.answer)
            calls.extend(talk.toolbox.calls)
    return "\n\n".join(answers), calls


async def _heal(
    world: Built, target: str, mode: Mode, on_call: Callable[[tuple[str, Json]], None]
) -> tuple[str, str]:
    result = await heal(
        target,
        servers=world.servers,
        planner=_planner(mode),
        home=world.home,
        on_call=lambda name, arguments: on_call((name, dict(arguments))),
    )
    return result.outcome, result.summary


def _audit(world: Built) -> list[dict[str, Any]]:
    if not world.store.exists():
        return []
    store = open_store(str(world.store))
    try:
        return [r.model_dump(mode="json") for r in store.audit(after=0, limit=1000)]
    finally:
        store.close()


def _prs(world: Built) -> list[dict[str, Any]]:
    if world.repo is None or world.prs is None:
        return []
    repo = Repository(world.repo, author_name="evals", author_email="evals@kubecrew")
    found = []
    for pr in LocalProvider(repo, world.prs).list_prs(state="all"):
        files = {name: repo.read(pr.head_commit, name) for name in pr.files}
        found.append({"id": pr.number, "state": pr.state, "title": pr.title, "files": files})
    return found


def _record_json(record: Record) -> dict[str, Any]:
    return {
        "answer": record.answer,
        "outcome": record.outcome,
        "calls": [{"tool": c.tool, "error": c.error, "mutating": c.mutating} for c in record.calls],
        "changed": record.changed,
        "audit": [
            {k: r.get(k) for k in ("kind", "actor", "subject", "summary", "result")}
            for r in record.audit
        ],
        "prs": [{k: pr[k] for k in ("id", "state", "title")} for pr in record.prs],
        "sandbox_seconds": record.sandbox_seconds,
        "wall_seconds": record.wall_seconds,
    }


def _shown(path: Path) -> str:
    """The scenario's path as the report shows it: relative to the working directory when it is
    under it, so a committed report names no one's home."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)
