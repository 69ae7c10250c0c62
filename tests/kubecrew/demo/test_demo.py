"""`make demo` end to end: `python -m kubecrew.demo.tour` in a subprocess, as the Makefile runs
it."""

from __future__ import annotations

import io
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from kubecrew.demo.tour import (
    ADMIN_QUESTIONS,
    VIEWER_QUESTIONS,
    StepFailed,
    Tour,
    kubectl_env,
    walk_through,
)


@pytest.fixture(scope="module")
def demo() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubecrew.demo.tour"],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )


def _can_i_answers(output: str) -> dict[str, str]:
    """Each printed `auth can-i` command, mapped to the line kubectl answered with."""
    found = re.findall(r"^\$ kubectl auth can-i (.+?)(?: --token=\S+)?\n(\S+)$", output, re.M)
    return dict(found)


def test_demo_exits_zero_and_stops_its_sandbox(demo: subprocess.CompletedProcess[str]) -> None:
    assert demo.returncode == 0, demo.stderr
    assert "Sandbox stopped." in demo.stdout
    assert "ImagePullBackOff" in demo.stdout
    assert 'deployment "web" successfully rolled out' in demo.stdout


def test_demo_prints_each_command_before_its_output(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert re.search(r"^\$ kubectl version\nClient Version: v1\.37", demo.stdout, re.M)
    assert re.search(r"^\$ kubectl get nodes -o wide\nNAME +STATUS", demo.stdout, re.M)


def test_demo_applies_and_shows_the_shop_deployment(
    demo: subprocess.CompletedProcess[str],
) -> None:
    out = demo.stdout
    for created in (
        "namespace/shop",
        "deployment.apps/web",
        "service/web",
        "configmap/web-config",
        "poddisruptionbudget.policy/web",
    ):
        assert f"{created} created" in out
    assert 'deployment "web" successfully rolled out' in out  # the kubelets ran its pods
    wide_rows = re.findall(r"^web-\S+ +1/1 +Running +0 +\S+ +10\.244\.\d+\.\d+ +node-\d", out, re.M)
    assert len(wide_rows) == 3  # `get pods -o wide`: placed on nodes, given pod IPs
    assert re.search(r"^Replicas: +3 desired", out, re.M)  # from `describe`


def test_demo_shows_the_can_i_answers_for_admin_and_service_account(
    demo: subprocess.CompletedProcess[str],
) -> None:
    expected = dict(ADMIN_QUESTIONS) | dict(VIEWER_QUESTIONS)
    assert _can_i_answers(demo.stdout) == expected
    assert "yes" in expected.values() and "no" in expected.values()


def test_demo_never_prints_the_service_account_token(
    demo: subprocess.CompletedProcess[str],
) -> None:
    assert '--token="$SA_TOKEN"' in demo.stdout
    assert "eyJ" not in demo.stdout + demo.stderr  # every JWT starts with a base64 '{"'


def test_a_failing_step_stops_the_demo_and_names_the_step(tmp_path: Path) -> None:
    with socket.socket() as sock:  # bound but never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        server = f"https://127.0.0.1:{sock.getsockname()[1]}"
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(f"""
apiVersion: v1
kind: Config
clusters: [{{name: gone, cluster: {{server: "{server}"}}}}]
users: [{{name: admin, user: {{token: not-a-real-token}}}}]
contexts: [{{name: gone, context: {{cluster: gone, user: admin}}}}]
current-context: gone
""")
        printed = io.StringIO()
        tour = Tour(Console(file=printed), kubectl_env(kubeconfig, tmp_path))
        with pytest.raises(
            StepFailed,
            match=r"^step 1 \(Client and server versions\) failed: "
            r"`kubectl version` exited 1: .*was refused",
        ):
            walk_through(tour, tmp_path / "never-applied.yaml")
    assert "$ kubectl version" in printed.getvalue()
    assert "2. The nodes" not in printed.getvalue()
