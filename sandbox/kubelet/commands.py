"""What a container's command and args make its process do: a `Plan` the kubelet can time.

A simulated container does not run anything; the kubelet only needs to know what a real one
would visibly do: the lines it prints and when, whether and when it exits and with what code, or
that it cannot start at all (an unknown binary). `interpret` reads the common shapes people write
in manifests: `sleep 3600`, `sleep infinity`, `exit 1`, `true`/`false`, `echo ...`, and shell
scripts, parsed by `shellsyntax` and walked by `shellprocess` exactly as an exec's are: lists,
`if`, `while`/`until`, `for`, `case`, groups, functions, `$VAR`, `$((...))`, `$(...)`. Time is
the sum of the `sleep`s (and of the network tools' waits); `cat`, `grep`, `ls` and the other file
tools of `coreutils` read the files the container mounts. A `while` round that starts in the
very state the previous one started in (same variables and status) repeats forever: the plan
says so (`Plan.loop`: its lines every round's duration, at least 1 s) instead of unrolling it,
unless its condition asks the network (`until nc -z db 5432`): the plan is fixed when the
container starts and cannot see the cluster change, so such a loop ends there, as if what it
waits for had come. `sleep infinity`, `tail -f` and `exec` of the image's own program take the
process over. At most `MAX_LINES` lines are planned; past them the log says so and the process
keeps running silently; the other caps are `shellprocess`'s.
A command naming the image's own program (`nginx -g ...`, `redis-server`, an entrypoint script)
or no command at all leaves the behaviour to the profile (`Plan.own_process`).

Scripts the pod mounts run when the caller passes what is `Inside` the container (its files and
environment; the kubelet does when a container starts): `sh /scripts/run.sh` reads the file as
`sh -c` would, `python /etc/config/app.py` and `python -c "..."` go through the small interpreter
of `sandbox.kubelet.pyscript` (never the host's), and `node` logs that it is not simulated and
idles. A script file the pod does not mount is the image's own: the profile decides.

`curl`, `wget` and `nc -z` answer from the cluster when the caller passes a `Network` (the
kubelet does when a container starts: `sandbox.kubelet.dialing`), so the plan then holds what
they met at that moment; without one (exec probes, usage estimates) they succeed quietly. This
module knows nothing of pods, profiles, time or the API; it is pure.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sandbox.kubelet import pyscript
from sandbox.kubelet.busybox import nc, wget
from sandbox.kubelet.coreutils import TOOLS, Box, Stdio, TextInput, Write
from sandbox.kubelet.curl import curl
from sandbox.kubelet.filesystem import ContainerFiles
from sandbox.kubelet.layer import LayerFull, WritableLayer
from sandbox.kubelet.nettools import Dial, Network, Result
from sandbox.kubelet.pyvalues import Outcome
from sandbox.kubelet.shellast import AndOr, Command, Loop, Pipeline, Redirected, Script, Simple
from sandbox.kubelet.shellast import literal as plain
from sandbox.kubelet.shellbuiltins import BUILTINS, ShellExit
from sandbox.kubelet.shellprocess import ShellProcess, run_to_end

FOREVER = None  # Plan.seconds for a process that runs until it is killed

SHELLS = {"sh", "bash", "ash", "dash", "zsh"}
_OWN_PROGRAMS = {  # binaries that are some image's own server: the profile decides
    "nginx",
    "httpd",
    "httpd-foreground",
    "apache2-foreground",
    "redis-server",
    "postgres",
    "mysqld",
    "mariadbd",
    "memcached",
    "rabbitmq-server",
    "pause",
    "agnhost",
    "http-echo",
    "docker-entrypoint.sh",
    "entrypoint.sh",
    "java",
    "gunicorn",
    "uvicorn",
    "npm",
    "yarn",
    "dotnet",
    "server",
    "app",
    "main",
    "run.sh",
    "start.sh",
    "flask",
    "caddy",
    "envoy",
}
QUIET_TOOLS = {  # succeed without output worth simulating
    "cat",
    "ls",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "rm",
    "cd",
    "export",
    "set",
    "trap",
    "wget",
    "curl",
    "nc",
    "ping",
    "nslookup",
    "chmod",
    "chown",
    "ln",
    "test",
    "[",
    ":",
    "env",
    "printenv",
    "date",
    "hostname",
    "id",
    "whoami",
    "wait",
    "ulimit",
    "umask",
    "unset",
    "source",
    ".",
    "apk",
    "apt-get",
    "pip",
    "grep",
    "sed",
    "awk",
    "head",
    "stat",
    "df",
    "du",
    "ps",
    "kill",
    "mount",
    "dig",
    "redis-cli",
    "psql",
    "mysql",
    "tar",
    "gzip",
    "find",
}
_NETWORK_TOOLS: dict[str, Callable[[list[str], Network], Result | None]] = {
    "curl": curl,
    "wget": wget,
    "nc": nc,  # `nc -z` only: other uses answer None and stay quiet
}
_FILE_TOOLS = {"cat", "ls", "grep", "head", "tail", "wc", "sort", "env", "printenv"}
MAX_LINES = 1_000  # lines a plan holds before the rest of the script's output is not simulated
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # the container's clock at its start
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PYTHON_FLAGS = {"-u", "-B", "-O", "-OO", "-E", "-s", "-S", "-I", "-q", "-b", "-bb"}
_NODE_EVAL = {"-e", "--eval", "-p", "--print"}


@dataclass(frozen=True)
class Plan:
    own_process: bool = False  # the image's own program: the profile decides everything
    lines: tuple[tuple[float, str], ...] = ()  # (seconds after start, line printed)
    seconds: float | None = 0.0  # exits after this long; FOREVER: runs until killed
    exit_code: int = 0
    loop: tuple[str, ...] = ()  # lines printed every `loop_period` s while running forever
    loop_period: float = 0.0
    start_error: str = ""  # the runtime could not start it (exec failed)
    ports: tuple[int, ...] = ()  # ports the command itself listens on (python -m http.server)
    loop_start: float = 0.0  # when the first `loop` round is printed (then every loop_period)


@dataclass(frozen=True)
class Inside:
    """What the container's process finds inside it: the files its volumes mount, its env."""

    files: ContainerFiles
    env: Mapping[str, str] = field(default_factory=dict)


OWN_PROCESS = Plan(own_process=True, seconds=FOREVER)


def interpret(
    container: dict[str, Any], network: Network | None = None, inside: Inside | None = None
) -> Plan:
    """What the container's process does; with `network`, as the cluster answers it now; with
    `inside`, running the scripts it mounts."""
    command = tuple(str(a) for a in container.get("command") or ())
    args = tuple(str(a) for a in container.get("args") or ())
    if network is None and inside is None:
        return _interpret(command, args)
    return _argv(command, args, network, inside)


@lru_cache(maxsize=2048)
def _interpret(command: tuple[str, ...], args: tuple[str, ...]) -> Plan:
    return _argv(command, args, None)


def _argv(
    command: tuple[str, ...],
    args: tuple[str, ...],
    network: Network | None,
    inside: Inside | None = None,
) -> Plan:
    if command:
        return run_argv([*command, *args], network, inside)
    if args and not args[0].startswith("-"):
        return run_argv(list(args), network, inside)  # entrypoint scripts exec their arguments
    return OWN_PROCESS


def run_argv(argv: list[str], network: Network | None = None, inside: Inside | None = None) -> Plan:
    if not argv:
        return OWN_PROCESS
    process = _Process(network, inside)
    return process.plan(process.argv(argv))


def run_script(script: str, network: Network | None = None, inside: Inside | None = None) -> Plan:
    process = _Process(network, inside)
    return process.plan(process.run_text(script, process.stdio))


class _Takeover(Exception):
    """The process becomes something else until it is killed (or could not start)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        self.plan = plan


class _Offline:
    """The network a container's file tools see: they never dial (curl and the others are
    answered from `Network` directly, with their output merged as the log shows it)."""

    def resolve(self, host: str) -> str | None:
        return None

    def connect(self, address: str, port: int) -> Dial:
        return "unreachable"

    def lookup(self, host: str) -> tuple[str, str] | None:
        return None


class _Process(ShellProcess):
    """A container's process: what it prints, when, and how it ends, as far as it shows."""

    def __init__(self, network: Network | None, inside: Inside | None) -> None:
        super().__init__(dict(inside.env) if inside is not None else {})
        self.lines: list[tuple[float, str]] = []
        self.pending = ""
        self.network, self.inside = network, inside
        self.layer = WritableLayer()
        self.stdio = Stdio(TextInput(), self._log, self._log)

    def plan(self, start: Coroutine[Any, Any, int]) -> Plan:
        try:
            status = run_to_end(start)
        except _Takeover as takeover:
            return takeover.plan
        except Exception as exc:  # a gap in the simulated shell must never take the kubelet down
            said = f"sandbox: the simulated shell failed ({type(exc).__name__}); idling"
            return self._forever(said)
        if self.pending:
            self.lines.append((self.clock, self.pending))
        return Plan(lines=tuple(self.lines), seconds=self.clock, exit_code=status)

    async def argv(self, argv: list[str]) -> int:
        """The command as the runtime starts it: a program, no shell in between."""
        binary = argv[0].rsplit("/", 1)[-1]
        if binary in SHELLS:
            return await self._shell(argv[1:], self.stdio)
        if not self._known(binary, argv[0]):
            raise _Takeover(Plan(start_error=_exec_error(argv[0]), exit_code=128))
        try:
            return await self.call(binary, argv[1:], self.stdio)
        except ShellExit as done:
            return done.code

    async def _log(self, text: str) -> None:
        *complete, self.pending = (self.pending + text).split("\n")
        for line in complete:
            if len(self.lines) >= MAX_LINES:
                raise _Takeover(
                    self._forever(
                        f"sandbox: the simulated shell stopped this script at its limit of "
                        f"{MAX_LINES} lines of output; the container keeps running without output"
                    )
                )
            self.lines.append((self.clock, line))

    def _forever(self, *said: str) -> Plan:
        lines = [*self.lines, *((self.clock, line) for line in said)]
        return Plan(lines=tuple(lines), seconds=FOREVER)

    # -- what ShellProcess asks -----------------------------------------------------------

    def read_file(self, path: str) -> str | None:
        full = posixpath.normpath(posixpath.join("/", path))
        if full in self.layer.files:
            return self.layer.files[full]
        return self.inside.files.read(full) if self.inside is not None else None

    def is_directory(self, path: str) -> bool:
        full = posixpath.normpath(posixpath.join("/", path))
        files = self.inside.files if self.inside is not None else None
        return full in self.layer.directories or (files is not None and files.is_directory(full))

    def entries(self, directory: str) -> list[str]:
        return self._box().entries(directory) if self.inside is not None else []

    def writer(self, path: str, *, append: bool, io: Stdio) -> Write:
        full = posixpath.normpath(posixpath.join("/", path))

        async def write(text: str) -> None:
            try:
                self.layer.write(full, text, append=True)
            except LayerFull:
                await io.err("sh: write error: No space left on device\n")

        with contextlib.suppress(LayerFull):  # then the first write says so
            self.layer.write(full, "", append=append)
        return write

    def looping(self, loop: Loop) -> Callable[[], bool]:
        capped = super().looping(loop)
        waits = _asks_network(loop.condition)
        previous: tuple[object, float, int] | None = None

        def round_starts() -> bool:
            nonlocal previous
            capped()
            state = (tuple(sorted(self.variables.items())), self.status, tuple(self.positional))
            if previous is not None and previous[0] == state:
                if waits:
                    return False
                raise _Takeover(self._repeating(previous[1], previous[2]))
            previous = (state, self.clock, len(self.lines))
            return True

        return round_starts

    def _repeating(self, start: float, first: int) -> Plan:
        cycle = self.lines[first:]
        return Plan(
            lines=tuple(self.lines[:first]),
            seconds=FOREVER,
            loop=tuple(text for _, text in cycle),
            loop_period=max(self.clock - start, 1.0) if cycle else 0.0,
            loop_start=cycle[0][0] if cycle else 0.0,
        )

    async def program(self, name: str, args: list[str], io: Stdio) -> int:
        binary = name.rsplit("/", 1)[-1]
        if binary == "sleep":
            seconds = duration(args[0] if args else "0")
            if seconds is None:
                raise _Takeover(self._forever())
            self.clock += seconds
            return 0
        if binary in ("tail", "yes") and (binary == "yes" or "-f" in args or "-F" in args):
            raise _Takeover(self._forever())
        if binary in ("python", "python3", "node"):
            return self._interpreter(binary, args)
        if binary in _OWN_PROGRAMS or name.startswith(("/app/", "./", "/usr/local/bin/")):
            raise _Takeover(OWN_PROCESS)
        if binary in SHELLS:
            return await self._shell(args, io)
        if self.network is not None and binary in _NETWORK_TOOLS:
            result = _NETWORK_TOOLS[binary](args, self.network)
            if result is not None:
                self.clock += result.seconds
                await io.out("".join(f"{line}\n" for line in result.lines))
                return result.exit_code
        if binary == "hostname" and self.inside is not None:
            await io.out(self.read_file("/etc/hostname") or "localhost\n")
            return 0
        if binary in _FILE_TOOLS and self.inside is not None:
            return await TOOLS[binary](args, io, self._box())
        if binary in QUIET_TOOLS:
            return 0
        await io.err(f"sh: {name}: not found\n")
        return 127

    def _known(self, binary: str, name: str) -> bool:
        return (
            binary in BUILTINS
            or binary in QUIET_TOOLS
            or binary in _OWN_PROGRAMS
            or binary in ("sleep", "tail", "yes", "python", "python3", "node", "hostname")
            or name.startswith(("/app/", "./", "/usr/local/bin/"))
        )

    async def _shell(self, args: list[str], io: Stdio) -> int:
        if len(args) >= 2 and args[0] in ("-c", "-ec", "-ce", "-xc", "-euc", "-exc"):
            text: str | None = args[1]
        elif args and not args[0].startswith("-"):
            text = self.read_file(args[0])
            if text is None:
                raise _Takeover(OWN_PROCESS)  # a script file inside the image
        else:
            return 0  # a shell with no terminal reads an empty stdin and exits
        return await self.run_text(text or "", io)

    def _box(self) -> Box:
        assert self.inside is not None
        return Box(
            self.inside.files,
            self.variables,
            _Offline(),
            (self.read_file("/etc/hostname") or "localhost").strip(),
            _EPOCH,
            self._sleep,
            layer=self.layer,
        )

    async def _sleep(self, seconds: float) -> None:
        self.clock += seconds

    def _interpreter(self, name: str, rest: list[str]) -> int:
        if rest[:2] == ["-m", "http.server"]:
            port = int(rest[2]) if len(rest) > 2 and rest[2].isdigit() else 8000
            self.lines.append((self.clock, f"Serving HTTP on 0.0.0.0 port {port} ..."))
            raise _Takeover(Plan(lines=tuple(self.lines), seconds=FOREVER, ports=(port,)))
        if name == "node":
            return self._node(rest)
        while rest and rest[0] in _PYTHON_FLAGS:
            rest = rest[1:]
        files, env = (self.inside.files, self.inside.env) if self.inside else (None, {})
        if rest[:1] == ["-c"] and len(rest) > 1:
            source, filename, argv = rest[1], "<string>", ["-c", *rest[2:]]
        elif not rest:
            return 0  # a REPL with no terminal exits at once
        elif text := files.read(rest[0]) if files and not rest[0].startswith("-") else None:
            source, filename, argv = text, rest[0], rest
        else:
            raise _Takeover(OWN_PROCESS)  # `-m app`, or a script inside the image
        outcome = pyscript.run(
            source, filename, env=env, read=files.read if files else _no_file, argv=argv
        )
        return self._ran(outcome)

    def _node(self, rest: list[str]) -> int:
        files = self.inside.files if self.inside else None
        mounted = bool(rest) and files is not None and files.read(rest[0]) is not None
        if not (rest[:1] and rest[0] in _NODE_EVAL) and not mounted:
            if rest:
                raise _Takeover(OWN_PROCESS)
            return 0
        line = "sandbox: node scripts are not simulated: the process idles without output"
        raise _Takeover(self._forever(line))

    def _ran(self, outcome: Outcome) -> int:
        self.lines.extend((self.clock + at, line) for at, line in outcome.lines)
        if outcome.seconds is not None:
            self.clock += outcome.seconds
            return outcome.exit_code
        raise _Takeover(
            Plan(
                lines=tuple(self.lines),
                seconds=FOREVER,
                loop=outcome.loop,
                loop_period=outcome.loop_period,
                loop_start=self.clock + outcome.loop_start,
            )
        )


def _asks_network(script: Script) -> bool:
    """Whether a loop's condition runs a network tool (its answer may change later)."""

    def command(found: Command) -> bool:
        if isinstance(found, Redirected):
            return command(found.command)
        if isinstance(found, Simple) and found.words:
            return (plain(found.words[0]) or "").rsplit("/", 1)[-1] in _NETWORK_TOOLS
        return False

    def pipeline(found: Pipeline) -> bool:
        return any(command(c) for c in found.commands)

    def and_or(found: AndOr) -> bool:
        return pipeline(found.first) or any(pipeline(p) for _, p in found.rest)

    return any(and_or(item) for item in script)


def _no_file(_path: str) -> str | None:
    return None


def duration(text: str) -> float | None:
    if text in ("infinity", "inf"):
        return None
    unit = _UNITS.get(text[-1:], 1.0) if text[-1:].isalpha() else 1.0
    number = text[:-1] if text[-1:].isalpha() else text
    try:
        return max(float(number) * unit, 0.0)
    except ValueError:
        return 0.0


def _exec_error(binary: str) -> str:
    return (
        "failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: error during container "
        f'init: exec: "{binary}": executable file not found in $PATH: unknown'
    )
