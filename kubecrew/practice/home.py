"""A sandbox home on disk, and whether the server it records is still alive.

A home (default `$KUBECREW_HOME/sandbox`, else `~/.kubecrew/sandbox`) is where a running sandbox
server leaves `sandbox.pid`, `url`, `kubeconfig` and, when detached, `sandbox.log`. This module
reads those files and checks the recorded process with signal 0, so the commands can tell a live
sandbox from the leftovers of a dead one. It never signals a process to stop, never speaks HTTP
(that is `probe`) and never prints: deciding what to tell the user is the commands' job.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path


def default_home() -> Path:
    base = os.environ.get("KUBECREW_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".kubecrew"
    return root / "sandbox"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers signal 0 but will never serve again: its parent just has not reaped it.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[-1].split()[0] != "Z"
    return True


def wait_gone(pid: int, *, timeout: float) -> bool:
    """Whether `pid` exited within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@dataclass(frozen=True)
class Home:
    path: Path

    @classmethod
    def resolve(cls, given: Path | None) -> Home:
        return cls((given or default_home()).expanduser().resolve())

    @property
    def kubeconfig(self) -> Path:
        return self.path / "kubeconfig"

    @property
    def log(self) -> Path:
        return self.path / "sandbox.log"

    @property
    def url(self) -> str | None:
        with contextlib.suppress(OSError):
            return (self.path / "url").read_text().strip() or None
        return None

    def recorded_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.path / "sandbox.pid").read_text().strip())
        return None

    def running_pid(self) -> int | None:
        pid = self.recorded_pid()
        return pid if pid is not None and alive(pid) else None

    def forget(self) -> None:
        """Remove the files a stopped (or killed) server leaves, so nothing mistakes them."""
        for name in ("sandbox.pid", "url"):
            with contextlib.suppress(FileNotFoundError):
                (self.path / name).unlink()

    def __str__(self) -> str:
        return str(self.path)
