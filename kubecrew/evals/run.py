"""Running scenarios: one run = a fresh world, the trigger through the entry points people,
timers and Alertmanager use (`kubecrew.evals.triggers`, under the scenario's budget), a record
of what happened, a score.

Runs go to worker processes (`jobs` at a time): each sandbox is an API server on a thread of its
own, and a process apiece keeps their event loops, caches and clocks apart. A run that cannot
build its world or whose agent raises is an `error`, not a fail: the report keeps the two apart.

The planner: `deterministic` runs without a model; `llm` runs every agent with the model
`KUBECREW_MODEL` names (an error per run when none is set, rather than a deterministic run
reported as a model's). Under the test guard (`KUBECREW_MODEL_GUARD`), where no real model may
be built, `llm` plays the scenario's script instead (`evals/scripts/<scenario>.yaml`, beside the
scenarios' folder) with the scripted chat model the test names in `KUBECREW_EVAL_SCRIPTED`
(`module:function`, a path -> model factory): the model must carry the scripted mark the guard
checks, so a script never reaches a provider and a real run never reads a script.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

import anyio
from langchain_core.language_models import BaseChatModel

from agents.runtime.brain import (
    GUARD_ENV,
    MODEL_ENV,
    Deterministic,
    ModelPlanner,
    Planner,
    guarded,
    planner_from_env,
)
from agents.runtime.errors import ModelUnavailable
from agents.runtime.roles import load_role
from agents.runtime.toolbox import open_toolbox
from core.policy.store import open_store
from kubecrew.evals import triggers
from kubecrew.evals.format import Scenario, load
from kubecrew.evals.observe import changed
from kubecrew.evals.scoring import Call, Record, score
from kubecrew.evals.world import Built, build
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.policy.server import build as build_policy

Mode = Literal["deterministic", "llm"]
SCRIPTED_ENV = "KUBECREW_EVAL_SCRIPTED"  # tests only: the scripted model factory, module:function


def run_file(path: Path, *, mode: Mode, workdir: Path) -> dict[str, Any]:
    """One run of the scenario in `path`, as JSON: status pass | fail | error, score, record."""
    started = time.monotonic()
    result: dict[str, Any] = {"scenario": path.stem, "file": _shown(path), "mode": mode}
    try:
        scenario = load(path)
        result["domain"] = scenario.domain
        if scenario.intent is not None:
            result["intent"] = scenario.intent
        planner = _planner(mode, path)
        result["planner"] = planner.name
        with build(scenario, workdir) as world:
            record = _trigger(scenario, world, planner)
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


def llm_ready() -> bool:
    """Whether `--mode llm` has a model to run: one named, or scripts under the test guard."""
    return guarded() or bool(os.environ.get(MODEL_ENV, "").strip())


def _planner(mode: Mode, scenario: Path) -> Planner:
    if mode == "deterministic":
        return Deterministic()
    if guarded():
        return ModelPlanner(_scripted(scenario))
    if not os.environ.get(MODEL_ENV, "").strip():
        raise ModelUnavailable(
            f"--mode llm runs the model {MODEL_ENV} names, and it is not set: set it to "
            "provider:model (e.g. openai:gpt-4.1), or use --mode deterministic"
        )
    return planner_from_env()


def _scripted(scenario: Path) -> BaseChatModel:
    """The scenario's script, played by the scripted model factory `KUBECREW_EVAL_SCRIPTED`
    names; only ever reached under the test guard."""
    script = scenario.parent.parent / "scripts" / f"{scenario.stem}.yaml"
    if not script.is_file():
        raise ModelUnavailable(
            f"{GUARD_ENV} is set, so --mode llm plays a script and builds no real model; "
            f"{scenario.stem} has none ({script}): write one, or leave it to deterministic mode"
        )
    module, _, name = os.environ.get(SCRIPTED_ENV, "").partition(":")
    if not module or not name:
        raise ModelUnavailable(
            f"{GUARD_ENV} is set and {SCRIPTED_ENV} names no scripted model factory: set it "
            "to module:function (tests/kubecrew/evals/test_llm_mode.py does)"
        )
    built = getattr(importlib.import_module(module), name)(script)
    if not isinstance(built, BaseChatModel):
        raise ModelUnavailable(f"{SCRIPTED_ENV}={module}:{name} built no chat model")
    return built


def _trigger(scenario: Scenario, world: Built, planner: Planner) -> Record:
    record = Record()
    roles = list(dict.fromkeys(role for t in scenario.triggers for role in t.roles))
    writes = anyio.run(_cluster_writes, world, roles)
    before = world.cluster.fingerprint()
    clock, wall = world.clock(), time.monotonic()
    done = anyio.run(triggers.run, scenario.triggers, world, planner, scenario.budget)
    record.answer, record.outcome, record.stopped = (
        "\n\n".join(done.answers),
        done.outcome,
        done.stopped,
    )
    record.calls = [Call(c.tool, c.arguments, c.error, writes(c.tool)) for c in done.calls]
    record.sandbox_seconds = round(world.clock() - clock, 1)
    record.wall_seconds = round(time.monotonic() - wall, 2)
    record.changed = changed(before, world.cluster.fingerprint())
    record.audit, record.approvals = _audit(world)
    record.prs = _prs(world)
    record.incidents = triggers.incidents(world.incidents)
    return record


async def _cluster_writes(world: Built, roles: list[str]) -> Callable[[str], bool]:
    """Whether a tool may write the cluster: the one rule for what counts as a mutation.

    A tool writes unless its server annotates it read-only; the policy server's tools never do
    (a proposal, a decision, an answer to an approval are records in the policy store, which
    carry a write but are not one). A tool no server offers counts as a write: unknown is not
    safe. The roles are those of the scenario's triggers, each with the tools its servers offer
    it under its own name (only the org's arbiter is offered `answer_approval`).
    """
    read_only: set[str] = set()
    store_only: set[str] = set()
    for role in roles:
        servers = world.acting_as(role).servers
        async with open_toolbox(load_role(role), servers) as toolbox:
            read_only |= {
                name for name, tool in toolbox.tools.items()
                if (tool.metadata or {}).get("readOnlyHint", False)
            }  # fmt: skip
        if servers.policy is not None:
            store_only |= {tool.name for tool in await build_policy(servers.policy).list_tools()}
    return lambda tool: tool not in read_only and tool not in store_only


def _audit(world: Built) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The audit log, and every approval request as it ended the run (a refused answer is in
    neither the log nor the request: the request's state is what shows it took nothing)."""
    if not world.store.exists():
        return [], []
    store = open_store(str(world.store))
    try:
        audit = [r.model_dump(mode="json") for r in store.audit(after=0, limit=1000)]
        requests = [
            {"id": r.id, "state": r.state, "approvers": r.approvers.describe()}
            for r in store.approvals()
        ]
        return audit, requests
    finally:
        store.close()


def _prs(world: Built) -> list[dict[str, Any]]:
    if world.repo is None or world.prs is None:
        return []
    repo = Repository(world.repo, author_name="evals", author_email="evals@kubecrew")
    found = []
    for pr in LocalProvider(repo, world.prs).list_prs(state="all"):
        files = {name: repo.read(pr.head_commit, name) for name in pr.files}
        # commits on its branch that its base lacks: an amendment adds one to an open PR
        ahead = repo.git_repo.git.rev_list("--count", f"{pr.base}..{pr.head_commit}")
        found.append(
            {
                "id": pr.number,
                "state": pr.state,
                "title": pr.title,
                "files": files,
                "commits": int(ahead),
            }
        )
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
        "approvals": record.approvals,
        "prs": [{k: pr[k] for k in ("id", "state", "title", "commits")} for pr in record.prs],
        "incidents": record.incidents,
        "stopped": record.stopped,
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
