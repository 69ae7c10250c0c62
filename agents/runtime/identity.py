"""Which Kubernetes identity an agent's kube server speaks as: the one decision, made here once.

`kubecrew install` gives each agent a ServiceAccount with least-privilege RBAC and writes its
kubeconfig to `$KUBECREW_HOME/kubeconfigs/<agent>.yaml` (`dev-team.yaml` for the agent
`dev_team`: ServiceAccount names cannot hold underscores). When such a file exists and the caller
named no kubeconfig and no context, the agent's kube server uses it, so every front door (ask,
chat, heal, Slack, the conversations of all three agents) acts as the agent, not as the person
who started it.

One guard: the agent's kubeconfig is used only when it points at the API server the default
kubeconfig (`$KUBECONFIG`, else `~/.kube/config`) would reach, or when there is no default
kubeconfig at all. Kubeconfigs left behind by a sandbox that is gone must not silently take an
agent away from the cluster the person is working on. An explicit `--kubeconfig` or `--context`
always wins: the person said which identity to use.

Only files are read here (YAML, no Kubernetes client: agents never import one). The decision
is about the kube server's settings alone: the toolbox passes them in (`kube_for`) and puts
the answer in its `Servers`, so this module knows nothing of the toolbox.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from core.home import current_cluster, default_kubeconfigs, kubecrew_home
from mcp_servers.kube.settings import KubeSettings

KUBECONFIGS = "kubeconfigs"


def kubeconfigs_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """`$KUBECREW_HOME/kubeconfigs`, else `~/.kubecrew/kubeconfigs`."""
    return kubecrew_home(environ) / KUBECONFIGS


def service_account(agent: str) -> str:
    """The ServiceAccount (and kubeconfig file) name of an agent: `dev_team` -> `dev-team`."""
    return agent.replace("_", "-")


def identity_kubeconfig(agent: str, environ: Mapping[str, str] = os.environ) -> Path:
    return kubeconfigs_dir(environ) / f"{service_account(agent)}.yaml"


def kube_for(
    agent: str, kube: KubeSettings | None, environ: Mapping[str, str] = os.environ
) -> KubeSettings | None:
    """`kube` with the agent's own kubeconfig when one is installed for this cluster and the
    caller chose no kubeconfig and no context; otherwise `kube` unchanged."""
    if kube is None or kube.kubeconfig is not None or kube.context is not None:
        return kube
    own = identity_kubeconfig(agent, environ)
    if not own.is_file():
        return kube
    default = _default_server(environ)
    if default is not None and default != _server([own]):
        return kube
    return replace(kube, kubeconfig=own)


def _default_server(environ: Mapping[str, str]) -> str | None:
    """The server of the default kubeconfig's current context; None when there is no default
    kubeconfig; "" when there is one but it names no server (then no agent file matches it)."""
    files = default_kubeconfigs(environ)
    if not files:
        return None
    return _server(files)


def _server(files: list[Path]) -> str:
    cluster = current_cluster(files)
    return cluster.server if cluster is not None else ""
