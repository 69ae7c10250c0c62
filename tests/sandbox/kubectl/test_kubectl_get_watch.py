"""`kubectl get -w` against the sandbox: the watch prints the header and current rows, then a row
for each change and each new object while the watch stays open.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from tests.sandbox.kubectl.suite import create
from tests.support.kubectl import KUBECTL, Kubectl

pytestmark = pytest.mark.kubectl


class Watcher:
    """A `kubectl get -w` process whose output lines arrive on a queue, read with deadlines."""

    def __init__(self, kubectl: Kubectl, *args: str) -> None:
        self.process = subprocess.Popen(
            [KUBECTL, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=kubectl.env(),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, starts: str, *, timeout: float = 10) -> str:
        """The next line starting with `starts`, skipping others; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if line.startswith(starts):
                return line
        raise AssertionError(
            f"kubectl get -w printed no line starting with {starts!r}; it printed {self.seen}"
        )

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def watcher(shared_kubectl: Kubectl, namespace: str) -> Iterator[Watcher]:
    create(
        shared_kubectl,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "first", "namespace": namespace},
        },
    )
    running = Watcher(shared_kubectl, "get", "configmaps", "-n", namespace, "-w")
    yield running
    running.stop()


def test_get_watch_prints_a_row_for_each_change(
    shared_kubectl: Kubectl, namespace: str, watcher: Watcher
) -> None:
    assert watcher.until("NAME").split() == ["NAME", "DATA", "AGE"]
    assert watcher.until("first").split()[:2] == ["first", "0"]
    shared_kubectl("patch", "configmap", "first", "-n", namespace, "-p", '{"data":{"k":"v"}}')
    assert watcher.until("first").split()[:2] == ["first", "1"]
    create(
        shared_kubectl,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "second", "namespace": namespace},
        },
    )
    assert watcher.until("second").split()[:2] == ["second", "0"]
    assert watcher.process.poll() is None, "kubectl get -w ended while the watch was open"
