"""`kubecrew heal web -n shop --repo ...`, the installed command in a process of its own with
stderr not a terminal, on the team's image typo merged to git and synced (tests/support/heals.py):
stderr says each step of the loop on a line of its own and, between them, what the long ones
waited for as they observed it: the PR being merged, the sync, then the fix's pods ready of
those wanted and their soak in seconds of the soak. Plain lines: no carriage return, no escape
code. (On a terminal the same reports are one live line: tests/kubecrew/test_progress_lines.py.)

Here web's rollouts replace its pod before starting the next (`maxSurge: 0`), so the typo takes
it down and the fix starts a new pod whose soak the validation waits out; rolled the default
way, web's old pod would have kept serving through the typo, soaked long before the fix.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from sandbox.server import Sandbox
from tests.support.crew import crew_args, crew_env
from tests.support.gitops import git
from tests.support.heals import break_web
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import WEB, Team

STEPS = ["learn", "recommend", "plan", "decide", "mutate", "validate", "done"]
SOAKING = re.compile(r"  validating: (\d+)/\1 pods ready, soak \d+ s of 30 s")


def replaced_on_every_change(team: Team) -> None:
    file = team.repo / WEB
    strategy = "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n"
    file.write_text(file.read_text().replace("spec:\n", f"spec:\n{strategy}", 1))
    git(team.repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qam", "no surge")
    assert team.sync()["ok"]
    team.rolled_out()


def test_a_heal_of_the_gitops_typo_prints_each_step_and_the_soak_on_lines_of_their_own(
    team: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    replaced_on_every_change(team)
    break_web(team, sandbox)

    done = subprocess.run(
        [KUBECREW, "heal", "web", "-n", "shop", *crew_args(team)],
        capture_output=True, text=True, env=crew_env(tmp_path / "home"), timeout=240, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Healed Deployment web in shop:"), done.stdout
    assert "\r" not in done.stderr and "\x1b" not in done.stderr, repr(done.stderr)
    lines = done.stderr.splitlines()
    assert lines[0].startswith("healing Deployment web on thread "), done.stderr
    assert [line for line in lines if line.endswith(" done")] == [f"{s} done" for s in STEPS]
    mutating = lines[lines.index("decide done") + 1 : lines.index("mutate done")]
    assert any(re.fullmatch(r"  merging: PR #\d+ \(policy: proposal \S+\)", m) for m in mutating)
    assert "  syncing: Deployment web from git, after a dry run" in mutating, done.stderr
    validating = lines[lines.index("mutate done") + 1 : lines.index("validate done")]
    assert validating and all(v.startswith("  validating: ") for v in validating), done.stderr
    assert any(SOAKING.fullmatch(v) for v in validating), done.stderr
    assert len(set(validating)) == len(validating), done.stderr  # a line per change, no repeats
