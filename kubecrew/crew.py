"""The crew's configuration: the one place options and the crew file become an agent's `Servers`.

Every front door (`kubecrew ask`, `chat`, `heal`, `watch`, `slack`) takes the same six options,
added by `@crew_options` and handed to the command as one `CrewOptions`, so no command copies
an option block and every agent reaches the world the same way:

    --kubeconfig PATH      the cluster                  crew.yaml: kubeconfig
    --context NAME         its kubeconfig context       crew.yaml: context
    --repo DIR             the team's GitOps repository crew.yaml: repo
    --policies PATH        policy files or directories  crew.yaml: policies (a list)
    --policy-store SPEC    the policy store             crew.yaml: policy_store
    --prometheus URL       golden signals from it       crew.yaml: prometheus

The crew file also names the image registries the crew may ask (`registries`, a mapping of
registry host, or `*`, to the base URL of its `/v2/`: `mcp_servers.kube.registries`); none
named, no registry is asked and image fixes come from what the cluster ran. And the clusters of
the fleet (`clusters`, a list of kubeconfig contexts of its kubeconfig): the Cluster Operator's
fleet survey (`kubecrew run --fleet`) reads each and moves replicas between them.

An option given on the command line wins over the crew file, `$KUBECREW_HOME/crew.yaml`
(relative paths in it are read from its folder); what neither names falls back to the defaults:
the policies `kubecrew policy` reads (./policies, else the shipped ones, plus
$KUBECREW_POLICIES), the policy store every `kubecrew` command opens by default
($KUBECREW_POLICY_STORE, else the cluster's, `policy/store.sqlite` in its state folder), no
GitOps repository and no Prometheus. `kubecrew sandbox up` writes the file for its cluster
when there is none, with the sandbox's own registries as the mirrors. Each command follows the
cluster its kubeconfig names (`follow_cluster`): what the crew learns is kept with it.

`Crew.servers(agent)` gives every agent the kube server gated by those policies and audited in
that store as the agent, the policy server acting as the agent, and the gitops and metrics
servers when a repository and a Prometheus are named. The gitops server writes to the forge as
the crew (`gitops_authors`: the PR channel never takes those for a person) and records its
merges and syncs in that store as the agent. A kubeconfig that came from the crew file
still lets an agent speak as its own ServiceAccount (`agents.runtime.identity`) when one is
installed for that cluster; a `--kubeconfig` or `--context` typed by the person always wins.

Problems are `ToolError`s with one line saying what to fix: a repository that is not a git
repository, a policy that does not load, a crew file that is not a mapping of these keys.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml

from core.errors import InvalidArgument, NotFound
from core.home import (
    STATE_ENV,
    Cluster,
    cluster_state,
    current_cluster,
    default_kubeconfigs,
    kubecrew_home,
)

if TYPE_CHECKING:
    from agents.runtime.toolbox import Servers
    from mcp_servers.gitops.settings import GitopsSettings

CREW_FILE = "crew.yaml"
FOLLOWING = "kubecrew.following"  # in a command's click meta: its state follows its cluster
_CONTEXT = "kubecrew_context"  # the click context, handed by Typer to `crew_options` commands
KEYS = (
    "kubeconfig", "context", "repo", "policies", "policy_store", "prometheus", "registries",
    "clusters",
)  # fmt: skip
_PATHS = ("kubeconfig", "repo")


def crew_home(environ: Mapping[str, str] = os.environ) -> Path:
    """`$KUBECREW_HOME`, else ~/.kubecrew: the crew file and the person's other files."""
    return kubecrew_home(environ)


def crew_file(environ: Mapping[str, str] = os.environ) -> Path:
    return crew_home(environ) / CREW_FILE


@dataclass(frozen=True)
class CrewOptions:
    """What the command line (or the crew file) says; None or empty: not said."""

    kubeconfig: Path | None = None
    context: str | None = None
    repo: Path | None = None
    policies: tuple[Path, ...] = ()
    policy_store: str | None = None
    prometheus: str | None = None
    registries: Mapping[str, str] = field(default_factory=dict, hash=False)  # crew file only
    clusters: tuple[str, ...] = ()  # the fleet's kubeconfig contexts (crew file only)

    def over(self, under: CrewOptions) -> CrewOptions:
        """These options, with what they leave unsaid taken from `under`."""
        return CrewOptions(
            kubeconfig=self.kubeconfig or under.kubeconfig,
            context=self.context or under.context,
            repo=self.repo or under.repo,
            policies=self.policies or under.policies,
            policy_store=self.policy_store or under.policy_store,
            prometheus=self.prometheus or under.prometheus,
            registries=self.registries or under.registries,
            clusters=self.clusters or under.clusters,
        )


@dataclass(frozen=True)
class Crew:
    """The options resolved and checked: what every agent of this process is started with."""

    kubeconfig: Path | None
    context: str | None
    repo: Path | None
    policies: tuple[Path, ...]  # never empty: the gate is always on
    policy_store: str | None  # None: the default store (see the module)
    prometheus: str | None
    kubeconfig_from_file: bool = False  # the crew file named it, not the person
    registries: Mapping[str, str] = field(default_factory=dict, hash=False)  # host -> base URL
    clusters: tuple[str, ...] = ()  # the fleet's kubeconfig contexts; () for one cluster
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ, repr=False)

    def servers(self, agent: str) -> Servers:
        """The MCP servers `agent` gets: kube (gated, audited as the agent), policy (as the
        agent), gitops with a repository, metrics with a Prometheus."""
        from agents.runtime.toolbox import Servers
        from core.policy.settings import PolicySettings
        from mcp_servers.kube.settings import KubeSettings
        from mcp_servers.metrics.settings import MetricsSettings

        kube = KubeSettings(
            kubeconfig=self.kubeconfig,
            context=self.context,
            policies=self.policies,
            policy_store=self.policy_store,
            agent=agent,
            registries=self.registries,
            fleet=self.clusters,
        )
        return Servers(
            kube=self._own_identity(kube, agent),
            policy=PolicySettings(policies=self.policies, store=self.policy_store, agent=agent),
            gitops=self.gitops(agent),
            metrics=MetricsSettings(
                prometheus_url=self.prometheus, kubeconfig=self.kubeconfig, context=self.context
            )
            if self.prometheus
            else None,
        )

    def gitops(self, agent: str) -> GitopsSettings | None:
        """The gitops server `agent` gets, with a repository: writing to the forge as the crew
        (`CREW_AUTHOR`, never as the agent's caller says), its merges and syncs recorded in the
        crew's policy store as the agent."""
        from mcp_servers.gitops.settings import GitopsSettings

        if self.repo is None:
            return None
        return GitopsSettings(
            repo=self.repo,
            state_dir=GitopsSettings.default_state_dir(self.repo),
            kubeconfig=self.kubeconfig,
            context=self.context,
            audit=True,
            policy_store=self.policy_store,
            agent=agent,
        )

    def _own_identity(self, kube: Any, agent: str) -> Any:
        """The agent's installed kubeconfig for the crew file's cluster, when there is one."""
        if not self.kubeconfig_from_file or self.kubeconfig is None:
            return kube
        from agents.runtime.identity import kube_for

        environ = {**self.environ, "KUBECONFIG": str(self.kubeconfig)}
        own = kube_for(agent, replace(kube, kubeconfig=None), environ)
        return kube if own is None or own.kubeconfig is None else own


def gitops_authors(repo: Path) -> frozenset[str]:
    """Who every installed agent's gitops server writes to the forge as (`Crew.gitops`): the
    crew's own identities, whose reviews and comments never count as a person's."""
    from agents.runtime import registry

    crew = Crew(None, None, repo, (), None, None)
    servers = (crew.gitops(agent) for agent in registry.names())
    return frozenset(s.author_name for s in servers if s is not None)


def read_crew_file(path: Path) -> CrewOptions:
    """The crew file's options (none when it is missing); InvalidArgument when it is malformed."""
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return CrewOptions()
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InvalidArgument(f"crew file {path} cannot be read: {exc}; fix or delete it") from exc
    if loaded is None:
        return CrewOptions()
    if not isinstance(loaded, dict):
        raise InvalidArgument(f"crew file {path} must be a mapping of {', '.join(KEYS)}")
    unknown = sorted(str(k) for k in loaded if k not in KEYS)
    if unknown:
        raise InvalidArgument(
            f"crew file {path}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(KEYS)}"
        )
    values: dict[str, Any] = {}
    for key, value in loaded.items():
        if value is None or value == "":
            continue
        if key == "policies":
            listed = value if isinstance(value, list) else [value]
            values[key] = tuple(_relative(path, str(p)) for p in listed)
        elif key in _PATHS:
            values[key] = _relative(path, str(value))
        elif key == "registries":
            values[key] = _mirrors(path, value)
        elif key == "clusters":
            values[key] = _contexts(path, value)
        else:
            values[key] = str(value)
    return CrewOptions(**values)


def _mirrors(crew: Path, value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
    ):
        raise InvalidArgument(
            f"crew file {crew}: registries must map a registry host (or *) to the base URL of "
            "its /v2/, e.g. {'*': 'https://mirror.example/{host}', 'ghcr.io': 'direct'}"
        )
    return dict(value)


def _contexts(crew: Path, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(c, str) and c for c in value):
        raise InvalidArgument(
            f"crew file {crew}: clusters must list kubeconfig contexts, e.g. [east, west]"
        )
    return tuple(value)


def _relative(crew: Path, text: str) -> Path:
    given = Path(text).expanduser()
    return given if given.is_absolute() else crew.parent / given


def resolve(given: CrewOptions, environ: Mapping[str, str] = os.environ) -> Crew:
    """`given` over the crew file over the defaults, checked (see the module docstring)."""
    from core.policy.settings import PolicySettings

    from_file = read_crew_file(crew_file(environ))
    chosen = given.over(from_file)
    policies = chosen.policies or tuple(PolicySettings().policy_paths(environ))
    _check_policies(policies)
    if chosen.repo is not None:
        _check_repo(chosen.repo)
    return Crew(
        kubeconfig=chosen.kubeconfig,
        context=chosen.context,
        repo=chosen.repo,
        policies=policies,
        policy_store=chosen.policy_store,
        prometheus=chosen.prometheus,
        registries=chosen.registries,
        clusters=chosen.clusters,
        kubeconfig_from_file=given.kubeconfig is None
        and given.context is None
        and from_file.kubeconfig is not None,
        environ=environ,
    )


def _check_policies(paths: tuple[Path, ...]) -> None:
    from core.policy.loading import load_report

    report = load_report(list(paths))
    if report.problems:
        raise InvalidArgument(
            f"policies do not load: {report.problems[0]}; fix it (`kubecrew policy validate` "
            "lists every problem) or point --policies elsewhere"
        )


def _check_repo(repo: Path) -> None:
    import git

    try:
        git.Repo(repo)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise NotFound(
            f"--repo {repo} is not a git repository; give the directory of the team's GitOps "
            "repository (a clone, or `git init` one)"
        ) from exc


def write_crew_file(
    *,
    kubeconfig: Path,
    prometheus: str | None = None,
    registries: Mapping[str, str] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Path | None:
    """Write the crew file naming this cluster (and its registries' mirrors), only when there is
    none; its path, or None when one was already there (a person's file is never overwritten)."""
    path = crew_file(environ)
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    values: dict[str, Any] = {"kubeconfig": str(kubeconfig)}
    if prometheus:
        values["prometheus"] = prometheus
    if registries:
        values["registries"] = dict(registries)
    header = (
        "# The crew's defaults for ask, chat, heal, watch and slack (options on the command line\n"
        f"# win). Keys: {', '.join(KEYS)}.\n# Written by `kubecrew sandbox up`.\n"
    )
    path.write_text(header + yaml.safe_dump(values, sort_keys=False), encoding="utf-8")
    return path


def follow_cluster(
    given: CrewOptions | None = None, environ: MutableMapping[str, str] = os.environ
) -> Path | None:
    """Point `$KUBECREW_STATE` at the state folder of the cluster the crew talks to: the
    cluster of `given`'s kubeconfig and context, else the crew file's, else the default
    kubeconfig's (`core.home`). Its folder, or None (nothing changed) when no kubeconfig names
    a server or the crew file cannot be read (the command then says why, if it needs either)."""
    cluster = crew_cluster(given, environ)
    if cluster is None:
        return None
    folder = cluster_state(cluster, environ)
    environ[STATE_ENV] = str(folder)
    return folder


def crew_cluster(
    given: CrewOptions | None = None, environ: Mapping[str, str] = os.environ
) -> Cluster | None:
    """The cluster the crew talks to (see `follow_cluster`); None when no kubeconfig names a
    server or the crew file cannot be read."""
    try:
        chosen = (given or CrewOptions()).over(read_crew_file(crew_file(environ)))
    except InvalidArgument:
        return None
    files = [chosen.kubeconfig] if chosen.kubeconfig else default_kubeconfigs(environ)
    return current_cluster(files, chosen.context)


# -- the option bundle -------------------------------------------------------------------------

KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        help="kubeconfig file [default: crew.yaml's, else $KUBECONFIG, else ~/.kube/config]",
        show_default=False,
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option(help="kubeconfig context [default: the current one]", show_default=False),
]
RepoOption = Annotated[
    Path | None,
    typer.Option(
        help="the team's GitOps repository (a git directory): changes go by pull request there",
        show_default=False,
    ),
]
PoliciesOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--policies",
        "-p",
        help="policy files or directories (repeatable) [default: crew.yaml's, else ./policies "
        "or the shipped ones, plus $KUBECREW_POLICIES]",
        show_default=False,
    ),
]
PolicyStoreOption = Annotated[
    str | None,
    typer.Option(
        "--policy-store",
        "--store",
        help="the policy store: a SQLite file, or `kubernetes[:CONTEXT]` [default: crew.yaml's, "
        "else $KUBECREW_POLICY_STORE, else the cluster's in $KUBECREW_HOME/clusters/]",
        show_default=False,
    ),
]
PrometheusOption = Annotated[
    str | None,
    typer.Option(
        help="Prometheus URL: adds golden signals (rate, errors, latency)", show_default=False
    ),
]
_BUNDLE: dict[str, Any] = {
    "kubeconfig": KubeconfigOption,
    "context": ContextOption,
    "repo": RepoOption,
    "policies": PoliciesOption,
    "policy_store": PolicyStoreOption,
    "prometheus": PrometheusOption,
}


def crew_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give a Typer command the crew's six options, handed to it as `crew: CrewOptions`.

    Typer reads a command's parameters from its signature; this wrapper's signature is the
    command's own (without `crew`) plus the six options, so `--help` shows them all and each
    command declares none of them.
    """
    signature = inspect.signature(command, eval_str=True)
    own = [p for name, p in signature.parameters.items() if name != "crew"]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint)
        for name, hint in _BUNDLE.items()
    ]

    @functools.wraps(command)
    def run(**arguments: Any) -> None:
        said = {name: arguments.pop(name) for name in _BUNDLE}
        said["policies"] = tuple(said["policies"] or ())
        options = CrewOptions(**said)
        running: typer.Context = arguments.pop(_CONTEXT)
        if running.meta.get(FOLLOWING) and (options.kubeconfig or options.context):
            follow_cluster(options)  # the cluster typed here, not the crew file's
        command(crew=options, **arguments)

    context = inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    parameters = [*own, *added, context]
    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.__annotations__["return"] = signature.return_annotation
    return run
