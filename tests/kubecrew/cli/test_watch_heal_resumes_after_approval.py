"""`kubecrew watch --heal` as it runs: the watcher, its patrol and the healer with the crew's
servers (kube gated by the team's policies, the policy server, the GitOps repository). web's
image typo opens an incident; its heal asks shop-admins (the team's ChangePolicy) and the
incident waits. alice grants the request with `kubecrew approvals grant` (another process);
the next patrol pass resumes the heal on the incident's thread, once, saying who answered;
the fix is merged by pull request, validated, and the incident resolved."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest
from anyio.from_thread import start_blocking_portal

from agents.dev_team.incidents import Healer
from agents.runtime.notify.incidents import Incident, Incidents, Wait
from agents.runtime.notify.watcher import WatchPlan, watch
from agents.runtime.toolbox import Servers
from core.policy.store import open_store
from kubecrew.crew import resolve
from sandbox.server import Sandbox
from tests.support.crew import crew_env, crew_of, prs
from tests.support.heals import TYPO, break_web
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import FAST, Team, proposals
from tests.support.waiting import eventually

WEB = "Deployment/shop/web"


class Running:
    """The watcher in a thread of its own (an anyio portal), with the log it wrote."""

    def __init__(self, plan: WatchPlan, healer: Healer, lines: list[str]) -> None:
        self.plan = plan
        self.lines = lines
        self._stack = ExitStack()
        portal = self._stack.enter_context(start_blocking_portal())
        self._stop = portal.call(anyio.Event)
        self._portal = portal
        self._done = portal.start_task_soon(
            lambda: watch(
                plan, healer, say=lines.append, stop=self._stop, resume=healer.resume_answered
            )
        )

    def stop(self) -> None:
        self._portal.call(self._stop.set)
        self._done.result(timeout=30)
        self._stack.close()

    def incident(self) -> Incident | None:
        store = Incidents(self.plan.incidents)
        try:
            return store.get(WEB)
        finally:
            store.close()

    def waiting(self) -> list[Wait]:
        store = Incidents(self.plan.incidents)
        try:
            return [wait for _, wait in store.waiting()]
        finally:
            store.close()


def _watching(
    team: Team, tmp_path: Path, *, max_heals: int = 2
) -> tuple[WatchPlan, Healer, list[str]]:
    """The watcher's plan and healer as `kubecrew watch --heal` builds them from the crew's
    options naming the team's cluster, repository, policies and store."""
    environ = {"KUBECREW_HOME": str(tmp_path / "home")}
    servers = resolve(crew_of(team), environ).servers("dev_team")
    plan = WatchPlan(
        servers=Servers(kube=servers.kube),
        namespaces=("shop",),
        every_s=1.0,
        wait_s=2,
        incidents=tmp_path / "incidents.sqlite",
    )
    lines: list[str] = []
    healer = Healer(
        servers,
        incidents=plan.incidents,
        home=team.home,
        settings=FAST,
        max_heals=max_heals,
        say=lines.append,
    )
    return plan, healer, lines


@pytest.fixture
def running(guarded: Team, tmp_path: Path) -> Iterator[Running]:
    started = Running(*_watching(guarded, tmp_path))
    try:
        yield started
    finally:
        started.stop()


def grant(request: str, team: Team, home: Path) -> None:
    done = subprocess.run(
        [KUBECREW, "approvals", "grant", request, "--as", "alice", "--group", "shop-admins",
         "--store", str(team.store)],
        capture_output=True, text=True, env=crew_env(home), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_heal_waiting_for_approval_resumes_once_when_granted_elsewhere(
    guarded: Team, sandbox: Sandbox, running: Running, tmp_path: Path
) -> None:
    break_web(guarded, sandbox)
    [wait] = eventually(running.waiting, timeout=60, what="web's heal waiting for approval")
    incident = running.incident()
    assert incident is not None and incident.state == "waiting"
    assert wait.thread == WEB and "group shop-admins answer " + wait.request in wait.asked
    said = f"waiting for approval {wait.request}"  # the log line follows the book's record
    eventually(lambda: any(said in line for line in running.lines), what=f"{said!r} logged")
    assert prs(guarded) == [] and guarded.image() == TYPO

    grant(wait.request, guarded, tmp_path / "home")

    def resolved() -> bool:
        now = running.incident()
        return now is not None and now.state == "resolved"

    eventually(resolved, timeout=60, what="web's incident resolved after the grant")
    [resumed] = [line for line in running.lines if "resuming the heal" in line]
    said = f"approval {wait.request} granted by person alice via cli; resuming the heal of "
    assert resumed.startswith(said) and resumed.endswith(" on Deployment web in shop"), resumed
    healed = [line for line in running.lines if line.startswith("handled ")]
    assert len(healed) == 2 and "\nHealed Deployment web in shop" in healed[-1], healed
    assert running.waiting() == []
    assert guarded.image() == "nginx:1.27"
    [pr] = prs(guarded)
    assert pr.state == "merged"
    assert proposals(guarded) == 1
    store = open_store(str(guarded.store))
    try:
        assert store.approval(wait.request).claimed_by == f"agent dev_team {WEB}"
    finally:
        store.close()


API = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - {name: api, image: nginx:1.27-alpinee}
"""


def test_heals_beyond_max_heals_wait_their_turn_and_the_log_says_so(
    team: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    team.kubectl("apply", "-f", "-", input=API)
    break_web(team, sandbox)  # both failing before the watcher starts: its first look opens both
    plan, healer, lines = _watching(team, tmp_path, max_heals=1)
    running = Running(plan, healer, lines)
    try:

        def both_handled() -> bool:
            store = Incidents(plan.incidents)
            try:
                seen = {i.name: i.state for i in store.all()}
            finally:
                store.close()
            handled = [line for line in lines if line.startswith("handled ")]
            return {"web", "api"} <= set(seen) and len(handled) >= 2

        eventually(both_handled, timeout=90, what="web and api both handled")
    finally:
        running.stop()
    turns = [line for line in lines if "waits its turn: 1 heal(s) under way (--max-heals)" in line]
    assert len(turns) == 1, lines
    assert team.image() == "nginx:1.27"
