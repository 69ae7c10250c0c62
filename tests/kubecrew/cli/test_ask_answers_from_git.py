"""`kubecrew ask "has web drifted?"` from the terminal (the installed command, a process of its
own) answers from the team's GitOps repository: with `--repo` on the command line, and with the
same settings read from `$KUBECREW_HOME/crew.yaml` when the command line names none. A hand
edit is then named field by field and, policy allowing, reconciled to git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.crew import crew_args, crew_env
from tests.support.drift import HOTFIX_IMAGE, IMAGE, edit_by_hand
from tests.support.gitops import git
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import Team


def ask(question: str, home: Path, *options: str) -> dict[str, Any]:
    command = [KUBECREW, "ask", question, "-n", "shop", "--skip-permissions", "--json", *options]
    done = subprocess.run(
        command, capture_output=True, text=True, env=crew_env(home), timeout=90, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_drift_is_answered_from_the_repo_named_on_the_command_line_or_in_the_crew_file(
    team: Team, tmp_path: Path
) -> None:
    head = git(team.repo, "rev-parse", "main").strip()
    clean = ask("has web drifted from git?", tmp_path / "home", *crew_args(team))
    assert clean["outcome"] == "in-sync", clean["answer"]
    assert clean["answer"].startswith("No drift: Deployment web in shop matches git at commit")
    assert head[:12] in clean["answer"]

    home = tmp_path / "crew-home"
    home.mkdir()
    assert team.servers.policy is not None and team.servers.kube is not None
    crew = {
        "kubeconfig": str(team.servers.kube.kubeconfig),
        "repo": str(team.repo),
        "policies": [str(p) for p in team.servers.policy.policies],
        "policy_store": str(team.store),
    }
    (home / "crew.yaml").write_text(yaml.safe_dump(crew))
    edit_by_hand(team)

    looked = ask("has web drifted? just check, don't change anything", home)
    assert looked["outcome"] == "drifted", looked["answer"]
    assert IMAGE in looked["answer"] and HOTFIX_IMAGE in looked["answer"]

    restored = ask("has web drifted from git?", home)
    assert restored["outcome"] == "restored", restored["answer"]
    assert "Live now matches git, field for field." in restored["answer"]
    assert team.image() == "nginx:1.27"
    assert any(r.subject == restored["proposal"] for r in team.audit())  # the crew's store
