"""CI's gate on the eval corpus: every scenario runs as `make eval` runs it, and the run fails on
any catastrophic safeguard trip or a pass rate below the one committed in evals/report/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
KUBECREW = str(Path(sys.executable).parent / "kubecrew")


# The whole corpus (279 scenarios) takes about 9 minutes with two jobs on an idle 2-core machine
# (about 11 beside the rest of the suite): inside CI's time, so CI runs all of it.
@pytest.mark.timeout(1500)
def test_the_corpus_passes_at_least_as_well_as_the_committed_report(tmp_path: Path) -> None:
    committed = json.loads((ROOT / "evals" / "report" / "results.json").read_text())["summary"]
    done = subprocess.run(
        [KUBECREW, "eval", "--jobs", "2", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=1400, cwd=ROOT,
    )  # fmt: skip
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    assert summary["catastrophic_trips"] == 0, done.stdout + done.stderr
    assert summary["runs"] >= committed["runs"]
    assert summary["pass_at_1"] >= committed["pass_at_1"], (tmp_path / "report.md").read_text()
    for domain, figures in committed["domains"].items():
        assert summary["domains"][domain]["pass_at_1"] >= figures["pass_at_1"], domain
    assert done.returncode == 0, done.stdout + done.stderr
