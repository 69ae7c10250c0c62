"""`kubecrew sandbox up | down | status` as a user runs them: the real console script in
subprocesses, each sandbox in its own temporary home, reached afterwards by real kubectl."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.sandbox_command import (
    KUBECREW,
    assert_one_line_error,
    kubecrew,
    sandbox_env,
    sandbox_pid,
    stop,
)


@pytest.fixture(scope="module")
def detached(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One detached sandbox for the read-only tests: (home, stdout of `up --detach`)."""
    home = tmp_path_factory.mktemp("cli") / "sandbox"
    started = kubecrew("sandbox", "up", "--detach", home=home)
    assert started.returncode == 0, started.stderr
    try:
        yield home, started.stdout
    finally:
        stop(home)


def test_up_detach_prints_url_nodes_and_export_line(detached: tuple[Path, str]) -> None:
    home, out = detached
    url = (home / "url").read_text()
    assert url.startswith("https://127.0.0.1:")
    assert f"Sandbox ready at {url} with 3 nodes" in out
    assert f"export KUBECONFIG={home / 'kubeconfig'}\n" in out
    assert f"kubecrew sandbox down --home {home}" in out
    assert "real time" not in out  # its clock is real time: ages read true


def test_a_faster_clock_says_what_it_does_to_ages(tmp_path: Path) -> None:
    home = tmp_path / "sandbox"
    started = kubecrew("sandbox", "up", "--detach", "--nodes", "1", "--rate", "10", home=home)
    try:
        assert started.returncode == 0, started.stderr
        assert "Its clock runs 10x real time: controllers, probes and timeouts act 10 times" in (
            started.stdout
        )
        assert "day behind" not in started.stdout  # it starts at the real now (sandbox/clock.py)
    finally:
        stop(home)


def test_status_shows_running_sandbox_with_three_ready_nodes(detached: tuple[Path, str]) -> None:
    home, _ = detached
    done = kubecrew("sandbox", "status", home=home)
    assert done.returncode == 0, done.stderr
    fields = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert fields["state"] == "running"
    assert fields["pid"] == str(sandbox_pid(home))
    assert fields["url"] == (home / "url").read_text()
    assert fields["kubeconfig"] == str(home / "kubeconfig")
    assert fields["nodes"] == "3 (3 Ready)"
    assert int(fields["namespaces"]) >= 4  # default, kube-system, kube-public, kube-node-lease


def test_status_as_json_and_yaml_says_the_same(detached: tuple[Path, str]) -> None:
    home, _ = detached
    as_json = kubecrew("sandbox", "status", "-o", "json", home=home)
    as_yaml = kubecrew("sandbox", "status", "-o", "yaml", home=home)
    assert as_json.returncode == as_yaml.returncode == 0, as_json.stderr + as_yaml.stderr
    found = json.loads(as_json.stdout)
    assert yaml.safe_load(as_yaml.stdout) == found
    assert found["state"] == "running" and found["pid"] == sandbox_pid(home)
    assert found["url"] == (home / "url").read_text()
    assert found["kubeconfig"] == str(home / "kubeconfig") and found["home"] == str(home)
    assert found["nodes"] == found["ready_nodes"] == 3 and found["namespaces"] >= 4


def test_status_as_json_of_no_sandbox_says_so_and_exits_1(tmp_path: Path) -> None:
    done = kubecrew("sandbox", "status", "-o", "json", home=tmp_path / "nothing-here")
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "state": "not running",
        "home": str(tmp_path / "nothing-here"),
    }


def test_status_never_prints_the_admin_token(detached: tuple[Path, str]) -> None:
    home, up_output = detached
    credentials = (home / "credentials.json").read_text()
    token = credentials.split('"admin_token": "')[1].split('"')[0]
    status = kubecrew("sandbox", "status", home=home)
    assert token not in status.stdout + status.stderr + up_output


def test_kubectl_reaches_the_sandbox_through_the_written_kubeconfig(
    detached: tuple[Path, str], tmp_path: Path
) -> None:
    home, _ = detached
    kubectl = Kubectl(home / "kubeconfig", tmp_path / "kube-cache")
    names = kubectl("get", "nodes", "-o", "name").split()
    assert len(names) == 3 and all(name.startswith("node/") for name in names)


def test_second_up_from_the_same_home_is_refused(detached: tuple[Path, str]) -> None:
    home, _ = detached
    for mode in ((), ("--detach",)):
        line = assert_one_line_error(kubecrew("sandbox", "up", *mode, home=home))
        assert f"already running (pid {sandbox_pid(home)})" in line
        assert "kubecrew sandbox down" in line


def test_down_stops_the_sandbox_and_status_then_reports_not_running(tmp_path: Path) -> None:
    home = tmp_path / "sandbox"
    assert kubecrew("sandbox", "up", "--detach", "--nodes", "1", home=home).returncode == 0
    pid = sandbox_pid(home)
    try:
        down = kubecrew("sandbox", "down", home=home)
        assert down.returncode == 0, down.stderr
        assert f"Sandbox stopped: pid {pid}" in down.stdout
        assert not (home / "sandbox.pid").exists()
        status = kubecrew("sandbox", "status", home=home)
        assert status.returncode == 1
        assert "not running" in status.stdout
        again = kubecrew("sandbox", "down", home=home)
        assert (again.returncode, again.stdout.strip()) == (0, f"no sandbox is running from {home}")
    finally:
        stop(home)


def test_status_without_any_sandbox_exits_1(tmp_path: Path) -> None:
    done = kubecrew("sandbox", "status", home=tmp_path / "never-started")
    assert done.returncode == 1
    assert "not running" in done.stdout


def test_foreground_up_stops_cleanly_on_sigint(tmp_path: Path) -> None:
    home = tmp_path / "sandbox"
    command = [KUBECREW, "sandbox", "up", "--nodes", "2", "--home", str(home)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sandbox_env(home)
    ) as process:
        try:
            assert process.stdout is not None
            lines = [process.stdout.readline() for _ in range(2)]
            assert "with 2 nodes" in lines[0], lines
            assert lines[1] == f"export KUBECONFIG={home / 'kubeconfig'}\n"
            assert kubecrew("sandbox", "status", home=home).returncode == 0
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
        finally:
            process.kill()
    assert process.returncode == 0, err
    assert "Sandbox stopped." in out
    assert not (home / "sandbox.pid").exists()


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_port_in_use_is_one_clear_line(tmp_path: Path, busy_port: int) -> None:
    line = assert_one_line_error(
        kubecrew("sandbox", "up", "--port", str(busy_port), home=tmp_path / "sandbox")
    )
    assert f"cannot listen on 127.0.0.1:{busy_port}" in line
    assert "--port" in line


@pytest.mark.parametrize(
    ("state", "says"),
    [
        pytest.param("missing-dir/state.db", "does not exist", id="parent-directory-missing"),
        pytest.param(".", "is a directory", id="state-is-a-directory"),
    ],
)
def test_bad_state_path_is_one_clear_line(tmp_path: Path, state: str, says: str) -> None:
    for mode in ((), ("--detach",)):
        done = kubecrew(
            "sandbox", "up", *mode, "--state", str(tmp_path / state), home=tmp_path / "sandbox"
        )
        assert says in assert_one_line_error(done)


def test_detached_server_that_dies_shows_its_log(tmp_path: Path) -> None:
    state = tmp_path / "not-a-database.db"
    state.write_text("this is not SQLite\n" * 100)
    home = tmp_path / "sandbox"
    try:
        done = kubecrew("sandbox", "up", "--detach", "--state", str(state), home=home)
    finally:
        stop(home)
    assert done.returncode == 1
    assert "the sandbox server exited with status" in done.stderr
    assert str(home / "sandbox.log") in done.stderr
    assert "not a database" in done.stderr  # the end of the server's own log


@pytest.mark.parametrize(
    ("args", "teaches"),
    [
        pytest.param((), "kubecrew sandbox up --detach", id="kubecrew"),
        pytest.param(("sandbox",), "status", id="sandbox"),
        pytest.param(("sandbox", "up"), "kubecrew sandbox up --detach --port", id="up"),
        pytest.param(("sandbox", "down"), "kubecrew sandbox down --home", id="down"),
        pytest.param(("sandbox", "status"), "kubecrew sandbox status --home", id="status"),
        pytest.param(("version",), "kubecrew version", id="version"),
    ],
)
def test_every_command_has_help_with_examples(args: tuple[str, ...], teaches: str) -> None:
    done = kubecrew(*args, "--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: kubecrew" in done.stdout
    assert teaches in done.stdout


def test_version_names_kubecrew_and_the_served_kubernetes_version() -> None:
    done = kubecrew("version")
    assert done.returncode == 0
    assert done.stdout.startswith("kubecrew 0.")
    assert "Kubernetes v1.37" in done.stdout
