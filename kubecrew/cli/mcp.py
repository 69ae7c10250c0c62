"""`kubecrew mcp kube | metrics | gitops | policy`: run one of the crew's MCP servers for any
MCP host.

Each command mirrors the options of the server's `python -m mcp_servers.<name>` entry point (the
source of truth for what a server takes) and hands the built FastMCP to
`mcp_servers.common.transport`, which owns the stdio / streamable HTTP rules (loopback unless
`--allow-remote`, bearer token, 401s). This module only turns options into settings, refuses bad
transport options in one line before anything starts, and imports a server only when its command
runs, so `kubecrew --help` stays quick. With `--health-port` (or $KUBECREW_HEALTH_PORT, which
the image sets) a server answers `/healthz` and `/readyz` on that port (`kubecrew.health`):
ready once its HTTP port accepts connections and the cluster (or the policy store's) answers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

from kubecrew.cli.options import fail
from kubecrew.health import Check, HealthError, HealthPortOption, kube_api, listening, serving
from mcp_servers.common.transport import (
    DEFAULT_PORT,
    LOOPBACK,
    MAKE_TOKEN,
    TOKEN_ENV,
    TransportError,
    TransportOptions,
    check,
)

app = typer.Typer(
    name="mcp",
    help="Run one of kubecrew's MCP servers (kube, metrics, gitops, policy) over stdio or HTTP.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


class PrProvider(StrEnum):
    local = "local"
    github = "github"


TransportOption = Annotated[
    Transport,
    typer.Option(help="`stdio` for a host that spawns the server; `http` for streamable HTTP."),
]
HostOption = Annotated[
    str, typer.Option(help="http: address to bind; a non-loopback one needs --allow-remote.")
]
PortOption = Annotated[int, typer.Option(help="http: TCP port.")]
TokenFileOption = Annotated[
    Path | None,
    typer.Option(
        help=f"http: file holding the bearer token, 32 random bytes or more ({MAKE_TOKEN}). "
        f"[default: ${TOKEN_ENV}, else a generated token in a 0600 file whose path is printed]",
        show_default=False,
    ),
]
AllowRemoteOption = Annotated[
    bool, typer.Option(help="http: allow binding a non-loopback --host (plain HTTP: add TLS).")
]
KubeconfigOption = Annotated[
    Path | None,
    typer.Option(help="[default: $KUBECONFIG or ~/.kube/config]", show_default=False),
]
ContextOption = Annotated[
    str | None,
    typer.Option(help="kubeconfig context [default: the current one]", show_default=False),
]
ReadOnlyOption = Annotated[bool, typer.Option(help="Register no write tool.")]


def _transport(
    transport: Transport, host: str, port: int, token_file: Path | None, allow_remote: bool
) -> TransportOptions:
    options = TransportOptions(
        transport="http" if transport is Transport.http else "stdio",
        host=host,
        port=port,
        token_file=token_file,
        allow_remote=allow_remote,
    )
    try:
        check(options)
    except TransportError as exc:
        fail(str(exc))
    return options


@app.command()
def kube(
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    read_only: ReadOnlyOption = False,
    namespaces: Annotated[
        str | None, typer.Option(help="Comma-separated allow-list of namespaces.")
    ] = None,
    cache: Annotated[
        bool,
        typer.Option(
            help="Answer inventory reads, overviews and diagnoses from watch-backed caches "
            "(kept per kind once it was read; writes always read the API server).",
        ),
    ] = True,
    policies: Annotated[
        list[Path] | None,
        typer.Option(
            help="Policy file or directory, repeatable, plus each path in $KUBECREW_POLICIES. "
            "Given, every write is judged by them and audited. [default: no policy gate]",
            show_default=False,
        ),
    ] = None,
    policy_store: Annotated[
        str | None,
        typer.Option(
            help="Policy store for approved proposals and the audit log: a SQLite file or "
            "kubernetes[:CONTEXT]. [default: $KUBECREW_POLICY_STORE, else the kubecrew home's]",
            show_default=False,
        ),
    ] = None,
    as_agent: Annotated[
        str, typer.Option(help="The agent the policy gate judges and the audit log names.")
    ] = "kube-mcp",
    registry: Annotated[
        list[str] | None,
        typer.Option(
            metavar="HOST=URL",
            help="A registry the image tools may ask, repeatable: HOST (or *) = the base URL of "
            "its /v2/ ({host} allowed; `direct`: the registry itself). [default: none, offline]",
            show_default=False,
        ),
    ] = None,
    transport: TransportOption = Transport.stdio,
    host: HostOption = LOOPBACK,
    port: PortOption = DEFAULT_PORT,
    token_file: TokenFileOption = None,
    allow_remote: AllowRemoteOption = False,
    health_port: HealthPortOption = None,
) -> None:
    """Read (and, unless --read-only, change) a Kubernetes cluster through a kubeconfig.

    With --policies, every write goes through the policy gate: refused unless the policies allow
    it or it carries an approved proposal, and recorded in the policy store's audit log.

    **Examples**

    ```
    kubecrew mcp kube --kubeconfig ~/.kube/config --read-only --namespaces shop,payments
    kubecrew mcp kube --transport http --port 8811 --token-file ~/.kubecrew/mcp.token
    kubecrew mcp kube --policies policies --policy-store kubernetes --as-agent dev-team
    kubecrew mcp kube --registry '*=https://mirror.example/{host}' --registry quay.io=direct
    ```
    """
    options = _transport(transport, host, port, token_file, allow_remote)
    from core.errors import ToolError
    from mcp_servers.common.transport import serve
    from mcp_servers.kube.settings import KubeSettings

    try:
        settings = KubeSettings(
            kubeconfig=kubeconfig,
            context=context,
            read_only=read_only,
            namespaces=KubeSettings.namespace_list(namespaces),
            policies=KubeSettings.policy_list(policies or ()),
            policy_store=policy_store,
            agent=as_agent,
            registries=KubeSettings.registry_map(registry or ()),
            cache=cache,
        )
    except ToolError as exc:  # an unusable --registry
        fail(exc.message)

    def build() -> FastMCP:
        from mcp_servers.kube.server import build

        try:
            return build(settings)
        except ToolError as exc:  # unusable policies or policy store
            fail(exc.message)

    server = build()  # (a plain stdio start never comes here: kubecrew/__main__.py)
    ready = [kube_api(kubeconfig, context), *_listening(options)]
    run = partial(serve, server, options, name="kube")
    _serve(run, health_port, ready)


@app.command()
def metrics(
    prometheus_url: Annotated[
        str | None,
        typer.Option(help="Prometheus HTTP API base URL [default: metrics.k8s.io only]"),
    ] = None,
    bearer_token_file: Annotated[
        Path | None, typer.Option(help="Token sent to Prometheus.")
    ] = None,
    ca_file: Annotated[Path | None, typer.Option(help="CA bundle for Prometheus's TLS.")] = None,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    transport: TransportOption = Transport.stdio,
    host: HostOption = LOOPBACK,
    port: PortOption = DEFAULT_PORT,
    token_file: TokenFileOption = None,
    allow_remote: AllowRemoteOption = False,
    health_port: HealthPortOption = None,
) -> None:
    """Utilization, signals and SLOs from Prometheus, or from metrics.k8s.io without one.

    **Examples**

    ```
    kubecrew mcp metrics --prometheus-url http://prometheus.monitoring:9090
    kubecrew mcp metrics --kubeconfig ~/.kube/config --transport http --port 8812
    ```
    """
    options = _transport(transport, host, port, token_file, allow_remote)
    from mcp_servers.common.transport import serve
    from mcp_servers.metrics.server import build
    from mcp_servers.metrics.settings import MetricsSettings

    settings = MetricsSettings(
        prometheus_url=prometheus_url,
        bearer_token_file=bearer_token_file,
        ca_file=ca_file,
        kubeconfig=kubeconfig,
        context=context,
    )
    ready = [kube_api(kubeconfig, context), *_listening(options)]
    _serve(lambda: serve(build(settings), options, name="metrics"), health_port, ready)


@app.command()
def gitops(
    repo: Annotated[Path, typer.Option(help="Git repository of manifests.")],
    state_dir: Annotated[
        Path | None,
        typer.Option(help="PR records [default: <repo>.kubecrew]", show_default=False),
    ] = None,
    base_branch: Annotated[str, typer.Option(help="Branch PRs merge into.")] = "main",
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    namespace: Annotated[str, typer.Option(help="For manifests that name none.")] = "default",
    read_only: ReadOnlyOption = False,
    provider: Annotated[
        PrProvider,
        typer.Option(
            help="Where pull requests live: `local` keeps them beside the repository (no forge "
            "needed); `github` opens them on GitHub, with --repo a clone of the GitHub "
            "repository (remote `origin`) and a token in $GITHUB_TOKEN."
        ),
    ] = PrProvider.local,
    github_repo: Annotated[
        str, typer.Option(help="github: the repository, `owner/name`.", show_default=False)
    ] = "",
    github_api_url: Annotated[
        str,
        typer.Option(help="github: REST API base; GitHub Enterprise is `https://HOST/api/v3`."),
    ] = "https://api.github.com",
    allow_direct_revert: Annotated[
        bool,
        typer.Option(
            help="Let revert_pr(direct=true) commit the revert straight onto the base branch "
            "(local provider) instead of opening a revert PR."
        ),
    ] = False,
    repo_url: Annotated[
        str,
        typer.Option(
            help="Another URL this repository is known by, to find the Argo CD Application or "
            "Flux GitRepository that syncs it (sync then defers to them).",
            show_default=False,
        ),
    ] = "",
    author: Annotated[
        str,
        typer.Option(
            help="Who this server opens PRs, reviews and comments as (local provider; GitHub "
            "uses the token's account). No tool can say otherwise; the default is the crew."
        ),
    ] = "kubecrew",
    audit: Annotated[
        bool,
        typer.Option(
            help="Record each merge and each sync that writes to the cluster in the policy "
            "store's audit log."
        ),
    ] = False,
    policy_store: Annotated[
        str | None,
        typer.Option(
            help="The policy store --audit writes to: a SQLite file or kubernetes[:CONTEXT]; "
            "given, implies --audit. [default: $KUBECREW_POLICY_STORE, else the kubecrew home's]",
            show_default=False,
        ),
    ] = None,
    as_agent: Annotated[str, typer.Option(help="Who the audit log says acted.")] = "gitops-mcp",
    transport: TransportOption = Transport.stdio,
    host: HostOption = LOOPBACK,
    port: PortOption = DEFAULT_PORT,
    token_file: TokenFileOption = None,
    allow_remote: AllowRemoteOption = False,
    health_port: HealthPortOption = None,
) -> None:
    """Propose, review, merge and sync manifest changes in a git repository.

    **Examples**

    ```
    kubecrew mcp gitops --repo ./deploy --kubeconfig ~/.kube/config
    kubecrew mcp gitops --repo ./deploy --read-only --transport http --port 8813
    kubecrew mcp gitops --repo ./deploy --policy-store kubernetes --as-agent dev-team
    GITHUB_TOKEN=... kubecrew mcp gitops --repo ./deploy --provider github --github-repo acme/deploy
    ```
    """
    options = _transport(transport, host, port, token_file, allow_remote)
    from core.errors import ToolError
    from mcp_servers.common.transport import serve
    from mcp_servers.gitops.server import build
    from mcp_servers.gitops.settings import GitopsSettings

    repo = repo.expanduser().resolve()
    if not repo.exists():
        fail(f"--repo {repo} does not exist; give the path of a git repository of manifests")
    settings = GitopsSettings(
        repo=repo,
        state_dir=state_dir or GitopsSettings.default_state_dir(repo),
        base_branch=base_branch,
        kubeconfig=kubeconfig,
        context=context,
        default_namespace=namespace,
        read_only=read_only,
        provider="github" if provider is PrProvider.github else "local",
        github_repo=github_repo,
        github_api_url=github_api_url,
        allow_direct_revert=allow_direct_revert,
        repo_url=repo_url,
        author_name=author,
        audit=audit or policy_store is not None,
        policy_store=policy_store,
        agent=as_agent,
    )
    try:
        server = build(settings)
    except ToolError as exc:  # a configuration the server cannot start with
        fail(exc.message)
    ready = [kube_api(kubeconfig, context), *_listening(options)]
    _serve(lambda: serve(server, options, name="gitops"), health_port, ready)


@app.command()
def policy(
    policies: Annotated[
        list[Path] | None,
        typer.Option(
            "--policies",
            help="Policy file or directory (repeatable). [default: ./policies, else the shipped "
            "defaults, plus each path in $KUBECREW_POLICIES]",
            show_default=False,
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            help="The policy store: a SQLite file, or `kubernetes[:CONTEXT]` (custom resources "
            "in kubecrew-system). [default: $KUBECREW_POLICY_STORE, else "
            "the cluster's in $KUBECREW_HOME/clusters/]",
            show_default=False,
        ),
    ] = None,
    person: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="The person this server acts as. With a SQLite store the local user is "
            "trusted as named; with `--store kubernetes` the API server says who you are, and a "
            "different --as is refused. [default: $KUBECREW_USER, else the login name]",
            show_default=False,
        ),
    ] = None,
    group: Annotated[
        list[str] | None,
        typer.Option(
            help="A group of that person (repeatable); approvals name groups. "
            "[default: $KUBECREW_GROUPS, comma-separated]",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            help="Act as this agent instead of a person: it proposes and evaluates, and has no "
            "answer_approval tool.",
            show_default=False,
        ),
    ] = None,
    read_only: Annotated[
        bool, typer.Option(help="Register no write tool (no propose, no answer_approval).")
    ] = False,
    transport: TransportOption = Transport.stdio,
    host: HostOption = LOOPBACK,
    port: PortOption = DEFAULT_PORT,
    token_file: TokenFileOption = None,
    allow_remote: AllowRemoteOption = False,
    health_port: HealthPortOption = None,
) -> None:
    """Policies, proposals, approvals and the audit log of the shared policy store.

    Who uses the server is its configuration, never a tool argument: one person (`--as`,
    `--group`) or one agent (`--agent`).

    **Examples**

    ```
    kubecrew mcp policy --agent cluster-operator --store ~/.kubecrew/policy/store.sqlite
    kubecrew mcp policy --as alice --group shop-admins
    kubecrew mcp policy --store kubernetes:prod --read-only --transport http --port 8814
    ```
    """
    options = _transport(transport, host, port, token_file, allow_remote)
    from core.errors import ToolError
    from core.policy.settings import PolicySettings
    from mcp_servers.common.transport import serve
    from mcp_servers.policy.server import build

    settings = PolicySettings(
        policies=tuple(policies or ()),
        store=store,
        person=person,
        groups=tuple(group or ()),
        agent=agent,
        read_only=read_only,
    )
    try:
        server = build(settings)
    except ToolError as exc:  # bad policies, an unusable store, an identity refused
        fail(exc.message)
    ready = [*_store_reached(store), *_listening(options)]
    _serve(lambda: serve(server, options, name="policy"), health_port, ready)


def _serve(run: Callable[[], None], health_port: int | None, ready: list[Check]) -> None:
    try:
        with serving(health_port, ready):
            run()
    except (TransportError, HealthError) as exc:
        fail(str(exc))


def _listening(options: TransportOptions) -> list[Check]:
    """Over HTTP, the server is ready once its port accepts connections."""
    if options.transport != "http":
        return []
    return [listening(options.host, options.port, "the MCP server")]


def _store_reached(store: str | None) -> list[Check]:
    """A policy store on the cluster (`kubernetes[:CONTEXT]`) is reached through $KUBECONFIG,
    as `open_store` reaches it; a SQLite file needs nothing reachable."""
    from core.policy.store import KUBERNETES, SPEC_ENV

    spec = store or os.environ.get(SPEC_ENV) or ""
    if spec != KUBERNETES and not spec.startswith(KUBERNETES + ":"):
        return []
    kubeconfig = os.environ.get("KUBECONFIG")
    return [kube_api(Path(kubeconfig) if kubeconfig else None, spec.partition(":")[2] or None)]
