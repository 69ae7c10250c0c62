"""`kubecrew chat` as a person uses it: the installed command in a real pseudo-terminal (stdlib
`pty`), so prompt_toolkit reads keys from a terminal and Rich writes to one. The test types a
question about a sandbox whose `web` crash-loops, reads the answer, lists the pending approval
requests and grants one, all in one session.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.store.sqlite import SqliteStore
from sandbox.server import Sandbox
from tests.mcp.kube.test_diagnosis import NS, Doctor, deployment
from tests.slack.conftest import escalated
from tests.support.kubectl import Kubectl

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>()][0-9A-Za-z]?")
CURSOR_QUERY = b"\x1b[6n"  # prompt_toolkit asks where the cursor is; a terminal answers


class Terminal:
    """A process on the slave side of a pty; what it wrote, read from the master side."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.raw = b""
        self.seen = 0  # how much of the screen text `expect` has consumed

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, pattern: str, *, timeout: float = 60) -> str:
        """Read until `pattern` (a regex) shows in the text after the last match; that text."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()[self.seen :]
            found = re.search(pattern, text)
            if found:
                self.seen += found.end()
                return text[: found.end()]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} not shown in {timeout} s; screen:\n{text}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process closed the terminal
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"chat exited before {pattern!r}; screen:\n{text}")
                if CURSOR_QUERY in chunk:
                    os.write(self.master, b"\x1b[1;1R")
                self.raw += chunk

    def text(self) -> str:
        return _ANSI.sub("", self.raw.decode(errors="replace")).replace("\r", "")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)


@pytest.fixture
def crashing(sandbox: Sandbox, kubectl: Kubectl) -> Path:
    kubectl("create", "namespace", NS)
    container = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    kubectl("apply", "-f", "-", input=deployment("web", container))
    Doctor(sandbox).finding("CrashLoopBackOff", namespace=NS, kind="deployment", name="web")
    return sandbox.kubeconfig


@pytest.fixture
def terminal(crashing: Path, tmp_path: Path) -> Iterator[Terminal]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env.update(KUBECREW_HOME=str(tmp_path / "home"), KUBECREW_MODEL_GUARD="1", TERM="xterm")
    store = tmp_path / "policy" / "store.sqlite"
    args = [KUBECREW, "chat", "--kubeconfig", str(crashing), "--store", str(store),
            "--as", "alice", "--group", "shop-admins"]  # fmt: skip
    opened = Terminal(args, env)
    try:
        yield opened
    finally:
        opened.close()


def test_chat_answers_a_question_and_grants_a_pending_approval(
    terminal: Terminal, tmp_path: Path
) -> None:
    terminal.expect(r"kubecrew chat.*as person alice")
    terminal.expect(r"kubecrew>")
    terminal.type("why is web \\\r")  # a trailing backslash: the question goes on
    terminal.expect(r"\.\.\.")
    terminal.type("failing?\r")
    answer = terminal.expect(r"dev team · thread \w+")
    assert "Deployment web in shop is failing:" in answer
    assert '"config is broken"' in answer and "Evidence:" in answer

    request = escalated(tmp_path / "policy" / "store.sqlite")
    terminal.type("approvals\r")
    listed = terminal.expect(r"Answer with 'approve <id>'")
    assert request.id in listed and "1 approval request(s) waiting" in listed

    terminal.type(f"approve {request.id} because the sale is over\r")
    terminal.expect(rf"{request.id}: granted by alice, recorded; the request is granted")
    terminal.type("exit\r")
    terminal.expect("bye")
    assert terminal.process.wait(timeout=15) == 0
    store = SqliteStore(tmp_path / "policy" / "store.sqlite")
    try:
        ((answer_given),) = store.approval(request.id).answers
    finally:
        store.close()
    assert (answer_given.by.name, answer_given.via) == ("alice", "cli")
    assert "why is web" in (tmp_path / "home" / "chat_history").read_text()
