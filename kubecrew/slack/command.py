"""`kubecrew slack`: run the crew's Slack app (approvals and conversations in Slack) until stopped.

This module only turns options into `SlackSettings`, builds the dependencies once (people file,
policies, store, the bot token checked with Slack, the front door that conversations reach the
agents through), and runs `SlackService` in the chosen mode.
Every startup problem is one line naming what to fix; a token is never printed. Bolt, uvicorn
and the engine are imported when the command runs, so `kubecrew --help` stays quick.
"""

from __future__ import annotations

import logging
import sys
import threading
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kubecrew.proposal_commands import StoreOption
from kubecrew.slack.settings import (
    APP_TOKEN_ENV,
    BOT_TOKEN_ENV,
    SIGNING_SECRET_ENV,
    SLACK_API_URL,
    Mode,
)
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from kubecrew.slack.app import SlackService
    from kubecrew.slack.conversation import Router
    from kubecrew.slack.deps import SlackDeps
    from kubecrew.slack.settings import SlackSettings

HELP = (
    "Run the crew's Slack app: mentions, DMs and /kubecrew answered by the crew in their "
    "thread, and approval requests posted to their owners' channel with Approve / Deny "
    "buttons.\n\n"
    f"Secrets come from the environment: ${BOT_TOKEN_ENV} always, ${APP_TOKEN_ENV} for Socket "
    f"Mode, ${SIGNING_SECRET_ENV} for HTTP events mode. See the README's Slack section."
)


class ModeChoice(StrEnum):
    socket = "socket"
    http = "http"


_MODES: dict[ModeChoice, Mode] = {ModeChoice.socket: "socket", ModeChoice.http: "http"}


def slack(
    mode: Annotated[
        ModeChoice,
        typer.Option(help="`socket`: dial out to Slack (no public URL); `http`: serve events."),
    ] = ModeChoice.socket,
    host: Annotated[str, typer.Option(help="http: address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: TCP port (0: any free one).")] = 3000,
    store: StoreOption = None,
    people: Annotated[
        Path | None,
        typer.Option(
            help="Who each Slack user is (a People file). [default: $KUBECREW_PEOPLE, else "
            "$KUBECREW_HOME/people.yaml]",
            show_default=False,
        ),
    ] = None,
    policies: Annotated[
        list[Path] | None,
        typer.Option(
            "--policies",
            "-p",
            help="Policy files or directories, for the owners' channels (Ownership spec.slack). "
            "[default: as for `kubecrew policy`]",
            show_default=False,
        ),
    ] = None,
    channel: Annotated[
        str | None,
        typer.Option(help="Channel id for requests whose owner names no Slack channel."),
    ] = None,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            help="CHANNEL_ID=USER_ID,USER_ID: only these users may act in that channel "
            "(repeatable).",
            show_default=False,
        ),
    ] = None,
    api_url: Annotated[str, typer.Option(help="The Slack Web API base URL.")] = SLACK_API_URL,
    poll: Annotated[float, typer.Option(help="Seconds between looks at the store.")] = 3.0,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            help="The cluster the agents answer about. [default: $KUBECONFIG, else ~/.kube/config]",
            show_default=False,
        ),
    ] = None,
    context: Annotated[
        str | None, typer.Option(help="kubeconfig context [default: the current one]")
    ] = None,
) -> None:
    """Run the Slack app until Ctrl-C.

    **Example**

    ```
    SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-... kubecrew slack --channel C0123ABCD
    ```
    """
    from mcp_servers.common.errors import ToolError

    try:
        service, settings = _service(
            _MODES[mode], host, port, store, people, policies, channel, allow, api_url, poll,
            cluster=(kubeconfig, context),
        )  # fmt: skip
        if settings.mode == "http":
            server = service.http_server()
            _ready(f"serving Slack events at {server.url}", settings.store)
            service.serve_http(server)
        else:
            service.serve_socket(
                stop=threading.Event(),
                on_ready=lambda: _ready("connected to Slack in Socket Mode", settings.store),
            )
    except ToolError as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _service(
    mode: Mode,
    host: str,
    port: int,
    store: str | None,
    people: Path | None,
    policies: list[Path] | None,
    channel: str | None,
    allow: list[str] | None,
    api_url: str,
    poll: float,
    *,
    cluster: tuple[Path | None, str | None],
) -> tuple[SlackService, SlackSettings]:
    """Everything checked and built before serving; ToolErrors say what is wrong."""
    from kubecrew.slack import settings as slack_settings
    from kubecrew.slack.app import SlackService, connect
    from kubecrew.slack.deps import SlackDeps
    from kubecrew.slack.ledger import ledger_path
    from kubecrew.slack.owners import load_policies
    from mcp_servers.policy.people import load_people
    from mcp_servers.policy.store import open_store

    settings = slack_settings.SlackSettings(
        mode=mode,
        credentials=slack_settings.credentials(mode),
        api_url=api_url,
        host=host,
        port=port,
        store=store,
        people=people,
        policies=tuple(policies or ()),
        channel=channel,
        allow=slack_settings.parse_allow(allow or []),
        poll=poll,
    )
    deps = SlackDeps(
        settings=settings,
        people=load_people(people),
        policies=load_policies(settings.policies),
        open_store=lambda: open_store(store),
        ledger_path=ledger_path(store),
    )
    deps.open_store().close()  # a store that cannot be opened fails now, not on each pass
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    client, who = connect(settings)
    logging.getLogger(__name__).info(
        "bot %s in team %s", who.get("user", "?"), who.get("team", "?")
    )
    return SlackService(deps, client, router=_router(deps, *cluster)), settings


def _router(deps: SlackDeps, kubeconfig: Path | None, context: str | None) -> Router:
    """The front door the conversations go through: the agents on the kubeconfig's cluster,
    answering approvals in the app's store as the people file's person."""
    from agents.runtime.brain import planner_from_env
    from agents.runtime.toolbox import Servers
    from kubecrew.frontdoor import FrontDoor, crew_home
    from kubecrew.slack.conversation import front_door_router
    from mcp_servers.kube.settings import KubeSettings

    door = FrontDoor(
        servers=Servers(kube=KubeSettings(kubeconfig=kubeconfig, context=context)),
        planner=planner_from_env(),
        home=crew_home(),
        open_store=deps.open_store,
        via="slack",
        now=deps.now,
    )
    return front_door_router(door)


def _ready(what: str, store: str | None) -> None:
    from mcp_servers.policy.store import describe_spec

    print(f"kubecrew slack: {what}; approvals from {describe_spec(store)}", file=sys.stderr)
    sys.stderr.flush()
