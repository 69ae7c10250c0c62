"""Containers that exit: CrashLoopBackOff, OOMKilled, StartError, Completed jobs."""

from __future__ import annotations

from tests.sandbox.kubelet.podspecs import (
    container,
    event_count,
    logs,
    messages,
    pod,
    status,
    waiting_reason,
)
from tests.support.simulation import Simulation


def test_exit_1_crash_loops_with_rising_restarts_and_previous_logs() -> None:
    sim = Simulation(nodes=1)
    command = ["sh", "-c", "echo starting up; echo fatal: cannot reach db; exit 1"]
    sim.apply(pod("crash", {"name": "app", "image": "busybox:1.36", "command": command}))
    sim.run_for(3)
    assert container(sim, "crash")["restartCount"] >= 1
    sim.run_for(60)
    app = container(sim, "crash")
    assert app["restartCount"] >= 3
    assert waiting_reason(sim, "crash") == "CrashLoopBackOff"
    assert app["state"]["waiting"]["message"].startswith("back-off ")
    last = app["lastState"]["terminated"]
    assert last["exitCode"] == 1 and last["reason"] == "Error"
    assert status(sim, "crash")["phase"] == "Running"
    assert logs(sim, "crash", "app", previous=True).splitlines() == [
        "starting up",
        "fatal: cannot reach db",
    ]
    backoff = messages(sim, "crash", "BackOff")
    assert backoff and backoff[0].startswith(
        "Back-off restarting failed container app in pod crash_default("
    )
    assert event_count(sim, "crash", "BackOff") >= 2
    before = app["restartCount"]
    sim.run_for(200)
    assert container(sim, "crash")["restartCount"] <= before + 3  # 40 s, 80 s, 160 s apart


def test_leaking_container_is_oom_killed_at_its_limit() -> None:
    sim = Simulation(nodes=1)
    leaky = {
        "name": "app",
        "image": "ghcr.io/kubecrew/leaky-app:1.0.0",
        "resources": {"limits": {"memory": "100Mi"}},
    }
    sim.apply(pod("leak", leaky))
    sim.run_until(lambda: container(sim, "leak")["restartCount"] >= 1, timeout=60)
    last = container(sim, "leak")["lastState"]["terminated"]
    assert last["reason"] == "OOMKilled" and last["exitCode"] == 137
    node = sim.get("nodes", "", "node-1")
    assert node is not None
    oom = sim.events_for(node, reason="OOMKilling")
    assert oom and oom[0]["message"].startswith("Memory cgroup out of memory: Killed process ")


def test_unknown_binary_fails_to_start_and_crash_loops() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("typo", {"name": "web", "image": "nginx:1.27", "command": ["nginxx"]}))
    sim.run_for(15)
    web = container(sim, "typo")
    terminated = web["lastState"].get("terminated") or web["state"].get("terminated")
    assert terminated["reason"] == "StartError" and terminated["exitCode"] == 128
    assert 'exec: "nginxx": executable file not found in $PATH' in terminated["message"]
    assert any('exec: "nginxx"' in m for m in messages(sim, "typo", "Failed"))


def test_run_to_completion_with_restart_policy_never_succeeds() -> None:
    sim = Simulation(nodes=1)
    command = ["sh", "-c", "echo working; sleep 5; echo done"]
    sim.apply(
        pod(
            "job",
            {"name": "main", "image": "busybox:1.36", "command": command},
            restartPolicy="Never",
        )
    )
    sim.run_for(3)
    assert status(sim, "job")["phase"] == "Running"
    sim.run_for(10)
    current = status(sim, "job")
    assert current["phase"] == "Succeeded"
    terminated = current["containerStatuses"][0]["state"]["terminated"]
    assert terminated["reason"] == "Completed" and terminated["exitCode"] == 0
    ready = next(c for c in current["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["reason"] == "PodCompleted"
    assert logs(sim, "job", "main").splitlines() == ["working", "done"]


def test_failing_command_with_restart_policy_never_fails_the_pod() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("job", {"image": "busybox:1.36", "command": ["false"]}, restartPolicy="Never"))
    sim.run_for(5)
    assert status(sim, "job")["phase"] == "Failed"
    assert container(sim, "job")["state"]["terminated"]["exitCode"] == 1


def test_busybox_without_command_completes_and_crash_loops_under_always() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("bb", {"image": "busybox:1.36"}))
    sim.run_for(20)
    bb = container(sim, "bb")
    assert bb["lastState"]["terminated"]["reason"] == "Completed"
    assert bb["restartCount"] >= 2


def test_postgres_without_password_exits_with_its_error() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("db", {"name": "postgres", "image": "postgres:17"}))
    sim.run_until(lambda: container(sim, "db")["restartCount"] >= 1, timeout=30)
    assert "POSTGRES_PASSWORD" in logs(sim, "db", "postgres", previous=True)
    assert container(sim, "db")["lastState"]["terminated"]["exitCode"] == 1
