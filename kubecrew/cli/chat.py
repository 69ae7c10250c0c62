"""`kubecrew chat`: talk to the crew from a terminal, the same front door as Slack.

Each message goes through `kubecrew.channels.frontdoor`: routed to the agent it is for (or a
question back asking which), approval commands ("approve a-1a2b3c4d", "deny a-... because ...",
"approvals") answered in the policy store as you. Who you are follows `kubecrew approvals`
(`--as`/`--group`, or the API server's word with `--store kubernetes`), decided once at start.
The session is one conversation (one LangGraph thread), so follow-ups keep their context;
`--session NAME` picks one up again later, even after a restart. Each agent gets the crew's
servers (`kubecrew.crew`: policy-gated kube, the policy server, the GitOps repository with
`--repo`), and the approvals are answered in the same policy store (`--policy-store`, or its
older name `--store`). A "fix web" that policy gives to a person says which request waits and
who may answer; "approve <id>" in the same chat grants it and resumes the fix, once.

Input: on a terminal, prompt_toolkit gives line editing and history (kept in
`$KUBECREW_HOME/chat_history`); a line ending in a backslash continues on the next, and a
pasted block of lines is one message. Piped input is read line by line, so the session can be
scripted. Answers are rendered with Rich; progress goes to stderr while the agent works
(`kubecrew.progress`): a live line on a terminal ("working… validating: 1/2 pods ready"), one
line per step elsewhere.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer
from rich.console import Console
from rich.markup import escape
from rich.rule import Rule

from kubecrew.cli.options import AsOption, GroupOption, person
from kubecrew.crew import CrewOptions, crew_home, crew_options, resolve
from kubecrew.progress import Steps
from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from core.policy.proposals import Identity
    from kubecrew.channels.frontdoor import FrontDoor, Reply

GOODBYE = frozenset({"exit", "quit", "bye", ":q"})
_STYLES = {"approval": "green", "refused": "red", "unavailable": "yellow", "clarify": "cyan"}

Reader = Callable[[str], str]  # a prompt in, one line of input out; EOFError at the end


@crew_options
def chat(
    as_: AsOption = None,
    group: GroupOption = None,
    session: Annotated[
        str | None,
        typer.Option(help="continue this conversation (any name) [default: a new one]"),
    ] = None,
    *,
    crew: CrewOptions,
) -> None:
    """Talk to the crew: workloads (Dev Team), nodes and cost (Cluster Operator), org policy
    and escalations (Platform); list and answer approval requests.

    Type `exit` or press Ctrl-D to leave; end a line with `\\` to go on on the next.

    **Examples**

    ```
    kubecrew chat
    kubecrew chat --as alice --group shop-admins --session incident-42
    kubecrew chat --repo ./shop-gitops      # fixes and deploys go by pull request
    ```

    Try: "why is web failing in shop?", "which nodes are unhealthy?", "where can we save
    cost?", "is shop compliant with the egress policy?", "any escalations to settle?",
    "approvals", "approve a-1a2b3c4d".
    """
    from agents.runtime.brain import planner_from_env
    from core.errors import ToolError
    from core.home import state_home
    from core.policy.store import open_store
    from kubecrew.channels.frontdoor import FrontDoor

    try:
        resolved = resolve(crew)
        opened = open_store(resolved.policy_store)
    except ToolError as exc:
        print_failure(exc.message)
        raise typer.Exit(1) from exc
    try:
        who = person(opened, as_, group)
    finally:
        opened.close()
    home = crew_home()
    door = FrontDoor(
        servers=resolved.servers("dev_team"),
        planner=planner_from_env(),
        home=state_home(),  # the conversations are this cluster's
        open_store=lambda: open_store(resolved.policy_store),
        via="cli",
        agent_servers=resolved.servers,
    )
    out = Console(highlight=False, soft_wrap=True)
    key = f"terminal:{session or uuid.uuid4().hex[:12]}"
    out.print(
        f"[bold]kubecrew chat[/] as {escape(str(who))} (conversation {escape(key)}). Ask "
        "about a workload or nodes, or say 'approvals'. 'exit' or Ctrl-D leaves."
    )
    _session(door, key, who, _reader(home), out)


def _session(door: FrontDoor, key: str, person: Identity, read: Reader, out: Console) -> None:
    while True:
        try:
            message = _message(read)
        except KeyboardInterrupt:
            continue  # Ctrl-C drops the line being typed, as in a shell
        except EOFError:
            out.print("bye")
            return
        if not message:
            continue
        if message.lower() in GOODBYE:
            out.print("bye")
            return
        with Steps(Console(stderr=True, highlight=False)) as steps:

            async def go(said: str = message, steps: Steps = steps) -> Reply:
                return await door.handle(key, said, person, progress=steps.said)

            reply = anyio.run(go)
        show(out, reply)


def _message(read: Reader) -> str:
    """One message: a line, and the next ones while a line ends with a backslash."""
    lines = [read("kubecrew> ")]
    while lines[-1].endswith("\\"):
        lines[-1] = lines[-1][:-1]
        lines.append(read("... "))
    return "\n".join(lines).strip()


def show(out: Console, reply: Reply) -> None:
    """The reply with its first line bold, headings bold, and who answered underneath."""
    style = _STYLES.get(reply.kind, "")
    first, *rest = reply.text.splitlines() or [""]
    out.print(f"[bold {style}]{escape(first)}[/]")
    for line in rest:
        heading = line.endswith(":") and not line.startswith((" ", "-"))
        out.print(f"[bold]{escape(line)}[/]" if heading else escape(line))
    who = reply.agent.replace("_", " ") if reply.agent else "front door"
    out.print(Rule(f"{who}" + (f" · thread {reply.thread}" if reply.thread else ""), style="dim"))


def _reader(home: Path) -> Reader:
    if not sys.stdin.isatty():
        return _piped
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    home.mkdir(parents=True, exist_ok=True)
    session: PromptSession[str] = PromptSession(history=FileHistory(str(home / "chat_history")))
    return lambda prompt: session.prompt(prompt)


def _piped(prompt: str) -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")
