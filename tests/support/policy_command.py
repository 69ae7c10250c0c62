"""`kubecrew policy ...` as a user runs it: the installed console script in a subprocess, from
the checkout (so ./policies are the defaults) unless told another directory, and with no
$KUBECREW_POLICIES inherited from the test's environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.policies import POLICIES

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
ROOT = POLICIES.parent


def kubecrew(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "KUBECREW_POLICIES"}
    return subprocess.run(
        [KUBECREW, "policy", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        env={**environment, **(env or {})},
    )
