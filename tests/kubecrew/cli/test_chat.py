"""`kubecrew chat` as a person uses it: the installed command in a real pseudo-terminal (stdlib
`pty`, tests/support/terminal.py), so prompt_toolkit reads keys from a terminal and Rich writes
to one. The test types a question about a sandbox whose `web` crash-loops, reads the answer,
lists the pending approval requests and grants one, all in one session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.store.sqlite import SqliteStore
from sandbox.server import Sandbox
from tests.support.diagnosis import NS, Doctor, deployment
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import free_port
from tests.support.policies import escalated
from tests.support.terminal import Terminal

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


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


def test_chat_outlives_a_model_provider_it_cannot_reach(crashing: Path, tmp_path: Path) -> None:
    """The real OpenAI client, pointed at a local port where nothing listens: the failed turn
    is one line naming the model and where it was sought, and the next question is answered."""
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env.update(KUBECREW_HOME=str(tmp_path / "home"), KUBECREW_MODEL="openai:gpt-4.1",
               OPENAI_BASE_URL=nowhere, OPENAI_API_KEY="sk-local", OPENAI_MAX_RETRIES="0",
               TERM="xterm")  # fmt: skip
    opened = Terminal([KUBECREW, "chat", "--kubeconfig", str(crashing)], env)
    try:
        opened.expect(r"kubecrew>")
        opened.type("why is web failing?\r")
        failed = opened.expect(r"failed to answer: \w+")
        assert f"the model (model:ChatOpenAI at {nowhere}/) failed to answer" in failed, failed
        assert "Traceback" not in failed and "TaskGroup" not in failed
        opened.type("what is running in shop?\r")
        opened.expect(r"- Deployment shop/web: ready")
        opened.type("exit\r")
        opened.expect("bye")
        assert opened.process.wait(timeout=15) == 0
    finally:
        opened.close()
