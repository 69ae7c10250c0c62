"""The kube server's tools for the tests of this folder: `kube` on the module's shared sandbox,
and `nobody`, the same tools as a ServiceAccount that has no RBAC at all, from a token the API
server issues (`kubectl create token`). `KubeTools` lives in tests/support/kube_tools.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools, identity_kubeconfig
from tests.support.kubectl import Kubectl


@pytest.fixture
def kube(shared_sandbox: Sandbox) -> KubeTools:
    return KubeTools(KubeSettings(kubeconfig=shared_sandbox.kubeconfig))


@pytest.fixture
def nobody(
    shared_sandbox: Sandbox, shared_kubectl: Kubectl, namespace: str, tmp_path: Path
) -> Iterator[KubeTools]:
    """The tools as a ServiceAccount with no RBAC permissions at all."""
    shared_kubectl("create", "serviceaccount", "nobody", "-n", namespace)
    token = shared_kubectl("create", "token", "nobody", "-n", namespace).strip()
    path = identity_kubeconfig(shared_sandbox.kubeconfig, token, tmp_path / "nobody.kubeconfig")
    yield KubeTools(KubeSettings(kubeconfig=path))
