"""`kubecrew run --once`, the installed command, on the team's GitOps world: the capacity review
right-sizes web, which git defines, by a pull request merged under the approved proposal and
synced (the live object stays equal to git, no direct write is made), and its summary, on stderr
and in `--json`, names every change whole: the target, the values from -> to, the PR, the
proposal, who approved it and when it runs (the node drain it schedules for its maintenance
window, too, made by the patrol later, not by the review)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from sandbox.server import Sandbox
from tests.support.crew import crew_args, crew_env, prs
from tests.support.gitops import git
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import WEB, Team
from tests.support.waiting import eventually

OFF = ("--patrol", "0", "--escalations", "0", "--propagate", "0", "--audit", "0",
       "--blueprints", "0")  # fmt: skip
PODS = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"


def three_replicas_asking_500m(team: Team, sandbox: Sandbox) -> None:
    """web in git at 3 replicas (the shop's minimum), each asking 500m and using about 20m."""
    git(team.repo, "reset", "-q", "--hard", "main")
    file = team.repo / WEB
    text = file.read_text().replace("replicas: 1  # raised for the sale", "replicas: 3")
    text = text.replace(
        "image: nginx:1.27  # pinned",
        "image: nginx:1.27  # pinned\n          resources:\n            requests:\n"
        "              cpu: 500m\n              memory: 32Mi",
    )
    file.write_text(text)
    git(team.repo, "-c", "user.name=dev", "-c", "user.email=dev@shop", "commit", "-qam", "web: 3")
    sandbox.call(
        lambda cluster: cluster.world.profiles.override(
            namespace="shop", selector=None, image=None, changes={"cpu_millis": 20}
        )
    )
    team.sync()
    team.kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")
    eventually(
        lambda: len(json.loads(team.kubectl("get", "--raw", PODS))["items"]) == 3,
        what="metrics for web's 3 pods",
    )


def cpu(manifest: dict[str, Any]) -> str:
    return str(
        manifest["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    )


def test_once_right_sizes_a_git_managed_workload_by_pull_request_and_names_each_change(
    team: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    three_replicas_asking_500m(team, sandbox)

    done = subprocess.run(
        [KUBECREW, "run", "--once", "--capacity", "1h", *OFF, "--json", *crew_args(team)],
        capture_output=True, text=True, env=crew_env(tmp_path / "home"), timeout=240,
        check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    [run] = json.loads(done.stdout)["runs"]
    assert run["job"] == "capacity" and run["ok"], run
    [resize] = [c for c in run["changes"] if c["target"] == "Deployment shop/web"]
    assert resize["field"] == "cpu request of container web" and resize["before"] == "500m"
    assert re.fullmatch(r"[1-9]\d*m", resize["after"]), resize
    assert re.fullmatch(r"PR #\d+, merged and synced", resize["how"]), resize
    assert resize["proposal"].startswith("p-") and resize["when"] == "done"
    assert resize["approved_by"].startswith("policy (the policy store)"), resize

    # The change went by pull request: merged with exactly that edit, and live equals git.
    [pr] = prs(team)
    assert pr.state == "merged" and f"PR #{pr.number}" in resize["how"]
    manifest = git(team.repo, "show", f"main:{WEB}")
    assert f"cpu: {resize['after']}" in manifest and "cpu: 500m" not in manifest, manifest
    assert "# pinned" in manifest  # the file's comments kept
    live = team.kubectl.json("get", "deployment", "web", "-n", "shop")
    assert cpu(live) == resize["after"]
    direct = [r for r in team.audit() if r.kind == "mutation" and "set_resources" in r.summary]
    assert direct == [], [r.summary for r in direct]

    # stderr names each change in a line of its own, nothing cut.
    lines = done.stderr.splitlines()
    head = next(line for line in lines if " capacity (Cluster Operator), " in line)
    assert head.endswith(f"{len(run['changes'])} change(s):"), head
    said = [line for line in lines if line.startswith("    - Deployment shop/web: ")]
    assert said == [
        f"    - Deployment shop/web: cpu request of container web 500m -> {resize['after']} by "
        f"{resize['how']}, proposal {resize['proposal']}; approved by {resize['approved_by']}; "
        "done"
    ], done.stderr
    # The consolidation it approved is scheduled, not made: who approved it and when it runs.
    [drain] = [c for c in run["changes"] if c["field"] == "drain (consolidation)"]
    assert drain["approved_by"] == "policy (the policy store)", drain
    assert drain["proposal"].startswith("p-") and drain["target"].startswith("Node "), drain
    assert drain["when"].startswith(("runs in the maintenance window opening at ",
                                     "runs at the next patrol")), drain  # fmt: skip
    assert any(line.startswith(f"    - {drain['target']}: drain") for line in lines)
    assert (
        team.kubectl.json("get", "node", drain["target"].split()[1])["spec"].get("unschedulable")
        is None
    )  # nothing cordoned by the review itself
