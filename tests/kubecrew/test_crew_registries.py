"""The crew file names the image registries the crew may ask (`registries`), and every agent's
kube server gets them; `write_crew_file` writes them (as `kubecrew sandbox up` does for its own
registries); a `registries` that is not a mapping of host to URL is a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from core.errors import InvalidArgument
from kubecrew.crew import CrewOptions, read_crew_file, resolve, write_crew_file

MIRRORS = {"*": "/registries/{host}", "ghcr.io": "direct"}


def test_every_agents_kube_server_gets_the_crew_files_registries(tmp_path: Path) -> None:
    environ = {"KUBECREW_HOME": str(tmp_path)}
    written = write_crew_file(
        kubeconfig=tmp_path / "kubeconfig", registries=MIRRORS, environ=environ
    )
    assert written is not None
    assert yaml.safe_load(written.read_text())["registries"] == MIRRORS

    crew = resolve(CrewOptions(), environ)

    for agent in ("dev_team", "cluster_operator", "platform"):
        kube = crew.servers(agent).kube
        assert kube is not None and dict(kube.registries) == MIRRORS
    assert read_crew_file(tmp_path / "absent.yaml").registries == {}


@pytest.mark.parametrize(
    "registries",
    [["https://mirror.example"], {"docker.io": 5}, {"docker.io": ""}],
    ids=["a-list", "a-number", "empty"],
)
def test_registries_that_are_not_a_mapping_of_urls_say_what_to_write(
    tmp_path: Path, registries: object
) -> None:
    crew_file = tmp_path / "crew.yaml"
    crew_file.write_text(yaml.safe_dump({"registries": registries}))
    with pytest.raises(InvalidArgument, match="registries must map a registry host"):
        read_crew_file(crew_file)
