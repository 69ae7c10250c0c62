"""`kubecrew run`: the Cluster Operator's and the Platform agent's scheduled work, on timers.

The Dev Team's work starts from incidents (`kubecrew watch`); the other two agents work on a
schedule: the node patrol (health, readiness taints, migration off a degrading node, queued
maintenance in its window) and the capacity review (downscales, right-sizing, consolidation,
each proposed through the policy store) for the Cluster Operator; the escalations org policy
settles, egress propagation, the fleet audit and the blueprint sync for the Platform agent.

Each job has its own period (`--patrol 5m`, `--escalations 5m`, `--audit 6h`, ...; `0` turns it
off) and runs first at start, then whenever it is due, one job at a time, so two jobs never
race on one cluster; Ctrl-C lets the job in hand finish (a second one stops at once). `--once`
runs every enabled job once, in the order above, and exits 1 if any failed (or was cut short),
for cron and CI. Each run opens the agent with the crew's servers (`kubecrew.crew`:
its own identity, the kube gate, the policy store) and its home under `$KUBECREW_HOME/agents/`,
the same the front doors use, so a proposal made here is remembered when a person asks in chat.

A job that fails (the cluster unreachable, a tool refusing) is logged in one line and tried
again when next due; the others go on. Output is on stderr: one line per run, then one line per
change it made or scheduled, whole (the target, the values from -> to, how: a pull request where
git defines the object or a gated write, the proposal, who approved it, when it runs), from the
procedure's result (`agents.cluster_operator.report.changes`); `--verbose` adds the agent's
whole answer. stdout stays empty, except with `--json`: one document naming every run, its
answer and its changes. With `--health-port` (or $KUBECREW_HEALTH_PORT, which the image sets)
it answers `/healthz` and `/readyz` (`kubecrew.health`): ready while the cluster answers each
enabled job's agent.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.cli.options import fail, period
from kubecrew.crew import Crew, CrewOptions, crew_home, crew_options, resolve
from kubecrew.health import Check, HealthError, HealthPortOption, kube_api, serving
from kubecrew.leader import (
    FENCE_CHECK_S,
    LeaderElectOption,
    LeaseDurationOption,
    LeaseError,
    RenewDeadlineOption,
    RetryPeriodOption,
    election,
    fenced,
    standing_by,
    taking_part,
)

if TYPE_CHECKING:
    from agents.runtime.brain import Planner
    from kubecrew.leader import Leadership

Say = Callable[[str], None]  # one line of news (core.telemetry.sayer: text or a JSON record)


@dataclass(frozen=True)
class Job:
    name: str  # the option that sets its period
    agent: str  # "cluster_operator" or "platform": the conversation module and the home; the
    # job's name is the agent's procedure it performs
    every: str  # the default period
    what: str


JOBS = (
    Job("patrol", "cluster_operator", "5m",
        "the node patrol (health, readiness, migration off a degrading node)"),
    Job("capacity", "cluster_operator", "1h",
        "the capacity review (downscales, right-sizing, consolidation)"),
    Job("fleet", "cluster_operator", "15m",
        "the fleet survey across the crew file's clusters (moves replicas; needs two or more)"),
    Job("escalations", "platform", "5m",
        "the Platform's answers to escalations org policy settles"),
    Job("propagate", "platform", "15m", "egress propagation to team namespaces"),
    Job("audit", "platform", "6h", "the fleet audit (fixes by pull request)"),
    Job("blueprints", "platform", "6h", "the namespace blueprint sync"),
)  # fmt: skip
WHO = {"cluster_operator": "Cluster Operator", "platform": "Platform"}


def _every(job: Job) -> Any:
    """The option setting `job`'s period."""
    return typer.Option(
        f"--{job.name}", help=f"How often to run {job.what}: 30s, 5m, 1h, ...; 0 never."
    )


@crew_options
def run(
    patrol: Annotated[str, _every(JOBS[0])] = JOBS[0].every,
    capacity: Annotated[str, _every(JOBS[1])] = JOBS[1].every,
    fleet: Annotated[str, _every(JOBS[2])] = JOBS[2].every,
    escalations: Annotated[str, _every(JOBS[3])] = JOBS[3].every,
    propagate: Annotated[str, _every(JOBS[4])] = JOBS[4].every,
    audit: Annotated[str, _every(JOBS[5])] = JOBS[5].every,
    blueprints: Annotated[str, _every(JOBS[6])] = JOBS[6].every,
    once: Annotated[
        bool, typer.Option("--once", help="Run each enabled job once, then exit (1 if any failed).")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each agent's whole answer.")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print every run, its answer and its changes as JSON."),
    ] = False,
    health_port: HealthPortOption = None,
    leader_elect: LeaderElectOption = False,
    leader_elect_lease_duration: LeaseDurationOption = 15.0,
    leader_elect_renew_deadline: RenewDeadlineOption = 10.0,
    leader_elect_retry_period: RetryPeriodOption = 2.0,
    *,
    crew: CrewOptions,
) -> None:
    """Run the Cluster Operator's and the Platform agent's scheduled work until Ctrl-C: node
    patrol, capacity review, fleet survey (with two or more `clusters` in the crew file),
    escalations, egress propagation, fleet audit, blueprint sync.

    Every change still goes through policy: proposals, approvals, pull requests. Each job runs
    at start, then every period; one at a time.

    **Examples**

    ```
    kubecrew run                                   # the default schedule, until Ctrl-C
    kubecrew run --once --capacity 0 --audit 0     # one pass for cron, without the slow jobs
    kubecrew run --patrol 1m --escalations 1m --repo ./shop-gitops -v
    kubecrew run --leader-elect      # in each of two replicas: one runs the jobs at a time
    ```
    """
    from agents.runtime.brain import planner_from_env
    from core.errors import ToolError
    from core.telemetry import sayer

    asked = dict(zip((j.name for j in JOBS), (patrol, capacity, fleet, escalations, propagate,
                                               audit, blueprints), strict=True))  # fmt: skip
    periods = {job: period(asked[job.name], f"--{job.name}") for job in JOBS}
    try:
        resolved = resolve(crew)
    except ToolError as exc:
        fail(exc.message)
    if len(resolved.clusters) < 2:  # one cluster: no fleet to survey
        periods = {job: None if job.name == "fleet" else every for job, every in periods.items()}
    enabled = [job for job in JOBS if periods[job] is not None]
    if not enabled:
        fail("every job is turned off (0); give at least one a period, e.g. --patrol 5m")
    log = Console(stderr=True, highlight=False, soft_wrap=True)
    say = sayer(lambda line: log.print(escape(line)), name="run")
    timings = (leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period)
    leadership = _election(resolved, enabled, timings, say, wanted=leader_elect and not once)
    runner = _Runner(resolved, planner_from_env(), say, verbose, leadership)
    stop = threading.Event()

    def on_ctrl_c(_signal: int, _frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # the second Ctrl-C: at once
        stop.set()
        say("stopping after the job in hand (Ctrl-C again to stop at once)")

    # SIGTERM (the kubelet stopping the pod) is a Ctrl-C: the job in hand finishes, the Lease
    # is given back.
    previous = {sig: signal.signal(sig, on_ctrl_c) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with serving(health_port, _ready(resolved, enabled)), taking_part(leadership):
            failed = _schedule(runner, enabled, periods, stop, once=once, say=say, asked=asked)
    except KeyboardInterrupt:
        failed = True  # cut short: what it remembered (proposals, intents) goes on next run
    except (HealthError, LeaseError) as exc:
        fail(str(exc))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stop.is_set():
        say("stopped")
    if as_json:
        Console(highlight=False, soft_wrap=True).print_json(json.dumps({"runs": runner.runs}))
    if failed or (once and stop.is_set()):
        raise typer.Exit(1)


def _ready(crew: Crew, enabled: list[Job]) -> list[Check]:
    """Ready while the cluster answers each enabled job's agent, as that agent's identity."""
    reached = []
    for agent in dict.fromkeys(job.agent for job in enabled):
        kube = crew.servers(agent).kube
        if kube is not None and (kube.kubeconfig, kube.context) not in reached:
            reached.append((kube.kubeconfig, kube.context))
    return [kube_api(kubeconfig, context) for kubeconfig, context in reached]


def _election(
    crew: Crew,
    enabled: list[Job],
    timings: tuple[float, float, float],
    say: Say,
    *,
    wanted: bool,
) -> Leadership | None:
    """The Lease of this set of jobs (`kubecrew-run-cluster-operator`, `-platform`, or both),
    taken as the first job's agent: each runner Deployment has its own. None when not `wanted`
    (no --leader-elect, or --once: a single pass for cron is not a replica)."""
    if not wanted:
        return None
    agents = list(dict.fromkeys(job.agent for job in enabled))
    name = "kubecrew-run-" + "-".join(agent.replace("_", "-") for agent in agents)
    kube = crew.servers(agents[0]).kube
    try:
        return election(
            name,
            kube.kubeconfig if kube else None,
            kube.context if kube else None,
            timings=timings,
            say=say,
        )
    except LeaseError as exc:
        fail(str(exc))


def _schedule(
    runner: _Runner,
    enabled: list[Job],
    periods: dict[Job, float | None],
    stop: threading.Event,
    *,
    once: bool,
    say: Say,
    asked: dict[str, str],
) -> bool:
    """Each job once (`once`), else each whenever it is due, until `stop`: one at a time, a
    Ctrl-C letting the job in hand finish. True when a --once job failed.

    With an election, only while holding the Lease: each job's start is stamped on it first,
    and a replica that takes over reads when each job is due from those stamps."""
    if once:
        return not all([runner.run(job) for job in enabled if not stop.is_set()])
    leadership = runner.leadership
    due = dict.fromkeys(enabled, time.monotonic())
    names = ", ".join(f"{job.name} every {asked[job.name]}" for job in enabled)
    say(f"running {names}; Ctrl-C stops")
    leading = leadership is None
    if leadership is not None and not leadership.leading:
        say(standing_by(leadership))
    while not stop.is_set():
        if leadership is not None and not leadership.leading:
            if leading:
                say(f"lost the Lease {leadership.lease}; standing by")
            leading = False
            if stop.wait(FENCE_CHECK_S):
                break
            continue
        if not leading and leadership is not None:
            leading = True
            say(f"leading: {leadership.identity} holds {leadership.lease}")
            due = _due(leadership, enabled, periods)
        job = min(due, key=lambda j: due[j])
        if not _until(due[job], stop, leadership):
            continue
        if leadership is not None and not _stamped(leadership, job, say):
            continue
        runner.run(job)
        due[job] = time.monotonic() + (periods[job] or 0.0)
    return False


def _until(when: float, stop: threading.Event, leadership: Leadership | None) -> bool:
    """Wait for the monotonic time `when`; False when stopped or the Lease lapsed first."""
    while (left := when - time.monotonic()) > 0:
        if stop.wait(min(left, FENCE_CHECK_S)):
            return False
        if leadership is not None and not leadership.leading:
            return False
    return not stop.is_set()


def _due(
    leadership: Leadership, enabled: list[Job], periods: dict[Job, float | None]
) -> dict[Job, float]:
    """When each job is due, by the starts stamped on the Lease: what the previous holder ran
    within its period is not run again."""
    stamps, now, wall = leadership.stamps(), time.monotonic(), time.time()
    due = {}
    for job in enabled:
        try:
            started = datetime.fromisoformat(stamps[f"started.{job.name}"]).timestamp()
        except (KeyError, ValueError):
            started = float("-inf")
        due[job] = now + max(0.0, started + (periods[job] or 0.0) - wall)
    return due


def _stamped(leadership: Leadership, job: Job, say: Say) -> bool:
    """Stamp `job`'s start on the Lease; False (the job is not run) when that failed."""
    from core.errors import ToolError

    try:
        leadership.stamp(f"started.{job.name}", datetime.now(UTC).isoformat())
    except ToolError as exc:
        say(f"{job.name} not started: its start could not be stamped ({exc})")
        return False
    return leadership.leading


@dataclass(frozen=True)
class _Runner:
    crew: Crew
    planner: Planner
    say: Say  # one line of news: text for people, or a JSON record (--log-format)
    verbose: bool
    leadership: Leadership | None = None  # with an election: the job stops if the Lease lapses
    runs: list[dict[str, Any]] = field(default_factory=list)  # every run, for --json

    def run(self, job: Job) -> bool:
        """One run of `job`, told in one line and one line per change; False when it failed."""
        from agents.cluster_operator.report import change_line, changes
        from agents.runtime.errors import AgentError, ToolFailed

        started = time.monotonic()
        stamp = datetime.now().strftime("%H:%M:%S")
        head = f"{stamp} {job.name} ({WHO[job.agent]})"
        record: dict[str, Any] = {"job": job.name, "agent": job.agent, "started": stamp}
        self.runs.append(record)
        try:
            answer, data = anyio.run(lambda: self._fenced(job))
        except ToolFailed as exc:
            reason = f"no cluster reachable: {exc.reason}" if exc.unreachable else exc.message
            self.say(f"{head} failed: {reason}")
            record.update(ok=False, error=reason, changes=[])
            return False
        except AgentError as exc:
            self.say(f"{head} failed: {exc.message}")
            record.update(ok=False, error=exc.message, changes=[])
            return False
        took = time.monotonic() - started
        made = changes(data)
        first = answer.strip().splitlines()[0].rstrip(":") if answer.strip() else "done"
        tail = f"; {len(made)} change(s):" if made else ""
        self.say(f"{head}, {took:.1f}s: {first}{tail}")
        for change in made:
            self.say(f"    - {change_line(change)}")
        if self.verbose:
            for line in answer.strip().splitlines()[1:]:
                self.say(f"    {line}")
        record.update(ok=True, seconds=round(took, 1), answer=answer, changes=list(made))
        return True

    async def _fenced(self, job: Job) -> tuple[str, dict[str, Any]]:
        """The job, cut short when the Lease lapses (before another replica may take it)."""
        from agents.runtime.errors import AgentError

        if self.leadership is None:
            return await self._ask(job)
        finished, answer = await fenced(self.leadership, lambda: self._ask(job))
        if not finished or answer is None:
            raise AgentError(f"cut short: the Lease {self.leadership.lease} lapsed")
        return answer

    async def _ask(self, job: Job) -> tuple[str, dict[str, Any]]:
        servers = self.crew.servers(job.agent)
        home = crew_home(self.crew.environ) / "agents" / job.agent
        opened: Callable[..., Any]
        extra: dict[str, Any] = {}
        if job.agent == "platform":
            from agents.platform.conversation import conversation as opened

            gitops = servers.gitops
            extra["repos"] = {gitops.label_value: gitops} if gitops is not None else {}
        else:
            from agents.cluster_operator.conversation import conversation as opened

            extra["clusters"] = self.crew.clusters
        async with opened(servers, self.planner, home=home, **extra) as talk:
            outcome = await talk.perform(job.name)
        return str(outcome.answer), dict(outcome.data or {})
