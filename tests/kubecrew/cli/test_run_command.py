"""`kubecrew run`, the installed command in a subprocess, on the team's sandbox: `--once` runs
each enabled job of the Cluster Operator and the Platform once and says what it did, one line
each; the escalations job settles the refused downscale as the org's arbiter; bad periods and
an unreachable cluster are one line, never a traceback."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.crew import crew_args, crew_env
from tests.support.fleet import fleet_kubeconfig
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import Team, escalate, mutations, state_of

OFF = {name: "0" for name in ("patrol", "capacity", "fleet", "escalations", "propagate",
                              "audit", "blueprints")}  # fmt: skip


def kubecrew_run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "run", *args], capture_output=True, text=True, env=crew_env(home),
        timeout=240, check=False,
    )  # fmt: skip


def only(**periods: str) -> list[str]:
    chosen = {**OFF, **periods}
    return [arg for name, every in chosen.items() for arg in (f"--{name}", every)]


def test_once_settles_the_escalation_as_the_arbiter(team: Team, tmp_path: Path) -> None:
    request = escalate(team)
    done = kubecrew_run(tmp_path / "home", "--once", *only(escalations="5m"), *crew_args(team))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert " escalations (Platform), " in line and "Escalations I may answer: 1." in line, line
    assert state_of(team, request) == "denied" and mutations(team) == []


def test_once_runs_every_job_in_order_one_line_each(team: Team, tmp_path: Path) -> None:
    done = kubecrew_run(tmp_path / "home", "--once", "--verbose", *crew_args(team))
    assert done.returncode == 0, done.stderr
    heads = [line.split(",")[0].split(" ", 1)[1] for line in done.stderr.splitlines()
             if not line.startswith("    ")]  # fmt: skip
    assert heads == [
        "patrol (Cluster Operator)", "capacity (Cluster Operator)", "escalations (Platform)",
        "propagate (Platform)", "audit (Platform)", "blueprints (Platform)",
    ], done.stderr  # fmt: skip
    assert "Traceback" not in done.stderr


def test_bad_periods_and_an_unreachable_cluster_are_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    bad = kubecrew_run(home, "--once", "--patrol", "5 minutes")
    assert bad.returncode == 1 and "--patrol '5 minutes': give a duration like 30s" in bad.stderr
    none = kubecrew_run(home, "--once", *only())
    assert none.returncode == 1 and "every job is turned off" in none.stderr

    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(DEAD_CLUSTER)
    failed = kubecrew_run(home, "--once", *only(patrol="5m"), "--kubeconfig", str(dead))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    [line] = failed.stderr.strip().splitlines()
    assert " patrol (Cluster Operator) failed: no cluster reachable" in line, line


def test_the_fleet_job_surveys_the_crew_files_clusters(sandbox: Sandbox, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with Sandbox(Options(home=tmp_path / "west", nodes=1, rate=RATE)) as west:
        fleet = fleet_kubeconfig(
            tmp_path / "fleet.kubeconfig", {"east": sandbox.kubeconfig, "west": west.kubeconfig}
        )
        (home / "crew.yaml").write_text(f"kubeconfig: {fleet}\nclusters: [east, west]\n")
        done = kubecrew_run(home, "--once", *only(fleet="5m"))
        asked = subprocess.run(
            [KUBECREW, "ask", "how are the clusters?", "-q"], capture_output=True, text=True,
            env=crew_env(home), timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert asked.returncode == 0 and asked.stdout.startswith("2 cluster(s):"), asked.stderr
    assert "- east: " in asked.stdout and "- west: 1 node(s)" in asked.stdout, asked.stdout
    [line] = done.stderr.strip().splitlines()
    assert " fleet (Cluster Operator), " in line and "2 cluster(s)" in line, line

    (home / "crew.yaml").write_text(f"kubeconfig: {fleet}\nclusters: east\n")
    bad = kubecrew_run(home, "--once", *only(fleet="5m"))
    assert bad.returncode == 1 and "clusters must list kubeconfig contexts" in bad.stderr
    assert "Traceback" not in bad.stderr


DEAD_CLUSTER = """\
apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: nobody, user: {token: not-a-secret}}]
contexts: [{name: gone, context: {cluster: gone, user: nobody}}]
current-context: gone
"""


def test_the_timers_run_until_ctrl_c(team: Team, tmp_path: Path) -> None:
    args = [KUBECREW, "run", *only(patrol="1s", escalations="1s"), *crew_args(team)]
    running = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=crew_env(tmp_path / "home"),
    )  # fmt: skip
    try:
        assert running.stderr is not None
        said = [running.stderr.readline() for _ in range(4)]
    finally:
        running.send_signal(signal.SIGINT)
        out, err = running.communicate(timeout=60)
    assert said[0].startswith("running patrol every 1s, escalations every 1s"), said
    assert [" patrol (" in s for s in said[1:]] == [True, False, True], said  # in turn, again
    assert running.returncode == 0 and err.strip().endswith("stopped"), err
    assert "stopping after the job in hand" in err
    assert out == "" and "Traceback" not in err
