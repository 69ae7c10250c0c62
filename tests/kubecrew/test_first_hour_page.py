"""docs/first-hour.md is what its commands print today: the script that wrote it runs them all
again on a fresh sandbox and finds the same page (scripts/first_hour.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_hour_page_is_what_the_commands_print_today() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "first_hour.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
