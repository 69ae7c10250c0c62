"""`kubecrew slack`: run the crew's Slack app (approvals and conversations in Slack) until stopped.

This module only turns options into `SlackSettings`, builds the dependencies once (people file,
policies, store, the bot token checked with Slack, the front door that conversations reach the
agents through), and runs `SlackService` in the chosen mode. The cluster, the policies, the
policy store and the GitOps repository are the crew's options (`kubecrew.crew`, shared with
ask, chat, heal and watch; `--store` is the policy store's older name), so an agent answering
in Slack has the same servers, gates and approvals as from the terminal. A conversation whose
work waits for an approval request is resumed once the request ends however it was answered
(an Approve click included: a thread looks every `--poll` seconds), and what the agent then
did is posted in its thread.
With `--health-port` (or $KUBECREW_HEALTH_PORT, which the image sets) it answers `/healthz`
and `/readyz` (`kubecrew.health`): ready while the cluster answers and once it serves Slack.
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

from kubecrew.channels.slack.settings import (
    APP_TOKEN_ENV,
    BOT_TOKEN_ENV,
    SIGNING_SECRET_ENV,
    SLACK_API_URL,
    Mode,
)
from kubecrew.crew import Crew, CrewOptions, crew_options, resolve
from kubecrew.health import Check, HealthError, HealthPortOption, kube_api, once, serving
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from kubecrew.channels.frontdoor import FrontDoor
    from kubecrew.channels.slack.app import SlackService
    from kubecrew.channels.slack.deps import SlackDeps
    from kubecrew.channels.slack.settings import SlackSettings

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


@crew_options
def slack(
    mode: Annotated[
        ModeChoice,
        typer.Option(help="`socket`: dial out to Slack (no public URL); `http`: serve events."),
    ] = ModeChoice.socket,
    host: Annotated[str, typer.Option(help="http: address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: TCP port (0: any free one).")] = 3000,
    people: Annotated[
        Path | None,
        typer.Option(
            help="Who each Slack user is (a People file). [default: $KUBECREW_PEOPLE, else "
            "$KUBECREW_HOME/people.yaml]",
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
    health_port: HealthPortOption = None,
    *,
    crew: CrewOptions,
) -> None:
    """Run the Slack app until Ctrl-C.

    **Example**

    ```
    SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-... kubecrew slack --channel C0123ABCD
    ```
    """
    from core.errors import ToolError

    serving_slack = threading.Event()  # the events server bound, or Socket Mode connected
    try:
        resolved = resolve(crew)
        with serving(health_port, _readiness(resolved, serving_slack)):
            service, settings, door = _service(
                _MODES[mode], host, port, resolved, people, channel, allow, api_url, poll
            )
            stop = threading.Event()
            resumer = threading.Thread(
                target=_resume_answered, args=(service, door, settings.poll, stop), daemon=True
            )
            resumer.start()

            def ready(what: str) -> None:
                _ready(what, settings.store)
                serving_slack.set()

            if settings.mode == "http":
                server = service.http_server()
                ready(f"serving Slack events at {server.url}")
                service.serve_http(server)
            else:
                service.serve_socket(
                    stop=stop, on_ready=lambda: ready("connected to Slack in Socket Mode")
                )
    except ToolError as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from None
    except HealthError as exc:
        print_failure(str(exc))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _readiness(crew: Crew, serving_slack: threading.Event) -> list[Check]:
    """Ready while the cluster answers the Dev Team (the front door's first agent) and once the
    app serves Slack."""
    kube = crew.servers("dev_team").kube
    checks = [kube_api(kube.kubeconfig, kube.context)] if kube is not None else []
    return [*checks, once(serving_slack, "not serving Slack yet: see the app's log")]


def _service(
    mode: Mode,
    host: str,
    port: int,
    crew: Crew,
    people: Path | None,
    channel: str | None,
    allow: list[str] | None,
    api_url: str,
    poll: float,
) -> tuple[SlackService, SlackSettings, FrontDoor]:
    """Everything checked and built before serving; ToolErrors say what is wrong."""
    from core.policy.people import load_people
    from core.policy.store import open_store
    from kubecrew.channels.slack import settings as slack_settings
    from kubecrew.channels.slack.app import SlackService, connect
    from kubecrew.channels.slack.conversation import front_door_router
    from kubecrew.channels.slack.deps import SlackDeps
    from kubecrew.channels.slack.ledger import ledger_path
    from kubecrew.channels.slack.owners import load_policies

    store = crew.policy_store
    settings = slack_settings.SlackSettings(
        mode=mode,
        credentials=slack_settings.credentials(mode),
        api_url=api_url,
        host=host,
        port=port,
        store=store,
        people=people,
        policies=crew.policies,
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
    door = _door(deps, crew)
    return SlackService(deps, client, router=front_door_router(door)), settings, door


def _door(deps: SlackDeps, crew: Crew) -> FrontDoor:
    """The front door the conversations go through: each agent with the crew's servers (policy
    gated, GitOps with a repository), answering approvals in the app's store as the people
    file's person."""
    from agents.runtime.brain import planner_from_env
    from core.home import state_home
    from kubecrew.channels.frontdoor import FrontDoor

    return FrontDoor(
        servers=crew.servers("dev_team"),
        planner=planner_from_env(),
        home=state_home(),  # the conversations are this cluster's
        open_store=deps.open_store,
        via="slack",
        now=deps.now,
        agent_servers=crew.servers,
    )


def _resume_answered(
    service: SlackService, door: FrontDoor, every: float, stop: threading.Event
) -> None:
    """Every `every` seconds: the conversations whose waiting request has ended (an Approve
    click, `kubecrew approvals`, a PR review) resumed once, and what the agent then did posted
    in their thread."""
    import anyio
    from slack_sdk.errors import SlackApiError

    from kubecrew.channels.slack.conversation import blocks

    log = logging.getLogger(__name__)
    while not stop.wait(every):
        try:
            resumed = anyio.run(door.resume_answered)
        except Exception as exc:  # a failed pass must not end the app; the next one retries
            log.warning("resuming answered conversations failed: %s", exc)
            continue
        for key, reply in resumed:
            channel, _, thread = key.partition(":")
            try:
                service.client.chat_postMessage(
                    channel=channel, thread_ts=thread, text=reply.text[:2900], blocks=blocks(reply)
                )
            except SlackApiError as exc:
                log.warning("posting the resumed work to %s failed: %s", key, exc)


def _ready(what: str, store: str | None) -> None:
    from core.policy.store import describe_spec

    print(f"kubecrew slack: {what}; approvals from {describe_spec(store)}", file=sys.stderr)
    sys.stderr.flush()
