"""`kubecrew install`: put the crew's CRDs, namespace, ServiceAccounts and roles on a cluster, and
write one kubeconfig per agent.

One progress line per object and per kubeconfig goes to stdout, then a summary that says whether
anything changed. A failure is one line on stderr with exit status 1 (an unreachable cluster, a
permission the installer's identity lacks, named). The work is `kubecrew.install.footprint`; this
module only reads the options and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.terminal import print_failure

NAMESPACE = "kubecrew-system"


def install(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            help="kubeconfig of the installer [default: $KUBECONFIG, else ~/.kube/config]"
        ),
    ] = None,
    context: Annotated[
        str | None, typer.Option(help="kubeconfig context [default: the current one]")
    ] = None,
    namespace: Annotated[
        str, typer.Option(help="namespace of the agents' ServiceAccounts and the policy store")
    ] = NAMESPACE,
    out: Annotated[
        Path | None,
        typer.Option(
            help="where the agents' kubeconfigs go [default: $KUBECREW_HOME/kubeconfigs, "
            "else ~/.kubecrew/kubeconfigs]",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="show what would be applied (server dry run); change nothing"
        ),
    ] = False,
    token_hours: Annotated[
        int,
        typer.Option(min=1, max=8760, help="lifetime of each agent's token, in hours"),
    ] = 24,
) -> None:
    """Install kubecrew on a cluster: CRDs, namespace, one ServiceAccount with least-privilege
    RBAC per agent, and a kubeconfig per agent that the agents then use on their own.

    Safe to run again: nothing changes unless something drifted or a token is past half its
    lifetime. Needs a cluster admin (or the permissions the error names).

    **Examples**

    ```
    kubecrew install --dry-run
    kubecrew install --context prod-eu --token-hours 12
    kubectl --kubeconfig ~/.kubecrew/kubeconfigs/dev-team.yaml auth can-i patch nodes
    ```
    """
    from kubecrew.install.footprint import InstallError, Request
    from kubecrew.install.footprint import install as run_install

    console = Console(highlight=False, soft_wrap=True)
    request = Request(
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        out=out,
        dry_run=dry_run,
        token_hours=token_hours,
    )
    try:
        run_install(request, progress=lambda line: console.print(escape(line)))
    except InstallError as exc:
        print_failure(str(exc))
        raise typer.Exit(1) from None
