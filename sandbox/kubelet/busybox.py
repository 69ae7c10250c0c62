"""BusyBox `wget` and `nc -z` (the ones in busybox, alpine and curlimages/curl images) against a
`nettools.Network`: what they print and return.

BusyBox reports every failure with exit code 1 and a one-line message: wget "bad address
'x'", "can't connect to remote host (ip): Connection refused", "server returned error:
HTTP/1.1 404 Not Found", "download timed out" (`-T`, else its 900 s); nc "bad address 'x'",
"x (ip:port): Connection refused". Without `-q` wget says where it connects and where it saves
(`-O-` writes the body to stdout); `nc -z` is silent unless `-v`.
"""

from __future__ import annotations

from sandbox.kubelet.nettools import (
    REASONS,
    Chunk,
    Listener,
    Network,
    Result,
    body,
    lines,
    parse,
    seconds,
    target,
)

WGET_TIMEOUT = 900.0  # BusyBox wget's network timeout when no -T is given
NC_TIMEOUT = 300.0  # how long a connect to nowhere takes when nc has no -w
_WGET_VALUED = {"-O": "output", "-T": "timeout", "--timeout": "timeout"}
_WGET_VALUED |= dict.fromkeys(("-o", "-U", "--header", "-t", "-P", "--post-data", "-Y"), "ignored")
_WGET_FLAGS = {"-q": "quiet", "--quiet": "quiet", "--spider": "spider", "-S": "ignored"}


def wget(args: list[str], network: Network) -> Result:
    options = parse(args, valued=_WGET_VALUED, flags=_WGET_FLAGS)
    quiet, limit = "quiet" in options.values, seconds(options.values.get("timeout")) or WGET_TIMEOUT
    if not options.words:
        return Result(("wget: URL required",), 0.0, 1)
    where = target(options.words[0])
    if isinstance(where, str):
        return Result((f"wget: {where}",), 0.0, 1)
    address = network.resolve(where.host)
    if address is None:
        return Result((f"wget: bad address '{where.host}'",), 0.0, 1)
    chunks: list[Chunk] = []
    if not quiet:
        chunks.append(("err", f"Connecting to {where.host} ({address}:{where.port})\n"))
    dial = network.connect(address, where.port)
    failure, took = "", 0.0
    if dial == "refused":
        failure = f"can't connect to remote host ({address}): Connection refused"
    elif not isinstance(dial, Listener) or dial.latency > limit:
        failure, took = "download timed out", limit
    elif not dial.http:
        failure = "error getting response: Connection reset by peer"
    else:
        took, status = dial.latency, dial.answer(where.path)
        if status >= 400:
            failure = f"server returned error: HTTP/1.1 {status} {REASONS.get(status, '')}"
        else:
            chunks.extend(_saved(body(status, where.path), options.values, quiet=quiet))
    if failure:
        chunks.append(("err", f"wget: {failure}\n"))
    return Result(lines(chunks), took, 1 if failure else 0, tuple(chunks))


def _saved(text: str, values: dict[str, str], *, quiet: bool) -> list[Chunk]:
    output = values.get("output", "")
    if "spider" in values:
        return [] if quiet else [("err", "remote file exists\n")]
    if output == "-":
        if quiet:
            return [("out", text)]
        return [("err", "writing to stdout\n"), ("out", text), ("err", "written to stdout\n")]
    if quiet:
        return []
    name = output or "index.html"
    bar = f"{name:<20} 100% |{'*' * 31}| {len(text):>5}  0:00:00 ETA\n"
    return [("err", f"saving to '{name}'\n"), ("err", bar), ("err", f"'{name}' saved\n")]


def nc(args: list[str], network: Network) -> Result | None:
    """`nc -z host port`; None for any other use (nc then waits on stdin: not a network check)."""
    options = parse(args, valued={"-w": "wait"}, flags={"-z": "scan", "-v": "verbose"})
    if "scan" not in options.values:
        return None
    words = options.words
    if len(words) < 2 or not words[1].isdigit():
        return Result(("nc: bad port spec",) if len(words) >= 2 else (), 0.0, 1)
    host, port = words[0], int(words[1])
    address = network.resolve(host)
    if address is None:
        return Result((f"nc: bad address '{host}'",), 0.0, 1)
    dial = network.connect(address, port)
    if isinstance(dial, Listener):
        said = (f"{host} ({address}:{port}) open",) if "verbose" in options.values else ()
        return Result(said, 0.0, 0)
    if dial == "refused":
        return Result((f"nc: {host} ({address}:{port}): Connection refused",), 0.0, 1)
    waited = seconds(options.values.get("wait")) or NC_TIMEOUT
    return Result((f"nc: {host} ({address}:{port}): Connection timed out",), waited, 1)
