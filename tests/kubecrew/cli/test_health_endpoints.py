"""The long-lived parts answer `/healthz` and `/readyz` over real HTTP (`kubecrew.health`).

Each test starts the installed `kubecrew` as a process, as the container does, with a health
port from `--health-port` or `$KUBECREW_HEALTH_PORT`: alive at once, ready only once the servers
the part needs answer (the API server through its kubeconfig, its own receiver or MCP port,
Slack), and saying why not in one line until then. Without a health port nothing is served.
"""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.crew import crew_env, start_kubecrew
from tests.support.mcp_hosts import KUBECREW, free_port
from tests.support.slack import running_slack
from tests.support.slack_app import SECRET
from tests.support.waiting import eventually

TOKEN = secrets.token_urlsafe(32)
ALL_JOBS_BUT_PATROL = ["--capacity", "0", "--fleet", "0", "--escalations", "0",
                       "--propagate", "0", "--audit", "0", "--blueprints", "0"]  # fmt: skip


class Part:
    """A `kubecrew` process with a health port, and its log."""

    def __init__(self, process: subprocess.Popen[str], log: Path, port: int) -> None:
        self.process, self.log, self.port = process, log, port

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as got:
                return got.status, got.read().decode()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode()

    def said(self) -> str:
        return self.log.read_text()


@contextmanager
def started(args: list[str], home: Path, **env: str) -> Iterator[Part]:
    """`kubecrew *args` until it says where its health endpoints are; stopped with Ctrl-C."""
    port = int(env.get("KUBECREW_HEALTH_PORT") or args[args.index("--health-port") + 1])
    log = home / "part.log"
    process = start_kubecrew(args, home, log, **env)
    part = Part(process, log, port)
    try:
        eventually(
            lambda: "health: /healthz and /readyz on" in part.said() or process.poll() is not None,
            timeout=60,
            what=f"kubecrew {args[0]} serving its health endpoints",
        )
        assert process.poll() is None, part.said()
        yield part
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def closed_port() -> int:
    """A loopback port nothing listens on (free a moment ago, and nobody here binds it)."""
    return free_port()


def unreachable_kubeconfig(path: Path, port: int) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: gone, cluster: {{server: 'https://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: someone, user: {token: not-a-secret}}]\n"
        "contexts: [{name: gone, context: {cluster: gone, user: someone}}]\n"
        "current-context: gone\n"
    )
    return path


def test_a_part_is_alive_but_not_ready_while_the_api_server_does_not_answer(
    tmp_path: Path,
) -> None:
    api_port, health = closed_port(), free_port()
    kubeconfig = unreachable_kubeconfig(tmp_path / "gone.yaml", api_port)
    args = ["watch", "--kubeconfig", str(kubeconfig), "--every", "0", "--health-port", str(health)]
    with started(args, tmp_path / "home") as watch:
        assert watch.get("/healthz") == (200, "ok\n")
        status, body = eventually(
            lambda: (got := watch.get("/readyz")) and "does not answer" in got[1] and got,
            timeout=30,
            what="/readyz naming the API server that does not answer",
        )
        assert status == 503
        assert body.startswith("not ready: the Kubernetes API does not answer: ")
        assert f"port={api_port}" in body, body
        assert body.count("\n") == 1  # one line
        assert watch.get("/debug")[0] == 404  # nothing else is served


def test_readiness_follows_the_api_server_as_it_comes_and_goes(tmp_path: Path) -> None:
    health, mcp = free_port(), free_port()
    env = {"KUBECREW_MCP_TOKEN": TOKEN, "KUBECREW_HEALTH_PORT": str(health)}
    with ExitStack() as running:
        with Sandbox(Options(home=tmp_path / "sandbox", nodes=1, rate=RATE)) as sandbox:
            args = ["mcp", "kube", "--kubeconfig", str(sandbox.kubeconfig), "--transport",
                    "http", "--port", str(mcp)]  # fmt: skip
            server = running.enter_context(started(args, tmp_path / "home", **env))
            eventually(lambda: server.get("/readyz") == (200, "ready\n"), timeout=30,
                       what="the kube MCP server ready on the sandbox")  # fmt: skip
        _, body = eventually(  # the sandbox has stopped; the server runs on
            lambda: (got := server.get("/readyz"))[0] == 503 and got,
            timeout=30,
            what="not ready once the sandbox's API server is gone",
        )
        assert "the Kubernetes API does not answer" in body, body
        assert server.get("/healthz") == (200, "ok\n")


@pytest.mark.parametrize(
    "part",
    ["watch", "run", "slack"],
)
def test_each_long_lived_part_is_ready_once_its_servers_answer(
    tmp_path: Path, shared_sandbox: Sandbox, part: str
) -> None:
    health = free_port()
    crew = ["--kubeconfig", str(shared_sandbox.kubeconfig), "--health-port", str(health)]
    with running_slack() as slack:
        args, env = {
            "watch": (
                ["watch", "--every", "0", "--alertmanager-port", str(free_port())],
                {"KUBECREW_WATCH_TOKEN": TOKEN},
            ),
            "run": (["run", "--patrol", "1h", *ALL_JOBS_BUT_PATROL], {}),
            "slack": (
                ["slack", "--mode", "http", "--port", "0", "--api-url", slack.url,
                 "--policy-store", str(tmp_path / "store.sqlite")],
                {"SLACK_BOT_TOKEN": slack.bot_token, "SLACK_SIGNING_SECRET": SECRET},
            ),
        }[part]  # fmt: skip
        with started([*args, *crew], tmp_path / "home", **env) as running:
            assert running.get("/healthz") == (200, "ok\n")
            eventually(lambda: running.get("/readyz") == (200, "ready\n"), timeout=45,
                       what=f"kubecrew {part} ready on the sandbox")  # fmt: skip


def test_without_a_health_port_nothing_is_served(tmp_path: Path) -> None:
    kubeconfig = unreachable_kubeconfig(tmp_path / "gone.yaml", closed_port())
    done = subprocess.run(
        [KUBECREW, "mcp", "kube", "--kubeconfig", str(kubeconfig)],  # stdio: ends with stdin
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=crew_env(tmp_path / "home"),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "health:" not in done.stderr


def test_a_taken_health_port_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    kubeconfig = unreachable_kubeconfig(tmp_path / "gone.yaml", closed_port())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [KUBECREW, "watch", "--kubeconfig", str(kubeconfig), "--health-port", str(port)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            env=crew_env(tmp_path / "home"),
            check=False,
        )
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    assert f"cannot serve health endpoints on 127.0.0.1:{port}" in said, done.stderr
    assert "choose a free port with --health-port" in said
    assert "Traceback" not in done.stderr
