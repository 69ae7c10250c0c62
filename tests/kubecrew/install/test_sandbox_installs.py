"""`kubecrew sandbox up` installs the agents at start, as `kubecrew install` would on any cluster,
and says where their kubeconfigs are: the real console script in a subprocess, then real kubectl
with the Dev Team's kubeconfig."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.kubectl import Kubectl
from tests.support.sandbox_command import kubecrew, stop


def test_sandbox_up_installs_the_agents_and_says_where_their_kubeconfigs_are(
    tmp_path: Path,
) -> None:
    home = tmp_path / "sandbox"
    started = kubecrew("sandbox", "up", "--detach", "--nodes", "1", home=home)
    try:
        assert started.returncode == 0, started.stderr
        where = tmp_path / "kubecrew-home" / "kubeconfigs"  # $KUBECREW_HOME/kubeconfigs
        names = "dev-team.yaml, cluster-operator.yaml, platform.yaml"
        assert f"Agent kubeconfigs (one ServiceAccount each): {where}/ {names}" in started.stdout
        dev_team = Kubectl(where / "dev-team.yaml", tmp_path / "kube-cache")
        whoami = dev_team("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
        assert whoami == "system:serviceaccount:kubecrew-system:dev-team"
        for path in where.glob("*.yaml"):
            token = yaml.safe_load(path.read_text())["users"][0]["user"]["token"]
            assert token not in started.stdout + started.stderr
    finally:
        stop(home)
