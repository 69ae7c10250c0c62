"""`kubecrew install` on a fresh sandbox: what it creates, that a second run changes nothing and
says so, that a dry run creates nothing, and that failures are one line naming the cause.

The CLI runs in-process through Typer's runner (the same entry point as the `kubecrew` script);
the cluster is read back with real kubectl as the admin.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubecrew.cli.main import app
from kubecrew.install.footprint import AGENTS, FOLDERS, Request, documents, install
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl

CRDS = [
    "proposals.kubecrew.io",
    "approvalrequests.kubecrew.io",
    "policytargets.kubecrew.io",
    "auditrecords.kubecrew.io",
    "auditheads.kubecrew.io",
]


def manifests() -> int:
    """Every document `kubecrew install` applies: the sandbox serves every kind, the
    ValidatingAdmissionPolicy of deploy/admission included."""
    return sum(len(documents(folder)) for folder in FOLDERS)


def run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(app, ["install", *args])
    return done.exit_code, done.stdout, done.stderr


def tokens(out: Path) -> list[str]:
    return [yaml.safe_load(p.read_text())["users"][0]["user"]["token"] for p in out.glob("*.yaml")]


def test_install_creates_crds_namespace_accounts_roles_and_private_kubeconfigs(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    out = tmp_path / "kubeconfigs"
    code, stdout, _ = run("--kubeconfig", str(sandbox.kubeconfig), "--out", str(out))

    assert code == 0, stdout
    assert "created          CustomResourceDefinition proposals.kubecrew.io" in stdout
    summary = f"Installed: {manifests()} created, 0 updated, 0 unchanged; 3 kubeconfig(s) written."
    assert summary in stdout
    assert "skipped" not in stdout
    kubectl("get", "validatingadmissionpolicy", "kubecrew-crew-namespace")
    kubectl("get", "validatingadmissionpolicybinding", "kubecrew-crew-namespace")
    for crd in CRDS:
        kubectl("wait", "--for", "condition=established", "--timeout=1s", f"crd/{crd}")
    accounts = kubectl("get", "serviceaccounts", "-n", "kubecrew-system", "-o", "name").split()
    assert {f"serviceaccount/{a}" for a in AGENTS} <= set(accounts)
    for agent in AGENTS:
        kubectl("get", "clusterrole", f"kubecrew-{agent}")
        kubectl("get", "rolebinding", f"kubecrew-policy-store-{agent}", "-n", "kubecrew-system")
        path = out / f"{agent}.yaml"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert f"{path} (token valid until" in stdout
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    for token in tokens(out):
        assert token.count(".") == 2 and token not in stdout


def test_a_second_install_changes_nothing_and_says_so(sandbox: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "kubeconfigs"
    first = install(Request(kubeconfig=sandbox.kubeconfig, out=out))
    files = {p.name: p.read_bytes() for p in out.glob("*.yaml")}

    code, stdout, _ = run("--kubeconfig", str(sandbox.kubeconfig), "--out", str(out))

    assert first.changed and code == 0
    assert "Nothing changed: everything was already installed and every token is fresh." in stdout
    assert "created" not in stdout and "updated " not in stdout
    assert stdout.count("kept ") == len(AGENTS)
    assert {p.name: p.read_bytes() for p in out.glob("*.yaml")} == files


def test_an_edited_role_is_put_back_and_a_deleted_kubeconfig_rewritten(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    out = tmp_path / "kubeconfigs"
    install(Request(kubeconfig=sandbox.kubeconfig, out=out))
    kubectl("label", "clusterrole", "kubecrew-platform", "kubecrew.io/agent=someone-else",
            "--overwrite")  # fmt: skip
    (out / "platform.yaml").unlink()

    again = install(Request(kubeconfig=sandbox.kubeconfig, out=out))

    changed = [(a.kind, a.name, a.change) for a in again.applied if a.change != "unchanged"]
    assert changed == [("ClusterRole", "kubecrew-platform", "updated")]
    assert [(k.agent, k.kept) for k in again.kubeconfigs] == [
        ("dev-team", True), ("cluster-operator", True), ("platform", False),
    ]  # fmt: skip
    assert "platform" in kubectl("get", "clusterrole", "kubecrew-platform", "--show-labels")


def test_dry_run_shows_what_would_be_applied_and_creates_nothing(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    out = tmp_path / "kubeconfigs"
    code, stdout, _ = run("--kubeconfig", str(sandbox.kubeconfig), "--out", str(out), "--dry-run")

    assert code == 0, stdout
    total = manifests()
    assert stdout.count("would be created") == total
    assert f"would write      {out / 'dev-team.yaml'}" in stdout
    assert f"Dry run: {total} to create, 0 to update, 0 unchanged; nothing was changed." in stdout
    assert not out.exists()
    assert "kubecrew-system" not in kubectl("get", "namespaces", "-o", "name")
    assert kubectl("get", "crd", "-o", "name").strip() == ""
    assert kubectl("get", "clusterroles", "-o", "name").count("kubecrew-") == 0


def test_dry_run_after_install_finds_nothing_to_do(sandbox: Sandbox, tmp_path: Path) -> None:
    install(Request(kubeconfig=sandbox.kubeconfig, out=tmp_path / "kubeconfigs"))
    report = install(Request(kubeconfig=sandbox.kubeconfig, dry_run=True))
    assert {a.change for a in report.applied} == {"unchanged"}
    assert not report.changed


def test_another_namespace_holds_the_accounts_and_the_bindings_name_it(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    install(Request(kubeconfig=sandbox.kubeconfig, namespace="crew", out=tmp_path / "out"))

    assert "serviceaccount/dev-team" in kubectl("get", "sa", "-n", "crew", "-o", "name")
    subjects = kubectl("get", "clusterrolebinding", "kubecrew-dev-team",
                       "-o", "jsonpath={.subjects[0].namespace}")  # fmt: skip
    assert subjects == "crew"
    dev_team = Kubectl(tmp_path / "out" / "dev-team.yaml", tmp_path / "cache")
    whoami = dev_team("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami == "system:serviceaccount:crew:dev-team"


def test_an_unreachable_cluster_is_one_line(sandbox: Sandbox, tmp_path: Path) -> None:
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:9"  # discard: nothing listens
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(yaml.safe_dump(config))

    code, stdout, stderr = run("--kubeconfig", str(dead), "--out", str(tmp_path / "out"))

    assert code == 1
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "did not answer" in stderr and "check that it is running" in stderr
    assert "Traceback" not in stdout + stderr


def test_an_installer_without_permission_is_told_which_one_it_lacks(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    install(Request(kubeconfig=sandbox.kubeconfig, out=tmp_path / "agents"))

    code, _, stderr = run(
        "--kubeconfig", str(tmp_path / "agents" / "dev-team.yaml"), "--out", str(tmp_path / "x")
    )

    assert code == 1
    line = " ".join(stderr.split())
    assert line.startswith("error: forbidden:"), line
    assert 'User "system:serviceaccount:kubecrew-system:dev-team" cannot patch resource' in line
    assert '"customresourcedefinitions"' in line and "install as a cluster admin" in line


@pytest.mark.parametrize("hours", ["0", "9000"], ids=["zero", "over-a-year"])
def test_token_hours_out_of_bounds_is_refused(hours: str, tmp_path: Path) -> None:
    code, _, stderr = run("--token-hours", hours, "--out", str(tmp_path))
    assert code == 2 and "--token-hours" in stderr
