"""The sandbox's image registries as the crew reaches them, and as a raw HTTP client sees them.

`mirrors(sandbox)` is the mirror map that sends every registry host to the sandbox's own OCI
distribution API (`/registries/{host}/v2/`, sandbox/registryapi.py) at its URL; `ON_THE_CLUSTER`
is the same map written relative to the kubeconfig's server, as `kubecrew sandbox up` writes it
into the crew file. `kube_settings` is a kube server's settings with the mirrors on, and
`registry_client` an httpx client trusting the sandbox's CA (from its kubeconfig), for tests of
the wire itself.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any

import httpx
import yaml

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox

ON_THE_CLUSTER = {"*": "/registries/{host}"}


def mirrors(sandbox: Sandbox) -> dict[str, str]:
    return {"*": f"{sandbox.url}/registries/{{host}}"}


def kube_settings(sandbox: Sandbox, **given: Any) -> KubeSettings:
    return KubeSettings(kubeconfig=sandbox.kubeconfig, registries=mirrors(sandbox), **given)


def registry_client(sandbox: Sandbox) -> httpx.Client:
    """A client of the sandbox's HTTPS server with no credentials at all, as a registry
    client is."""
    config = yaml.safe_load(sandbox.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    trust = ssl.create_default_context(cadata=ca.decode())
    return httpx.Client(base_url=sandbox.url, verify=trust)
