"""`kubecrew sandbox up` points the crew at the sandbox it started, and at its registries, by
writing `$KUBECREW_HOME/crew.yaml`, and says so; a crew file already there is a person's choice,
left as it is (and said so)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.sandbox_command import kubecrew, stop


def test_sandbox_up_writes_the_crew_file_only_when_there_is_none(tmp_path: Path) -> None:
    sandbox_home = tmp_path / "sandbox"
    crew_file = tmp_path / "kubecrew-home" / "crew.yaml"  # $KUBECREW_HOME of `kubecrew`
    started = kubecrew("sandbox", "up", "--detach", "--nodes", "1", home=sandbox_home)
    try:
        assert started.returncode == 0, started.stderr
        assert f"Crew file written: {crew_file}" in started.stdout
        written = yaml.safe_load(crew_file.read_text())
        assert written == {
            "kubeconfig": str(sandbox_home.resolve() / "kubeconfig"),
            "registries": {"*": "/registries/{host}"},  # its own, on the kubeconfig's server
        }
    finally:
        stop(sandbox_home)
    crew_file.write_text("context: mine\n")
    again = kubecrew("sandbox", "up", "--detach", "--nodes", "1", home=sandbox_home)
    try:
        assert again.returncode == 0, again.stderr
        assert f"Crew file {crew_file} already exists: left as it is" in again.stdout
        assert crew_file.read_text() == "context: mine\n"
    finally:
        stop(sandbox_home)
