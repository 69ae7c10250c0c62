"""A least-privileged user for kubectl tests: the ServiceAccount `reader` of a namespace, bound
to a Role that grants only `get,list pods`, with a kubeconfig of its own made by kubectl's
`config set-credentials`, as a user would make one."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.support.kubectl import Kubectl


@dataclass(frozen=True)
class Reader:
    """The ServiceAccount `reader` of a test's namespace, and kubectl running as it."""

    kubectl: Kubectl
    namespace: str
    token: str

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:reader"


def make_reader(admin: Kubectl, namespace: str, home: Path) -> Reader:
    """Bind `reader` to a get,list-pods Role and write it a kubeconfig of its own under `home`."""
    ns = ["-n", namespace]
    admin("create", "serviceaccount", "reader", *ns)
    admin("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", *ns)
    account = f"--serviceaccount={namespace}:reader"
    admin("create", "rolebinding", "reader", "--role=pod-reader", account, *ns)
    token = admin("create", "token", "reader", *ns).strip()
    config = home / "reader-kubeconfig"
    shutil.copy(admin.kubeconfig, config)
    as_reader = Kubectl(config, home / "reader-cache")
    cluster = as_reader("config", "view", "-o", "jsonpath={.clusters[0].name}")
    as_reader("config", "set-credentials", "reader", f"--token={token}")
    context = [f"--cluster={cluster}", "--user=reader", f"--namespace={namespace}"]
    as_reader("config", "set-context", "reader", *context)
    as_reader("config", "use-context", "reader")
    return Reader(as_reader, namespace, token)
