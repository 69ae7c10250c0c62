"""Policy store backends behind one `Store` protocol (`base`), and the one way to open one.

A store is named by a spec: a file path opens the embedded SQLite store (`sqlite`); `kubernetes`
or `kubernetes:CONTEXT` opens the custom-resource store in the cluster the kubeconfig
(`$KUBECONFIG`, else ~/.kube/config) names (`kubernetes`). No spec: `$KUBECREW_POLICY_STORE`, else
the SQLite file under the kubecrew home. Backends are imported when opened, so choosing SQLite
never loads a Kubernetes client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from core.policy.store.base import Store

SPEC_ENV = "KUBECREW_POLICY_STORE"
KUBERNETES = "kubernetes"


def describe_spec(spec: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """The store a spec names, in words, for messages: the file path, or the cluster."""
    from core.policy.store.sqlite import default_path

    chosen = spec or environ.get(SPEC_ENV) or str(default_path(environ))
    if chosen == KUBERNETES or chosen.startswith(KUBERNETES + ":"):
        context = chosen.partition(":")[2]
        return "the kubecrew-system namespace of " + (
            f"context {context}" if context else "the current kubeconfig context"
        )
    return chosen


def open_store(spec: str | None = None, environ: Mapping[str, str] = os.environ) -> Store:
    """Open the store `spec` names (see the module docstring); errors are ToolErrors."""
    chosen = spec or environ.get(SPEC_ENV)
    if chosen is not None and (chosen == KUBERNETES or chosen.startswith(KUBERNETES + ":")):
        from core.policy.store.kubernetes import KubernetesStore

        context = chosen.partition(":")[2] or None
        kubeconfig = environ.get("KUBECONFIG")
        return KubernetesStore(kubeconfig=Path(kubeconfig) if kubeconfig else None, context=context)
    from core.policy.store.sqlite import SqliteStore, default_path

    return SqliteStore(Path(chosen).expanduser() if chosen else default_path(environ))
