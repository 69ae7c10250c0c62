"""The options and output helpers several command groups share, so each group says them alike.

Only what two or more command modules use lives here: the option types (`--store`, `--as`,
`--group`, `--home`), how `--store` is opened, who the person answering is, how a period such
as `5m` is read, the one way a command fails (`fail`) and prints (`out`), and how an approval
request reads. What a single group uses stays in its module; work (deciding, storing, talking
to a cluster) belongs to the package that owns it. It imports no command module, and the
engine (`core.policy` stores and proposals) only inside functions, so `kubecrew --help` stays
quick.
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from kubecrew.terminal import print_failure

if TYPE_CHECKING:
    from core.policy.proposals import ApprovalRequest, Identity
    from core.policy.store.base import Store

_DURATION = re.compile(r"^(\d+)(s|m|h)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, None: 1}

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="The policy store: a SQLite file, or `kubernetes[:CONTEXT]` for the kubecrew-system "
        "namespace of the kubeconfig's cluster. [default: $KUBECREW_POLICY_STORE, else "
        "the cluster's: policy/store.sqlite in $KUBECREW_HOME/clusters/<cluster>/]",
        show_default=False,
    ),
]
AsOption = Annotated[
    str | None,
    typer.Option(
        "--as",
        help="Answer as this person. With the SQLite store you are trusted as whoever you say; "
        "with --store kubernetes it must match the API server's name for you. "
        "[default: $KUBECREW_USER, else your login name]",
        show_default=False,
    ),
]
GroupOption = Annotated[
    list[str] | None,
    typer.Option(
        "--group",
        help="A group you answer as a member of (repeatable; SQLite store only). "
        "[default: $KUBECREW_GROUPS, comma-separated]",
        show_default=False,
    ),
]
HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home",
        help="Sandbox home: holds kubeconfig, sandbox.pid, url and sandbox.log. "
        "[default: $KUBECREW_HOME/sandbox, else ~/.kubecrew/sandbox]",
        show_default=False,
    ),
]


def fail(message: str) -> NoReturn:
    """End the command with one line on stderr and exit status 1."""
    print_failure(message)
    raise typer.Exit(1)


def out(text: str, *, markup: bool = False) -> None:
    """One line on stdout, never wrapped, so paths and URLs stay copy-pasteable.

    Plain text by default: records, names and messages print as they are. With `markup` the
    text is Rich markup (the sandbox commands' colours), and whatever it quotes must be escaped.
    """
    Console(highlight=False, markup=markup).print(text, soft_wrap=True)


@contextmanager
def policy_store(given: str | None) -> Iterator[Store]:
    """The store `--store` names, open for the block and closed after it; a missing SQLite
    file, or the store's refusal inside the block, ends the command with its message."""
    from core.errors import ToolError
    from core.policy.store import KUBERNETES, SPEC_ENV, open_store
    from core.policy.store.sqlite import default_path

    spec = given or os.environ.get(SPEC_ENV)
    if spec is None or not (spec == KUBERNETES or spec.startswith(KUBERNETES + ":")):
        path = Path(spec).expanduser() if spec else default_path()
        if not path.is_file():
            fail(f"no policy store at {path}: nothing was proposed there yet; give --store FILE")
    try:
        opened = open_store(spec)
    except ToolError as exc:
        fail(exc.message)
    try:
        yield opened
    except ToolError as exc:
        fail(exc.message)
    finally:
        opened.close()


def person(store: Store, name: str | None, groups: list[str] | None) -> Identity:
    """Who answers from this terminal (`--as`, `--group`).

    With the SQLite store, whoever the local user says: the file is theirs, so trusting them
    costs nothing. With the Kubernetes store, the API server's answer about the kubeconfig's
    credentials, which the user cannot choose; a different `--as` is refused.
    """
    from core.policy.proposals import Identity
    from core.policy.settings import GROUPS_ENV, USER_ENV

    vouched = getattr(store, "identity", None)
    if callable(vouched):  # the Kubernetes store: the API server says who we are
        found: Identity = vouched()
        if name is not None and name != found.name:
            fail(
                f"the API server knows you as {found.name}, not {name}: with --store kubernetes "
                f"your kubeconfig credentials decide who answers; drop --as"
            )
        return found
    chosen = name or os.environ.get(USER_ENV) or getpass.getuser()
    if groups is None:
        groups = [g.strip() for g in os.environ.get(GROUPS_ENV, "").split(",") if g.strip()]
    return Identity(kind="person", name=chosen, groups=tuple(groups))


def period(text: str, option: str) -> float | None:
    """Seconds from a duration such as 30s, 5m or 1h (a bare number is seconds); None for 0.
    A malformed one ends the command with a line naming `option`."""
    found = _DURATION.match(text.strip())
    if found is None:
        fail(f"{option} {text!r}: give a duration like 30s, 5m or 1h (0 turns it off)")
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    return float(seconds) if seconds else None


def request_lines(request: ApprovalRequest) -> list[str]:
    """An approval request in words: what, who may answer, until when, and each answer."""
    lines = [
        f"approval {request.id} ({request.state}) for proposal {request.proposal}",
        f"  action    {request.action.describe()}",
        f"  approvers {request.approvers.describe()} ({request.min_approvals} needed)",
        f"  requested {request.requested_at.isoformat()}, expires {request.expires_at.isoformat()}",
    ]
    lines += [f"  why       {reason}" for reason in request.reasons]
    for given in request.answers:
        verb = "granted" if given.verdict == "grant" else "denied"
        said = f"  {given.at:%Y-%m-%d %H:%M:%S} {given.by} {verb} via {given.via}"
        lines.append(said + (f": {given.reason}" if given.reason else ""))
    if request.claimed_by is not None:
        lines.append(f"  taken up by {request.claimed_by}")
    return lines
