"""A real kubectl command left running in the background (`get -w`, `rollout status`, `wait`,
`logs -f`), run with `-v=6` so its log shows when its watch is open: a test changes state only
after that, with no sleeps."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from typing import IO

from tests.support.kubectl import KUBECTL, Kubectl


class Background:
    """A kubectl command left running with `-v=6`, whose log shows when its watch is open."""

    def __init__(self, kubectl: Kubectl, *args: str) -> None:
        self.process = subprocess.Popen(
            [KUBECTL, "-v=6", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=kubectl.env(),
        )
        self.lines = {"stdout": queue.Queue[str](), "stderr": queue.Queue[str]()}
        self.seen: list[str] = []
        self._readers = [
            threading.Thread(target=_pump, args=(pipe, self.lines[name]), daemon=True)
            for name, pipe in (("stdout", self.process.stdout), ("stderr", self.process.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def expect(self, text: str, *, stream: str = "stdout", timeout: float = 10) -> str:
        """The next line of `stream` containing `text`, skipping others."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines[stream].get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"kubectl printed no line with {text!r} on {stream}: {self.seen}")

    def finish(self, *, timeout: float = 15) -> tuple[int, str]:
        """kubectl's exit code once it ends, and the stdout `expect` has not consumed."""
        code = self.process.wait(timeout=timeout)
        self.close()
        rest = self.lines["stdout"]
        return code, "".join(rest.get_nowait() + "\n" for _ in range(rest.qsize()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        for reader in self._readers:
            reader.join(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def _pump(pipe: IO[str] | None, lines: queue.Queue[str]) -> None:
    assert pipe is not None
    for line in pipe:
        lines.put(line.rstrip("\n"))
