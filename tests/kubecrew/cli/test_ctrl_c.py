"""Ctrl-C at any moment ends a command with one line, never a traceback: `watch`, which runs
until Ctrl-C, says "stopped" and exits 0 once it has started; before that (while it loads) any
command says "interrupted" and exits 130, as shells report an interrupted command."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.crew import crew_env
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW

ENDINGS = {(0, "stopped"), (130, "interrupted")}


@pytest.mark.parametrize("after", [0.05, 0.4, 1.0, 2.5])
def test_ctrl_c_ends_watch_with_one_line_whenever_it_comes(
    kubectl: Kubectl, tmp_path: Path, after: float
) -> None:
    kubectl("create", "namespace", "shop")
    env = {**crew_env(tmp_path / "home"), "KUBECONFIG": str(kubectl.kubeconfig)}
    watching = subprocess.Popen(
        [KUBECREW, "watch", "-n", "shop", "--every", "5s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        time.sleep(after)
        watching.send_signal(signal.SIGINT)
        out, err = watching.communicate(timeout=60)
    finally:
        if watching.poll() is None:
            watching.kill()
    assert "Traceback" not in err and out == "", err
    last = err.strip().splitlines()[-1] if err.strip() else ""
    assert (watching.returncode, last) in ENDINGS, (watching.returncode, err)


def test_a_watch_that_has_started_stops_with_status_0(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("create", "namespace", "shop")
    env = {**crew_env(tmp_path / "home"), "KUBECONFIG": str(kubectl.kubeconfig)}
    log = tmp_path / "watch.log"
    with log.open("w") as sink:
        watching = subprocess.Popen([KUBECREW, "watch", "-n", "shop"], stdout=subprocess.PIPE,
                                    stderr=sink, text=True, env=env)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while "watching shop" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            watching.send_signal(signal.SIGINT)
            out, _ = watching.communicate(timeout=60)
        finally:
            if watching.poll() is None:
                watching.kill()
    assert watching.returncode == 0 and out == "", log.read_text()
    assert log.read_text().strip().splitlines()[-1] == "stopped"
    assert os.path.getsize(log) < 4096  # a line or two, no traceback
