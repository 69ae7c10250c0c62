"""`kubecrew watch`: notice what goes wrong, open one incident per problem, and diagnose it.

Runs until Ctrl-C: a Kubernetes watch of Warning events per namespace (`-n`, repeatable; none:
the whole cluster), a `diagnose` patrol every `--every` (default 5m; `0` turns it off), and with
`--alertmanager-port` an Alertmanager webhook receiver on loopback that demands a bearer token
(`--token-file`, else $KUBECREW_WATCH_TOKEN, else one is generated into a 0600 file whose path,
never the token, is printed). Each new or returning incident is diagnosed by the Dev Team agent
and the answer printed; `--heal` (hidden until the remediation loop lands) hands it to the loop.

Incidents live in `$KUBECREW_HOME/agents/incidents.sqlite`, so a restart merges into the same
ones. Progress and answers go to stderr, one line per event of note; stdout stays empty.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from kubecrew.slack.settings import SLACK_API_URL
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from agents.runtime.notify.desk import Handler
    from agents.runtime.toolbox import Servers

TOKEN_ENV = "KUBECREW_WATCH_TOKEN"
_DURATION = re.compile(r"^(\d+)(s|m|h)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, None: 1}


def watch(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(help="kubeconfig file [default: $KUBECONFIG, else ~/.kube/config]"),
    ] = None,
    context: Annotated[
        str | None, typer.Option(help="kubeconfig context [default: the current one]")
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="watch this namespace (repeat for more)"),
    ] = None,
    alertmanager_port: Annotated[
        int | None, typer.Option(help="serve the Alertmanager webhook on this loopback port")
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option(help="file holding the webhook's bearer token")
    ] = None,
    every: Annotated[
        str, typer.Option(help="patrol (diagnose) period, e.g. 30s, 5m; 0 turns it off")
    ] = "5m",
    heal: Annotated[bool, typer.Option(hidden=True, help="let the Dev Team agent heal")] = False,
    slack_channel: Annotated[
        str | None,
        typer.Option(
            help="post one message per incident, updated as it is handled, to its owners' "
            "Slack channel (else this one); needs $SLACK_BOT_TOKEN"
        ),
    ] = None,
    slack_api_url: Annotated[str, typer.Option(help="The Slack Web API base URL.")] = SLACK_API_URL,
) -> None:
    """Watch the cluster and diagnose each new incident once, until Ctrl-C.

    **Examples**

    ```
    kubecrew watch -n shop
    kubecrew watch --alertmanager-port 9095 --every 1m
    SLACK_BOT_TOKEN=xoxb-... kubecrew watch -n shop --slack-channel C0123ABCD
    ```
    """
    from agents.runtime.brain import planner_from_env
    from agents.runtime.notify import handlers
    from agents.runtime.notify.watcher import WatchPlan
    from agents.runtime.notify.watcher import watch as run_watch
    from agents.runtime.toolbox import Servers
    from mcp_servers.kube.settings import KubeSettings

    log = Console(stderr=True, highlight=False, soft_wrap=True)
    period = _period(every)
    if alertmanager_port is not None and not 0 < alertmanager_port < 65536:
        _fail(f"--alertmanager-port {alertmanager_port} is not a TCP port (1-65535)")
    token = _token(token_file, log) if alertmanager_port is not None else ""
    servers = Servers(kube=KubeSettings(kubeconfig=kubeconfig, context=context))
    if heal:
        handler = handlers.heal_with_dev_team(servers)
    else:
        handler = handlers.diagnose_with_dev_team(servers, planner_from_env(), home=None)
    if slack_channel is not None:
        handler = _in_slack(handler, servers, slack_channel, slack_api_url, heal=heal)
    plan = WatchPlan(
        servers=servers,
        namespaces=tuple(namespace or ()),
        every_s=period,
        alertmanager_port=alertmanager_port,
        token=token,
    )

    def say(line: str) -> None:
        log.print(escape(line))

    try:
        anyio.run(lambda: run_watch(plan, handler, say=say))
    except KeyboardInterrupt:
        log.print("stopped")
    except OSError as exc:  # the port is taken, the home is not writable
        _fail(f"cannot watch: {exc}")


def _in_slack(
    handler: Handler, servers: Servers, channel: str, api_url: str, *, heal: bool
) -> Handler:
    from agents.runtime.notify.incidents import default_path
    from kubecrew.slack import incidents
    from mcp_servers.common.errors import ToolError

    try:
        messages = incidents.open_messages(channel, api_url=api_url, incidents=default_path())
    except ToolError as exc:
        _fail(exc.message)
    # The loop reports its nodes (learn, recommend, mutate, validate) for the message to follow.
    steps = incidents.healing(servers) if heal else incidents.stepped(handler)
    return messages.handler(steps)


def _period(text: str) -> float | None:
    found = _DURATION.match(text.strip())
    if found is None:
        _fail(f"--every {text!r}: give a duration like 30s, 5m or 1h (0 turns the patrol off)")
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    return float(seconds) if seconds else None


def _token(path: Path | None, log: Console) -> str:
    if path is not None:
        try:
            token = path.expanduser().read_text().strip()
        except OSError as exc:
            _fail(f"cannot read --token-file {path}: {exc.strerror}")
        if not token:
            _fail(f"--token-file {path} is empty; put the bearer token in it")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
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


def _fail(message: str) -> NoReturn:
    print_failure(message)
    raise typer.Exit(1)
