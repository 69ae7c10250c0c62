"""`kubecrew watch`: notice what goes wrong, open one incident per problem, and diagnose it.

Runs until Ctrl-C: a Kubernetes watch of Warning events per namespace (`-n`, repeatable; none:
the whole cluster), a `diagnose` patrol every `--every` (default 5m; `0` turns it off), and with
`--alertmanager-port` an Alertmanager webhook receiver (on loopback, or the address
`--alertmanager-host` / $KUBECREW_ALERTMANAGER_HOST names: 0.0.0.0 in a pod, where Alertmanager
reaches it through its Service) that demands a bearer token
(`--token-file`, else $KUBECREW_WATCH_TOKEN, else one is generated into a 0600 file whose path,
never the token, is printed). Each new or returning incident is diagnosed by the Dev Team agent
and the answer printed. `--heal` hands it to the remediation loop instead, with the crew's
servers (`kubecrew.crew`: the kube server gated by policy, the policy server and, with `--repo`,
the GitOps repository): at most `--max-heals` at once, the rest waiting their turn (said in
the log); a heal that a policy gives to a person waits, and resumes on a patrol pass once the
request is answered (by `kubecrew approvals`, Slack, chat or a PR review), saying by whom.

Incidents live in the cluster's incident book (`$KUBECREW_HOME/clusters/<cluster>/agents/`), so
a restart merges into the same ones; with `--heal` it also heals, once, those an earlier watch
left open. Progress and answers go to stderr, one line per event of note; stdout stays empty.
With `--health-port` (or $KUBECREW_HEALTH_PORT, which the image sets) it answers `/healthz` and
`/readyz` (`kubecrew.health`): ready while the cluster answers and the receiver listens.
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.channels.slack.settings import SLACK_API_URL
from kubecrew.cli.options import fail, period
from kubecrew.crew import CrewOptions, crew_options, resolve
from kubecrew.health import LOOPBACK, HealthError, HealthPortOption, kube_api, listening, serving
from kubecrew.leader import (
    LeaderElectOption,
    LeaseDurationOption,
    LeaseError,
    RenewDeadlineOption,
    RetryPeriodOption,
    election,
    lead,
    taking_part,
    terminated_as_interrupted,
    when_leading,
)

if TYPE_CHECKING:
    from agents.dev_team.incidents import Healer
    from agents.runtime.notify.desk import Handler, Say
    from agents.runtime.notify.watcher import Resume, WatchPlan
    from kubecrew.leader import Leadership

TOKEN_ENV = "KUBECREW_WATCH_TOKEN"
LEASE = "kubecrew-watch"


def _stopped_by_ctrl_c(command: Callable[..., None]) -> Callable[..., None]:
    """Ctrl-C ends `watch` at any moment (even while it starts) with "stopped" and status 0:
    it is how a watch is meant to end."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except KeyboardInterrupt:
            Console(stderr=True, highlight=False).print("stopped")

    return run


@_stopped_by_ctrl_c
@crew_options
def watch(
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="watch this namespace (repeat for more)"),
    ] = None,
    alertmanager_port: Annotated[
        int | None, typer.Option(help="serve the Alertmanager webhook on this port")
    ] = None,
    alertmanager_host: Annotated[
        str,
        typer.Option(
            envvar="KUBECREW_ALERTMANAGER_HOST",
            help="the address the webhook listens on: loopback unless the receiver must be "
            "reached from elsewhere (0.0.0.0 in a pod)",
        ),
    ] = LOOPBACK,
    token_file: Annotated[
        Path | None, typer.Option(help="file holding the webhook's bearer token")
    ] = None,
    every: Annotated[
        str, typer.Option(help="patrol (diagnose) period, e.g. 30s, 5m; 0 turns it off")
    ] = "5m",
    heal: Annotated[
        bool,
        typer.Option(
            help="let the Dev Team agent heal each incident through policy (and by pull "
            "request with --repo) instead of only diagnosing it"
        ),
    ] = False,
    max_heals: Annotated[
        int,
        typer.Option(min=1, help="with --heal: at most this many heals at once; others wait"),
    ] = 2,
    slack_channel: Annotated[
        str | None,
        typer.Option(
            help="post one message per incident, updated as it is handled, to its owners' "
            "Slack channel (else this one); needs $SLACK_BOT_TOKEN"
        ),
    ] = None,
    slack_api_url: Annotated[str, typer.Option(help="The Slack Web API base URL.")] = SLACK_API_URL,
    health_port: HealthPortOption = None,
    leader_elect: LeaderElectOption = False,
    leader_elect_lease_duration: LeaseDurationOption = 15.0,
    leader_elect_renew_deadline: RenewDeadlineOption = 10.0,
    leader_elect_retry_period: RetryPeriodOption = 2.0,
    *,
    crew: CrewOptions,
) -> None:
    """Watch the cluster and diagnose (or, with --heal, heal) each new incident once, until
    Ctrl-C.

    **Examples**

    ```
    kubecrew watch -n shop
    kubecrew watch --alertmanager-port 9095 --every 1m
    kubecrew watch -n shop --heal --repo ./shop-gitops --max-heals 1
    kubecrew watch --alertmanager-port 9095 --health-port 8081   # /healthz, /readyz
    kubecrew watch --heal --leader-elect     # in each of two replicas: one works at a time
    SLACK_BOT_TOKEN=xoxb-... kubecrew watch -n shop --slack-channel C0123ABCD
    ```
    """
    from agents.dev_team import incidents
    from agents.dev_team.state import AGENT
    from agents.runtime.brain import planner_from_env
    from agents.runtime.notify.incidents import default_path
    from agents.runtime.notify.watcher import WatchPlan
    from agents.runtime.toolbox import Servers
    from core.errors import ToolError
    from core.policy.store import open_store
    from core.telemetry import sayer, watch_approvals

    log = Console(stderr=True, highlight=False, soft_wrap=True)
    every_s = period(every, "--every")
    if alertmanager_port is not None and not 0 < alertmanager_port < 65536:
        fail(f"--alertmanager-port {alertmanager_port} is not a TCP port (1-65535)")
    try:
        servers = resolve(crew).servers(AGENT)
    except ToolError as exc:
        fail(exc.message)
    token = _token(token_file, log) if alertmanager_port is not None else ""

    say = sayer(lambda line: log.print(escape(line)), name="watch")
    if servers.policy is not None:  # the approvals waiting, on /metrics (core.telemetry)
        store = servers.policy.store
        watch_approvals(lambda: open_store(store))

    healer = None
    if heal:
        healer = incidents.Healer(
            servers,
            incidents=default_path(),
            planner=planner_from_env(agent="dev_team"),
            max_heals=max_heals,
            say=say,
        )
        handler: Handler = healer
    else:
        handler = incidents.diagnose_with_dev_team(
            servers, planner_from_env(agent="dev_team"), home=None
        )
    if slack_channel is not None:
        handler = _in_slack(handler, healer, slack_channel, slack_api_url)
    plan = WatchPlan(
        servers=Servers(kube=servers.kube),  # the watcher's own sessions only read the cluster
        namespaces=tuple(namespace or ()),
        every_s=every_s,
        alertmanager_port=alertmanager_port,
        alertmanager_host=alertmanager_host,
        token=token,
        take_over=heal,  # heal what a watch without --heal only diagnosed
    )
    resume = healer.resume_answered if healer is not None else None
    leadership = None
    if leader_elect and servers.kube is not None:
        timings = (
            leader_elect_lease_duration,
            leader_elect_renew_deadline,
            leader_elect_retry_period,
        )
        try:  # the Lease is taken as the Dev Team, the identity the watch works as
            leadership = election(
                LEASE, servers.kube.kubeconfig, servers.kube.context, timings=timings, say=say
            )
        except LeaseError as exc:
            fail(str(exc))
    # Ready once the cluster answers as the Dev Team, and the receiver listens when there is one
    # (on the Lease's holder: a replica standing by is ready to take over).
    ready = [kube_api(servers.kube.kubeconfig, servers.kube.context)] if servers.kube else []
    if alertmanager_port is not None:
        at = LOOPBACK if alertmanager_host in ("0.0.0.0", "::") else alertmanager_host
        ready.append(when_leading(leadership, listening(at, alertmanager_port, "the receiver")))

    try:
        with serving(health_port, ready), terminated_as_interrupted(), taking_part(leadership):
            anyio.run(lambda: _watching(plan, handler, say, resume, leadership))
    except (HealthError, LeaseError) as exc:
        fail(str(exc))
    except ToolError as exc:  # the database does not answer
        fail(exc.message)
    except OSError as exc:  # the port is taken, the home is not writable
        fail(f"cannot watch: {exc}")


async def _watching(
    plan: WatchPlan,
    handler: Handler,
    say: Say,
    resume: Resume | None,
    leadership: Leadership | None,
) -> None:
    """The watch, alone or while holding the Lease: each term starts by disowning the heals the
    previous holder left (their incidents open again, and the first signal of each continues its
    heal's thread, `Incidents.disown`)."""
    from agents.runtime.notify.watcher import watch as run_watch

    if leadership is None:
        await run_watch(plan, handler, say=say, resume=resume)
        return

    async def term() -> None:
        left = _reopened(plan.incidents)
        if left:
            subjects = ", ".join(left)
            say(f"the previous holder left {len(left)} incident(s) under way: {subjects}")
        await run_watch(plan, handler, say=say, resume=resume)

    await lead(leadership, term, say=say)


def _reopened(path: Path) -> list[str]:
    """The incidents left under way by the previous holder, open again (`Incidents.disown`)."""
    from agents.runtime.notify.incidents import open_incidents

    book = open_incidents(path)
    try:
        return book.disown()
    finally:
        book.close()


def _in_slack(handler: Handler, healer: Healer | None, channel: str, api_url: str) -> Handler:
    from agents.runtime.notify.incidents import default_path
    from core.errors import ToolError
    from kubecrew.channels.slack import incidents

    try:
        messages = incidents.open_messages(channel, api_url=api_url, incidents=default_path())
    except ToolError as exc:
        fail(exc.message)
    # The loop reports its nodes (learn, recommend, mutate, validate) for the message to follow.
    steps = healer.stepped if healer is not None else incidents.stepped(handler)
    return messages.handler(steps)


def _strong(token: str, source: str) -> str:
    """The webhook's token is held to the MCP servers' rule: 32 random bytes' worth."""
    from mcp_servers.common.transport import TransportError, strong_token

    try:
        return strong_token(token, source=source)
    except TransportError as exc:
        fail(str(exc))


def _token(path: Path | None, log: Console) -> str:
    if path is not None:
        try:
            token = path.expanduser().read_text().strip()
        except OSError as exc:
            fail(f"cannot read --token-file {path}: {exc.strerror}")
        if not token:
            fail(f"--token-file {path} is empty; put the bearer token in it")
        return _strong(token, f"the token in --token-file {path}")
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return _strong(token, f"${TOKEN_ENV}")
    base = os.environ.get("KUBECREW_HOME")
    target = (Path(base) if base else Path.home() / ".kubecrew") / "watch" / "alertmanager.token"
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(token + "\n")
    log.print(f"webhook bearer token written to {escape(str(target))}")
    return token
