"""A small POSIX shell for execs: what `kubectl exec POD -- sh -c "a; b && c | d"` prints.

Why not `commands.py`: that interpreter answers what a container's own process shows in its log
over time (one merged stream, no stdin), so the kubelet can schedule lines and an exit; an exec
needs stdout and stderr apart, stdin, and real waits. Both read the same grammar
(`shellsyntax`) and walk it the same way (`shellprocess`: lists, pipelines, `if`, `while`,
`until`, `for`, `case`, groups, functions, `$VAR` and its operators, `$((...))`, `$(...)`,
word splitting, globs, redirections, its caps), and share sh's builtins (`shellbuiltins`), the
tools (`coreutils`, the network tools) and the list of programs an image is assumed to have
(`commands.QUIET_TOOLS`). What this module adds: the container as the exec sees it (`Box`:
its environment, its files for `<`, `[ -f ]` and globs, its writable layer for `>`/`>>`, where
files outlive the exec and a full layer is `sh: write error: No space left on device`), `cd`,
`pwd`, `sleep` on the sandbox clock, and `sh` reading its commands from stdin. Here-documents
are not simulated: such a script fails with exit 2 and a message that says so. An unknown
program is `sh: NAME: not found` (127) inside a script; given directly to exec it raises
`ExecNotFound`, which the kubelet reports as the runtime does.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import replace

from sandbox.kubelet.commands import QUIET_TOOLS, SHELLS, duration
from sandbox.kubelet.coreutils import TOOLS, Box, Stdio, Tool, Write
from sandbox.kubelet.layer import LayerFull
from sandbox.kubelet.shellbuiltins import BUILTINS, LineInput, ShellExit
from sandbox.kubelet.shellprocess import ShellProcess
from sandbox.kubelet.tar import tar

_PROGRAMS: dict[str, Tool] = {**TOOLS, "tar": tar}  # tar needs the Box, so it lives apart
EXEC_PID = 42  # what `$$` says in an exec's shell (the container's process is 1)


class ExecNotFound(Exception):
    """The program an exec names is not in the container (the runtime cannot start it)."""

    def __init__(self, binary: str) -> None:
        super().__init__(binary)
        self.binary = binary


class Shell(ShellProcess):
    """One shell process in a container: its variables and last status live as long as it."""

    pid = EXEC_PID

    def __init__(self, box: Box) -> None:
        self.box = replace(box, sleep=self._sleep)
        self._wait = box.sleep
        super().__init__(self.box.env)

    async def _sleep(self, seconds: float) -> None:
        self.clock += seconds
        await self._wait(seconds)

    # -- entry points -------------------------------------------------------------------------

    async def exec_argv(self, argv: list[str], io: Stdio) -> int:
        """An exec's command as the runtime starts it: a program, no shell in between."""
        name = posixpath.basename(argv[0])
        if not self._known(name):
            raise ExecNotFound(argv[0])
        try:
            return await self.call(name, argv[1:], io)
        except ShellExit as done:
            return done.code

    async def script(self, text: str, io: Stdio) -> int:
        return await self.run_text(text, io)

    async def interactive(self, io: Stdio) -> int:
        """`sh` reading its commands from stdin, line by line, until `exit` or the end."""
        stdin = LineInput(io.stdin)
        io = replace(io, stdin=stdin)
        while (line := await stdin.line()) is not None:
            await self.run_text(line, io)
            if self.exited:
                break
        return self.status

    # -- what ShellProcess asks ---------------------------------------------------------------

    def read_file(self, path: str) -> str | None:
        return self.box.read(path)

    def is_directory(self, path: str) -> bool:
        return self.box.is_directory(path)

    def entries(self, directory: str) -> list[str]:
        return self.box.entries(directory)

    def writer(self, path: str, *, append: bool, io: Stdio) -> Write:
        full, layer = self.box.path(path), self.box.layer
        with contextlib.suppress(LayerFull):  # then the first write says so
            layer.write(full, "", append=append)

        async def write(text: str) -> None:
            try:
                layer.write(full, text, append=True)
            except LayerFull:
                await io.err("sh: write error: No space left on device\n")

        return write

    def saved(self) -> Callable[[], None]:
        restore, cwd = super().saved(), self.box.cwd

        def restored() -> None:
            restore()
            self.box.cwd = cwd

        return restored

    async def program(self, name: str, args: list[str], io: Stdio) -> int:
        name = posixpath.basename(name)
        if name in _BUILTINS:
            return await _BUILTINS[name](self, args, io)
        if name in _PROGRAMS:
            return await _PROGRAMS[name](args, io, self.box)
        if name in SHELLS:
            return await self._subshell(args, io)
        if name in QUIET_TOOLS:
            return 0  # a program the image has whose effect the sandbox does not simulate
        await io.err(f"sh: {name}: not found\n")
        return 127

    def _known(self, name: str) -> bool:
        return (
            name in BUILTINS
            or name in _BUILTINS
            or name in _PROGRAMS
            or name in SHELLS
            or name in QUIET_TOOLS
        )

    async def _subshell(self, args: list[str], io: Stdio) -> int:
        child = Shell(replace(self.box, env=dict(self.box.env), sleep=self._wait))
        options = [a for a in args if a.startswith("-")]
        words = [a for a in args if not a.startswith("-")]
        if any("c" in option for option in options):
            if not words:
                return 2
            child.name, child.positional = (words[1], words[2:]) if len(words) > 1 else ("sh", [])
            return await child.script(words[0], io)
        if words:
            text = self.box.read(words[0])
            if text is None:
                await io.err(f"sh: can't open '{words[0]}': No such file or directory\n")
                return 2
            child.name, child.positional = words[0], words[1:]
            return await child.script(text, io)
        return await child.interactive(io)


# -- builtins: what sh (BusyBox ash) does itself --------------------------------------------


async def _sleep(shell: Shell, args: list[str], io: Stdio) -> int:
    seconds = duration(args[0]) if args else 0.0
    await shell.box.sleep(float("inf") if seconds is None else seconds)
    return 0


async def _cd(shell: Shell, args: list[str], io: Stdio) -> int:
    asked = args[0] if args else "/root"
    target = posixpath.normpath(posixpath.join(shell.box.cwd, asked))
    if not shell.box.is_directory(target):
        await io.err(f"sh: cd: can't cd to {asked}: No such file or directory\n")
        return 2
    shell.box.cwd = target
    return 0


async def _say(shell: Shell, text: str, io: Stdio) -> int:
    await io.out(text + "\n")
    return 0


async def _id(shell: Shell, args: list[str], io: Stdio) -> int:
    uid, gid = _named(shell.box.uid), _named(shell.box.gid)
    return await _say(shell, f"uid={uid} gid={gid} groups={gid}", io)


def _named(number: int) -> str:
    return "0(root)" if number == 0 else str(number)


async def _whoami(shell: Shell, args: list[str], io: Stdio) -> int:
    uid = shell.box.uid
    if uid != 0:
        await io.err(f"whoami: unknown uid {uid}\n")
        return 1
    return await _say(shell, "root", io)


async def _pwd(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.cwd, io)


async def _hostname(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.hostname, io)


async def _date(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.now.strftime("%a %b %e %H:%M:%S UTC %Y"), io)


_BUILTINS: dict[str, Callable[[Shell, list[str], Stdio], Awaitable[int]]] = {
    "sleep": _sleep,
    "cd": _cd,
    "pwd": _pwd,
    "hostname": _hostname,
    "date": _date,
    "id": _id,
    "whoami": _whoami,
}
