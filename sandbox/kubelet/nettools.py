"""What network tools (`curl`, `wget`, `nc -z`) meet when a container runs them: the model they
share, and how their command lines are read.

A prober, a readiness script or a wait-for-dependency loop only tells the truth if these tools
meet the cluster as it is: a name that does not resolve, a Service with no ready endpoint, a
port nobody listens on, a path the app does not serve, an app slower than the client's timeout.
A `Network` is the cluster as one pod sees it (the kubelet implements it from the API:
`sandbox.kubelet.dialing`); each tool (`curl.py`, `busybox.py`) turns its arguments and a
`Network` into a `Result`: the lines it writes to stdout and stderr, how long it ran, its exit
code, with the real tools' messages. Unknown options are ignored, not fatal; TLS is not
simulated (https is spoken as plain http). Pure: no pods, profiles, clock or API here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol
from urllib.parse import urlsplit

REASONS = {200: "OK", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}
Stream = Literal["out", "err"]
Chunk = tuple[Stream, str]  # text a tool wrote, newlines included


@dataclass(frozen=True)
class Listener:
    """A process accepting connections on an address and port."""

    paths: frozenset[str]  # HTTP paths answered 200
    http: bool = True  # False: accepts TCP but speaks no HTTP (redis, postgres)
    latency: float = 0.0  # seconds to answer a request
    status: int = 0  # non-zero: every request is answered with this status (a failing app)

    def answer(self, path: str) -> int:
        return self.status or (200 if path.split("?", 1)[0] in self.paths else 404)


# What a connection attempt meets: a listener, a refusal (RST, or kube-proxy's REJECT for a
# Service with no ready endpoint), or nothing at all (packets dropped until the client gives up).
Dial = Listener | Literal["refused", "unreachable"]


class Network(Protocol):
    """The cluster seen from one pod: its DNS and what answers at an address and port."""

    def resolve(self, host: str) -> str | None: ...

    def connect(self, address: str, port: int) -> Dial: ...


@dataclass(frozen=True)
class Result:
    lines: tuple[str, ...]  # stdout and stderr as the container log shows them, in order
    seconds: float  # how long the command ran
    exit_code: int
    # The same output kept apart by stream, for an exec that shows stdout and stderr apart
    # (empty: every line went to stderr when the tool failed, else to stdout).
    chunks: tuple[Chunk, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Target:
    url: str
    host: str
    port: int
    path: str


@dataclass(frozen=True)
class Options:
    """A tool's command line: option name -> value ("1" for a flag), and the other words."""

    values: dict[str, str]
    words: list[str]


def parse(args: list[str], *, valued: dict[str, str], flags: dict[str, str]) -> Options:
    """Read `args` as getopt does: `-o v`, `-ov`, `--out v`, `--out=v`, bundles (`-fsS`,
    `-sSo /dev/null`, `-qO-`). `valued` and `flags` map spellings to names; an unknown option is
    skipped, and so are shell redirections left in the words (`>/dev/null`)."""
    values: dict[str, str] = {}
    words: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg in flags:
            values[flags[arg]] = "1"
        elif arg in valued:
            values[valued[arg]] = args[position] if position < len(args) else ""
            position += 1
        elif arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            values[valued.get(name, "ignored")] = value
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            position = _bundle(arg, args, position, values, valued=valued, flags=flags)
        elif not arg.startswith(("-", ">", "<", "1>", "2>")):
            words.append(arg)
    return Options(values, words)


def _bundle(
    arg: str,
    args: list[str],
    position: int,
    values: dict[str, str],
    *,
    valued: dict[str, str],
    flags: dict[str, str],
) -> int:
    for index, letter in enumerate(arg[1:], start=1):
        option = "-" + letter
        if option in flags:
            values[flags[option]] = "1"
        elif option in valued:
            rest = arg[index + 1 :]
            if not rest and position < len(args):
                rest, position = args[position], position + 1
            values[valued[option]] = rest
            break
    return position


def target(url: str) -> Target | str:
    """The URL's parts, or the error text of a URL the tools refuse."""
    text = url if "://" in url else f"http://{url}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return f"URL rejected: Port number was not a decimal number between 0 and 65535 ({url})"
    if parts.scheme not in ("http", "https"):
        return f'Protocol "{parts.scheme}" not supported'
    if not parts.hostname:
        return f"URL rejected: No host part in the URL ({url})"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(text, parts.hostname, port or (443 if parts.scheme == "https" else 80), path)


def seconds(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return max(float(text), 0.0)
    except ValueError:
        return None


def body(status: int, path: str) -> str:
    """What the simulated apps answer: small, one line."""
    if status == 200:
        return f"OK {path}\n"
    if status == 404:
        return "404 page not found\n"
    return f"{status} {REASONS.get(status, 'error')}\n"


def lines(chunks: list[Chunk]) -> tuple[str, ...]:
    """Chunks as the container log records them: split at newlines; text left without one (a
    `-w '%{http_code}'`, the progress meter) runs on into the next chunk, as in a terminal."""
    found = "".join(text for _, text in chunks).split("\n")
    if found and found[-1] == "":
        found.pop()
    return tuple(found)
