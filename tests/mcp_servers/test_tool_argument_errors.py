"""A tool called with bad arguments says which argument and what is wrong, in one line, with
neither pydantic's links nor the value given (which could be a Secret's)."""

from __future__ import annotations

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools


def test_bad_arguments_name_the_argument_and_nothing_else(shared_sandbox: Sandbox) -> None:
    kube = KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig))
    wrong = kube.fails("scale", name="web", namespace="shop", replicas="s3cr3t-three")
    assert wrong.startswith("scale: bad arguments: replicas: input should be a valid integer")
    assert "pydantic" not in wrong and "s3cr3t" not in wrong and "\n" not in wrong
    missing = kube.fails("scale", namespace="shop", replicas=2)
    assert "name: is required" in missing
