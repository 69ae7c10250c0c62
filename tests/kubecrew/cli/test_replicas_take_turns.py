"""Two replicas of a long-lived part, as two real `kubecrew` processes on one sandbox, with
leader election on short timings: one works, the other stands by; `kill -9` of the one working
hands over within the lease duration, and the work is done exactly once.

- `watch --heal`, each replica with a home of its own and the state they share in one real
  PostgreSQL ($KUBECREW_DATABASE_URL), as pods have it: the holder is killed in the middle of a
  heal, after its write reached the cluster, while it validates the fix (20 s of cluster time,
  at life's pace here); the other takes the Lease, opens the incident again and takes it over:
  web is fixed by one audited write, the incident resolved once.
- `run`: the holder runs the patrol and is killed; the other takes over and does not run the
  patrol again within its period (the start stamped on the Lease says when it ran).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

import pytest

from agents.runtime.notify.incidents import open_incidents
from core.policy.settings import SHIPPED
from sandbox.server import Options, Sandbox
from tests.support.audit import mutations
from tests.support.crew import start_kubecrew
from tests.support.kubectl import Kubectl
from tests.support.postgres import fresh_database
from tests.support.shop import WEB
from tests.support.waiting import eventually

# A lease of 4 s renewed every 0.5 s; the holder stops 3 s after its last renewal.
ELECTION = ["--leader-elect", "--leader-elect-lease-duration", "4",
            "--leader-elect-renew-deadline", "3", "--leader-elect-retry-period", "0.5"]  # fmt: skip
LEASE_S = 4.0
GOOD, TYPO = "nginx:1.27", "nginx:1.27-alpinee"


@pytest.fixture
def database(request: pytest.FixtureRequest) -> str:
    return fresh_database(request.config)


class Replica:
    def __init__(self, name: str, process: subprocess.Popen[str], log: Path) -> None:
        self.name, self.process, self.log = name, process, log

    def said(self) -> str:
        return self.log.read_text()

    def says(self, text: str, timeout: float = 60) -> None:
        eventually(
            lambda: text in self.said() or self.process.poll() is not None,
            timeout=timeout,
            what=f"replica {self.name} saying {text!r}",
        )
        assert text in self.said(), self.said()

    def kill(self) -> float:
        """SIGKILL: no handler, no release; when it happened (monotonic)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        return time.monotonic()


@contextmanager
def replicas(args: list[str], homes: list[Path], **env: str) -> Iterator[list[Replica]]:
    """`kubecrew *args` started once per home, the first alone until it leads; each stopped
    with Ctrl-C (or killed) at the end."""
    started: list[Replica] = []
    try:
        for index, home in enumerate(homes):
            name = "ab"[index]
            log = home / f"replica-{name}.log"
            process = start_kubecrew(args, home, log, **env)
            started.append(Replica(name, process, log))
            started[-1].says("leading:" if index == 0 else "Lease", timeout=60)
        yield started
    finally:
        for replica in started:
            if replica.process.poll() is None:
                replica.process.send_signal(signal.SIGINT)
        for replica in started:
            try:
                replica.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                replica.process.kill()


@pytest.fixture
def slow_sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """Cluster time at life's pace: a heal's validation lasts long enough to be cut."""
    with Sandbox(Options(home=tmp_path / "sandbox", nodes=2, rate=1.0)) as running:
        yield running


def test_a_heal_cut_by_kill_9_is_taken_over_by_the_other_replica_and_done_once(
    slow_sandbox: Sandbox, database: str, tmp_path: Path
) -> None:
    kubectl = Kubectl(slow_sandbox.kubeconfig, tmp_path / "cache")
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("create", "namespace", "kubecrew-system")
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=90s")
    store = tmp_path / "store.sqlite"
    args = ["watch", "-n", "shop", "--heal", "--every", "1s", *ELECTION,
            "--kubeconfig", str(slow_sandbox.kubeconfig), "--policies", str(SHIPPED),
            "--policy-store", str(store)]  # fmt: skip

    with ExitStack() as stack:
        homes = [tmp_path / "a", tmp_path / "b"]
        pods = replicas(args, homes, KUBECREW_DATABASE_URL=database)
        first, second = stack.enter_context(pods)
        second.says("stands by")
        kubectl("set", "image", "deployment/web", f"web={TYPO}", "-n", "shop")
        first.says("incident opened", timeout=60)

        def image() -> str:
            web = kubectl.json("get", "deployment", "web", "-n", "shop")
            return str(web["spec"]["template"]["spec"]["containers"][0]["image"])

        eventually(lambda: image() == GOOD, timeout=90, what="the first replica's fix applied")
        killed = first.kill()  # while it validates the fix
        assert "handled" not in first.said(), first.said()

        second.says("leading:", timeout=30)
        took_over = time.monotonic() - killed
        second.says("the previous holder left 1 incident(s) under way: Deployment/shop/web")
        second.says("incident resolved", timeout=120)

    assert took_over < LEASE_S + 3  # the lease duration, a retry and this test's polling
    assert image() == GOOD
    assert [(subject, result) for subject, _, result in mutations(store)] == [
        ("Deployment shop/web", "applied")
    ]
    book = open_incidents(tmp_path / "none.sqlite", {"KUBECREW_DATABASE_URL": database})
    try:
        incident = book.get("Deployment/shop/web")
    finally:
        book.close()
    assert incident is not None and incident.state == "resolved" and incident.opened == 1
    assert not [*homes[1].glob("clusters/*/agents/incidents.sqlite")]  # in the database only


PATROL_S = 12
ONLY_THE_PATROL = ["--capacity", "0", "--fleet", "0", "--escalations", "0",
                   "--propagate", "0", "--audit", "0", "--blueprints", "0"]  # fmt: skip


def patrol_starts(replica: Replica) -> list[datetime]:
    """When each patrol run of the replica started (its log line's HH:MM:SS), today."""
    today = datetime.now().date()
    found = re.findall(r"^(\d\d:\d\d:\d\d) patrol \(", replica.said(), flags=re.MULTILINE)
    return [datetime.combine(today, datetime.strptime(t, "%H:%M:%S").time()) for t in found]


def test_a_job_run_by_a_killed_holder_is_not_run_again_within_its_period(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", "kubecrew-system")
    args = ["run", "--patrol", f"{PATROL_S}s", *ONLY_THE_PATROL, *ELECTION,
            "--kubeconfig", str(sandbox.kubeconfig)]  # fmt: skip

    with replicas(args, [tmp_path / "a", tmp_path / "b"]) as (first, second):
        eventually(lambda: patrol_starts(first), timeout=60, what="the holder's first patrol")
        first.kill()
        second.says("leading:", timeout=30)
        eventually(lambda: patrol_starts(second), timeout=60, what="the next holder's patrol")

    [ran] = patrol_starts(first)
    lease = kubectl.json("get", "lease", "kubecrew-run-cluster-operator", "-n", "kubecrew-system")
    assert "kubecrew.io/started.patrol" in lease["metadata"]["annotations"]
    # Not at the takeover: when the period since the killed holder's start had passed.
    assert (patrol_starts(second)[0] - ran).total_seconds() >= PATROL_S - 1
