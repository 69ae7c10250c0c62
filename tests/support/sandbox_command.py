"""`kubecrew sandbox ...` as a user runs it: the real console script in a subprocess, each
sandbox in a home of its own and never the user's ~/.kubecrew (`sandbox_env`). `stop` is the
teardown that works even when `down` is what broke; `assert_one_line_error` checks a failure is
one `error: ` line, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


def kubecrew(
    *args: str, home: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    command = [KUBECREW, *args, *(["--home", str(home)] if home is not None else [])]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, env=sandbox_env(home)
    )


def sandbox_env(home: Path | None) -> dict[str, str]:
    # Never touch the user's ~/.kubecrew, even where a test forgets --home.
    scratch = home.parent if home is not None else Path("/nonexistent")
    return {**os.environ, "KUBECREW_HOME": str(scratch / "kubecrew-home")}


def sandbox_pid(home: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int((home / "sandbox.pid").read_text())
    return None


def stop(home: Path) -> None:
    """Teardown that works even when `down` is what broke: kill the pid this test started."""
    pid = sandbox_pid(home)
    kubecrew("sandbox", "down", home=home)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def assert_one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]
