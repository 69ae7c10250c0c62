"""The programs an exec can run inside a simulated container, and what each one sees.

A tool is `async def tool(args, io, box) -> exit code`: `io` is its stdin and stdout/stderr
(`Stdio`), `box` the container as the process sees it (`Box`: its files, environment, network,
hostname, identity). Messages and exit codes are BusyBox's (the busybox and alpine images
people exec into most): `cat: can't open 'x': No such file or directory` (1), `ls: x: No such
file or directory` (1), `printenv X` of an unset X (1), `nslookup` NXDOMAIN (1), `getent` not
found (2), `grep` no match (1). The network tools are `curl.py` and `busybox.py` on the pod's
`ClusterNetwork`; name lookups go through its DNS. Programs the sandbox does not simulate but
an image would have (`mkdir`, `touch`, `ps`, ...: `commands.QUIET_TOOLS`) succeed silently.
Nothing here runs on the host or writes to the cluster.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from sandbox.kubelet.busybox import nc, wget
from sandbox.kubelet.curl import curl
from sandbox.kubelet.filesystem import DNS_SERVER, ContainerFiles
from sandbox.kubelet.layer import WritableLayer, encode
from sandbox.kubelet.nettools import Network, Result

Write = Callable[[str], Awaitable[None]]


class Input(Protocol):
    """A process's stdin: chunks as they come, None once it is closed."""

    async def read(self) -> str | None: ...


class TextInput:
    """A stdin that is already all there: a pipe from an earlier stage, or nothing at all."""

    def __init__(self, text: str = "") -> None:
        self._text: str | None = text or None

    async def read(self) -> str | None:
        text, self._text = self._text, None
        return text


@dataclass
class Stdio:
    stdin: Input
    out: Write
    err: Write

    async def read_all(self) -> str:
        chunks: list[str] = []
        while (chunk := await self.stdin.read()) is not None:
            chunks.append(chunk)
        return "".join(chunks)


class ExecNetwork(Network, Protocol):
    """The pod's network, plus the fully qualified name a lookup found (for nslookup)."""

    def lookup(self, host: str) -> tuple[str, str] | None: ...


@dataclass
class Box:
    """The container as its processes see it; `cwd` and `env` change as a shell runs."""

    files: ContainerFiles
    env: dict[str, str]
    network: ExecNetwork
    hostname: str
    now: datetime
    sleep: Callable[[float], Awaitable[None]]  # sandbox seconds
    cwd: str = "/"
    uid: int = 0  # securityContext.runAsUser
    gid: int = 0  # securityContext.runAsGroup
    layer: WritableLayer = field(default_factory=WritableLayer)  # what the container wrote

    def path(self, name: str) -> str:
        """`name` as an absolute, normalized path (relative ones start at `cwd`)."""
        return posixpath.normpath(posixpath.join(self.cwd, name))

    def read(self, path: str) -> str | None:
        full = self.path(path)
        return self.layer.files.get(full, self.files.read(full))

    def is_directory(self, path: str) -> bool:
        full = self.path(path)
        return full in self.layer.directories or self.files.is_directory(full)

    def entries(self, directory: str) -> list[str]:
        """Names directly inside `directory`, the read-only files' and the layer's, sorted."""
        base = self.path(directory)
        written = {
            posixpath.basename(path)
            for path in [*self.layer.files, *self.layer.directories]
            if posixpath.dirname(path) == base and path != base
        }
        return sorted(written.union(self.files.entries(base)))


Tool = Callable[[list[str], Stdio, Box], Awaitable[int]]


async def cat(args: list[str], io: Stdio, box: Box) -> int:
    code = 0
    for name in [a for a in args if a == "-" or not a.startswith("-")] or ["-"]:
        if name == "-":
            while (chunk := await io.stdin.read()) is not None:
                await io.out(chunk)
            continue
        text = box.read(name)
        if text is not None:
            await io.out(text)
        elif box.is_directory(name):
            await io.err("cat: read error: Is a directory\n")
            code = 1
        else:
            await io.err(f"cat: can't open '{name}': No such file or directory\n")
            code = 1
    return code


async def ls(args: list[str], io: Stdio, box: Box) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    code = 0
    for path in [a for a in args if not a.startswith("-")] or ["."]:
        full = posixpath.normpath(posixpath.join(box.cwd, path))
        if box.is_directory(full):
            names = box.entries(full)
            if "l" in flags:
                await io.out(f"total {len(names)}\n")
                for name in names:
                    await io.out(_long(box, posixpath.join(full, name), name))
            else:
                await io.out("".join(f"{name}\n" for name in names))
        elif box.read(full) is not None:
            await io.out(_long(box, full, path) if "l" in flags else f"{path}\n")
        else:
            await io.err(f"ls: {path}: No such file or directory\n")
            code = 1
    return code


def _long(box: Box, path: str, shown: str) -> str:
    text = box.read(path)
    if text is None:
        return f"drwxr-xr-x    2 root     root          4096 {_stamp(box.now)} {shown}\n"
    size = len(encode(text))
    return f"-rw-r--r--    1 root     root     {size:>9} {_stamp(box.now)} {shown}\n"


def _stamp(now: datetime) -> str:
    return now.strftime("%b %d %H:%M").replace(" 0", "  ", 1)


async def env(args: list[str], io: Stdio, box: Box) -> int:
    await io.out("".join(f"{k}={v}\n" for k, v in box.env.items()))
    return 0


async def printenv(args: list[str], io: Stdio, box: Box) -> int:
    if not args:
        return await env(args, io, box)
    missing = 0
    for name in args:
        if name in box.env:
            await io.out(box.env[name] + "\n")
        else:
            missing = 1
    return missing


async def nslookup(args: list[str], io: Stdio, box: Box) -> int:
    names = [a for a in args if not a.startswith("-")]
    if not names:
        await io.err("BusyBox v1.37.0 multi-call binary.\n\nUsage: nslookup HOST [DNS_SERVER]\n")
        return 1
    await io.out(f"Server:\t\t{DNS_SERVER}\nAddress:\t{DNS_SERVER}:53\n\n")
    found = box.network.lookup(names[0])
    if found is None:
        await io.out(f"** server can't find {names[0]}: NXDOMAIN\n\n")
        return 1
    fqdn, address = found
    await io.out(f"Name:\t{fqdn}\nAddress: {address}\n\n")
    return 0


async def getent(args: list[str], io: Stdio, box: Box) -> int:
    if len(args) < 2 or args[0] not in ("hosts", "ahosts"):
        return 1  # a database the sandbox does not simulate, or no key: nothing found
    found = box.network.lookup(args[1])
    if found is None:
        return 2
    await io.out(f"{found[1]:<15} {found[0]}\n")
    return 0


async def grep(args: list[str], io: Stdio, box: Box) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
    words = [a for a in args if not a.startswith("-") or a == "-"]
    if not words:
        await io.err("Usage: grep [-civq] PATTERN [FILE]...\n")
        return 2
    pattern = _pattern(words[0], ignore_case="i" in flags)
    text, code = await _input(words[1:], io, box, "grep")
    invert = "v" in flags
    hits = [line for line in text.splitlines(keepends=True) if bool(pattern.search(line)) != invert]
    if "q" not in flags:
        await io.out(f"{len(hits)}\n" if "c" in flags else "".join(_ended(h) for h in hits))
    return code or (0 if hits else 1)


def _pattern(text: str, *, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    try:
        return re.compile(text, flags)
    except re.error:
        return re.compile(re.escape(text), flags)


async def head(args: list[str], io: Stdio, box: Box) -> int:
    count, files = _count(args, 10)
    text, code = await _input(files, io, box, "head")
    await io.out("".join(_ended(line) for line in text.splitlines(keepends=True)[:count]))
    return code


async def tail(args: list[str], io: Stdio, box: Box) -> int:
    count, files = _count(args, 10)
    text, code = await _input(files, io, box, "tail")
    lines = text.splitlines(keepends=True)
    await io.out("".join(_ended(line) for line in (lines[-count:] if count else [])))
    return code


def _count(args: list[str], default: int) -> tuple[int, list[str]]:
    count, files, position = default, [], 0
    while position < len(args):
        arg = args[position]
        if arg == "-n" and position + 1 < len(args):
            count, position = _int(args[position + 1], default), position + 1
        elif arg.startswith("-n"):
            count = _int(arg[2:], default)
        elif arg.startswith("-") and arg[1:].isdigit():
            count = int(arg[1:])
        elif not arg.startswith("-"):
            files.append(arg)
        position += 1
    return count, files


async def wc(args: list[str], io: Stdio, box: Box) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-")) or "lwc"
    text, code = await _input([a for a in args if not a.startswith("-")], io, box, "wc")
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(encode(text))}
    shown = [counts[f] for f in "lwc" if f in flags]
    if len(shown) == 1:
        await io.out(f"{shown[0]}\n")
    else:
        await io.out(" ".join(f"{n:>7}" for n in shown) + "\n")
    return code


async def sort(args: list[str], io: Stdio, box: Box) -> int:
    text, code = await _input([a for a in args if not a.startswith("-")], io, box, "sort")
    lines = sorted(text.splitlines(), reverse="-r" in args)
    await io.out("".join(f"{line}\n" for line in lines))
    return code


async def _input(files: list[str], io: Stdio, box: Box, tool: str) -> tuple[str, int]:
    """The text a filter reads: its files, else its stdin; and 1 when a file is missing."""
    if not files or files == ["-"]:
        return await io.read_all(), 0
    parts, code = [], 0
    for name in files:
        text = box.read(name)
        if text is None:
            await io.err(f"{tool}: {name}: No such file or directory\n")
            code = 1
        else:
            parts.append(text)
    return "".join(parts), code


def _ended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


def _int(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def network_tool(run: Callable[[list[str], Network], Result | None]) -> Tool:
    """curl, wget or nc on the pod's network, their streams kept apart, taking their time."""

    async def tool(args: list[str], io: Stdio, box: Box) -> int:
        result = run(args, box.network)
        if result is None:
            return 0
        await box.sleep(result.seconds)
        if result.chunks:
            for stream, text in result.chunks:
                await (io.out if stream == "out" else io.err)(text)
        else:
            text = "".join(f"{line}\n" for line in result.lines)
            await (io.err if result.exit_code else io.out)(text)
        return result.exit_code

    return tool


TOOLS: dict[str, Tool] = {
    "cat": cat,
    "ls": ls,
    "env": env,
    "printenv": printenv,
    "nslookup": nslookup,
    "getent": getent,
    "grep": grep,
    "head": head,
    "tail": tail,
    "wc": wc,
    "sort": sort,
    "curl": network_tool(curl),
    "wget": network_tool(wget),
    "nc": network_tool(nc),
}
