"""Where git defines the workload, a change asked in words goes by pull request: exactly the
asked fields edited in the manifest (comments kept), merged under the policy store's decision,
synced after a dry run, validated; live and git agree afterwards."""

from __future__ import annotations

from pathlib import Path

import anyio
import yaml

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from sandbox.server import Sandbox
from tests.support.gitops import git
from tests.support.kubectl import Kubectl
from tests.support.team import WEB, Team, make_team


def ask(team: Team, text: str) -> Outcome:
    async def go() -> Outcome:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            return await talk.ask(text)

    return anyio.run(go)


def test_an_env_change_of_a_git_managed_workload_is_a_merged_pr(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    team = make_team(sandbox, kubectl, tmp_path)
    outcome = ask(team, "please set LOG_LEVEL=debug on the web deployment")
    assert outcome.data["outcome"] == "done", outcome.answer
    number = outcome.data["pr"]
    assert number > 0 and f"PR #{number}" in outcome.answer

    live = kubectl.json("get", "deployment", "web", "-n", "shop")
    [container] = live["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "LOG_LEVEL", "value": "debug"}]
    manifest = git(team.repo, "show", f"main:{WEB}")
    assert "# pinned" in manifest  # the person's comments survive the edit
    [deployment] = [d for d in yaml.safe_load_all(manifest) if d["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"] == container["env"]
    assert any(s.startswith("merged PR #") for s in outcome.data["steps"])
