"""What a container's command and args make its process do: a `Plan` the kubelet can time.

A simulated container does not run anything; the kubelet only needs to know what a real one
would visibly do: the lines it prints and when, whether and when it exits and with what code, or
that it cannot start at all (an unknown binary). `interpret` reads the common shapes people write
in manifests: `sleep 3600`, `sleep infinity`, `exit 1`, `true`/`false`, `echo ...`, and shell
scripts (`sh -c "echo start; sleep 5; exit 2"`, `&&`/`||` chains, `while true; do ...; done`,
`for i in 1 2 3; do ...; done`, variables the script assigns: `rc=0; ... || rc=1; exit $rc`).
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

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sandbox.kubelet import pyscript
from sandbox.kubelet.busybox import nc, wget
from sandbox.kubelet.curl import curl
from sandbox.kubelet.filesystem import ContainerFiles
from sandbox.kubelet.nettools import Network, Result
from sandbox.kubelet.pyvalues import Outcome

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
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
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
    binary = argv[0].rsplit("/", 1)[-1]
    if binary in SHELLS:
        if len(argv) >= 3 and argv[1] in ("-c", "-ec", "-ce", "-xc", "-euc", "-exc"):
            return run_script(argv[2], network, inside)
        if len(argv) >= 2 and not argv[1].startswith("-"):
            text = inside.files.read(argv[1]) if inside is not None else None
            if text is None:
                return OWN_PROCESS  # a script file inside the image
            return run_script(text, network, inside)
        return Plan(seconds=0.0)  # a shell with no terminal reads an empty stdin and exits
    script = _Script(network, inside)
    return script.simple(argv, exec_form=True) or script._end()


def run_script(script: str, network: Network | None = None, inside: Inside | None = None) -> Plan:
    # Whole-line comments (a shebang) go first: once lines are joined, `#` would eat the rest.
    kept = (line for line in script.splitlines() if not line.lstrip().startswith("#"))
    try:
        lexer = shlex.shlex(" ; ".join(kept), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return Plan(lines=((0.0, "sh: syntax error: unterminated quoted string"),), exit_code=2)
    return _Script(network, inside).run(tokens)


class _Script:
    """Runs a token list the way sh would, but only as far as its visible effects go."""

    def __init__(self, network: Network | None = None, inside: Inside | None = None) -> None:
        self.t = 0.0
        self.lines: list[tuple[float, str]] = []
        self.status = 0
        self.network = network
        self.inside = inside
        self.variables: dict[str, str] = {}  # assigned by the script itself

    def run(self, tokens: list[str]) -> Plan:
        statements = _statements(tokens)
        position = 0
        while position < len(statements):
            connector, words = statements[position]
            position += 1
            if (connector == "&&" and self.status != 0) or (connector == "||" and self.status == 0):
                continue
            if not words:
                continue
            if words[0] in ("while", "until"):
                body, position = _block(statements, position, words)
                if _loops_forever(words):
                    return self._forever(body)
                continue
            if words[0] == "for":
                body, position = _block(statements, position, words)
                values = words[3:] if len(words) > 2 and words[2] == "in" else []
                variable = words[1] if len(words) > 1 else ""
                for value in values:
                    for _, inner in body:
                        expanded = [_expand(w, variable, value) for w in inner]
                        result = self.simple(expanded, exec_form=False)
                        if result is not None:
                            return result
                continue
            result = self.simple(words, exec_form=words[0] == "exec")
            if result is not None:
                return result
        return Plan(lines=tuple(self.lines), seconds=self.t, exit_code=self.status)

    def simple(self, words: list[str], *, exec_form: bool) -> Plan | None:  # noqa: C901
        """Run one command; return a Plan when it ends (or takes over) the process."""
        if words and words[0] == "exec":
            words = words[1:]
        words = [self._substitute(w) for w in words] if self.variables else words
        while not exec_form and words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            self.variables[name] = value
            self.status = 0
        if not words:
            return None if not exec_form else self._end()
        name = words[0].rsplit("/", 1)[-1]
        rest = words[1:]
        if name == "sleep":
            seconds = duration(rest[0] if rest else "0")
            if seconds is None:
                return self._forever(())
            self.t += seconds
            self.status = 0
        elif name in ("echo", "printf"):
            text = " ".join(w for w in rest if w not in ("-n", "-e"))
            self.lines.append((self.t, text.replace("\\n", "").rstrip()))
            self.status = 0
        elif name == "exit":
            self.status = _int(rest[0]) if rest else self.status
            return self._end()
        elif name in ("true", "false"):
            self.status = 0 if name == "true" else 1
        elif name in ("tail", "yes") and (name == "yes" or "-f" in rest or "-F" in rest):
            return self._forever(())
        elif name in ("python", "python3", "node"):
            plan = self._interpreter(name, rest)
            if plan is not None:
                return plan
        elif name in _OWN_PROGRAMS or words[0].startswith(("/app/", "./", "/usr/local/bin/")):
            return OWN_PROCESS
        elif (
            self.network is not None
            and name in _NETWORK_TOOLS
            and (result := _NETWORK_TOOLS[name](rest, self.network)) is not None
        ):
            self.t += result.seconds
            self.lines.extend((self.t, line) for line in result.lines)
            self.status = result.exit_code
        elif name in QUIET_TOOLS:
            self.status = 0
        elif exec_form:
            return Plan(start_error=_exec_error(words[0]), exit_code=128)
        else:
            self.lines.append((self.t, f"sh: {words[0]}: not found"))
            self.status = 127
        return None if not exec_form else self._end()

    def _substitute(self, word: str) -> str:
        """`$name` and `${name}` of variables the script assigned; others are left as written."""

        def value(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            return self.variables.get(name, match.group(0))

        return _VARIABLE.sub(value, word)

    def _interpreter(self, name: str, rest: list[str]) -> Plan | None:
        """A Plan when the interpreter takes the process over; None when it ran and ended."""
        if rest[:2] == ["-m", "http.server"]:
            port = int(rest[2]) if len(rest) > 2 and rest[2].isdigit() else 8000
            self.lines.append((self.t, f"Serving HTTP on 0.0.0.0 port {port} ..."))
            return Plan(lines=tuple(self.lines), seconds=FOREVER, ports=(port,))
        if name == "node":
            return self._node(rest)
        while rest and rest[0] in _PYTHON_FLAGS:
            rest = rest[1:]
        files, env = (self.inside.files, self.inside.env) if self.inside else (None, {})
        if rest[:1] == ["-c"] and len(rest) > 1:
            source, filename, argv = rest[1], "<string>", ["-c", *rest[2:]]
        elif not rest:
            return self._end()  # a REPL with no terminal exits at once
        elif text := files.read(rest[0]) if files and not rest[0].startswith("-") else None:
            source, filename, argv = text, rest[0], rest
        else:
            return OWN_PROCESS  # `-m app`, or a script inside the image
        outcome = pyscript.run(
            source, filename, env=env, read=files.read if files else _no_file, argv=argv
        )
        return self._ran(outcome)

    def _node(self, rest: list[str]) -> Plan | None:
        files = self.inside.files if self.inside else None
        mounted = bool(rest) and files is not None and files.read(rest[0]) is not None
        if not (rest[:1] and rest[0] in _NODE_EVAL) and not mounted:
            return OWN_PROCESS if rest else self._end()
        line = "sandbox: node scripts are not simulated: the process idles without output"
        self.lines.append((self.t, line))
        return Plan(lines=tuple(self.lines), seconds=FOREVER)

    def _ran(self, outcome: Outcome) -> Plan | None:
        self.lines.extend((self.t + at, line) for at, line in outcome.lines)
        if outcome.seconds is not None:
            self.t += outcome.seconds
            self.status = outcome.exit_code
            return None
        return Plan(
            lines=tuple(self.lines),
            seconds=FOREVER,
            loop=outcome.loop,
            loop_period=outcome.loop_period,
            loop_start=self.t + outcome.loop_start,
        )

    def _forever(self, body: Sequence[tuple[str, list[str]]]) -> Plan:
        printed: list[str] = []
        period = 0.0
        for _, words in body:
            if words and words[0] in ("echo", "printf"):
                printed.append(" ".join(w for w in words[1:] if w not in ("-n", "-e")))
            elif words and words[0] == "sleep":
                period += duration(words[1] if len(words) > 1 else "1") or 0.0
        return Plan(
            lines=tuple(self.lines),
            seconds=FOREVER,
            loop=tuple(printed),
            loop_period=max(period, 1.0) if printed else 0.0,
        )

    def _end(self) -> Plan:
        return Plan(lines=tuple(self.lines), seconds=self.t, exit_code=self.status)


def _statements(tokens: list[str]) -> list[tuple[str, list[str]]]:
    """Split tokens at `;`, `&&`, `||`, `&`, `|`: (connector before, words)."""
    statements: list[tuple[str, list[str]]] = []
    connector, words = ";", list[str]()
    for token in tokens:
        if token in (";", "&&", "||", "&", "|", ";;"):
            statements.append((connector, words))
            connector, words = (token if token in ("&&", "||") else ";"), []
        else:
            words.append(token)
    statements.append((connector, words))
    # `do` and `then` start a statement of their own words: "do echo hi" -> "do", "echo hi"
    split: list[tuple[str, list[str]]] = []
    for conn, ws in statements:
        if ws and ws[0] in ("do", "then", "else") and len(ws) > 1:
            split.append((conn, [ws[0]]))
            split.append((";", ws[1:]))
        else:
            split.append((conn, ws))
    return split


def _block(
    statements: list[tuple[str, list[str]]], position: int, _header: list[str]
) -> tuple[list[tuple[str, list[str]]], int]:
    """The statements between `do` and the matching `done`, and the position after it."""
    body: list[tuple[str, list[str]]] = []
    depth = 0
    while position < len(statements):
        _, words = statements[position]
        position += 1
        if words and words[0] in ("while", "until", "for"):
            depth += 1
        if words == ["done"] or (words and words[0] == "done"):
            if depth == 0:
                return body, position
            depth -= 1
        if words and words[0] != "do":
            body.append(statements[position - 1])
    return body, position


def _no_file(_path: str) -> str | None:
    return None


def _expand(word: str, variable: str, value: str) -> str:
    return word.replace("${" + variable + "}", value).replace("$" + variable, value)


def _loops_forever(header: list[str]) -> bool:
    condition = header[1:]
    if header[0] == "while":
        return condition[:1] in (["true"], [":"], ["[", "1"], ["sleep"])
    return condition[:1] == ["false"]


def duration(text: str) -> float | None:
    if text in ("infinity", "inf"):
        return None
    unit = _UNITS.get(text[-1:], 1.0) if text[-1:].isalpha() else 1.0
    number = text[:-1] if text[-1:].isalpha() else text
    try:
        return max(float(number) * unit, 0.0)
    except ValueError:
        return 0.0


def _int(text: str) -> int:
    try:
        return int(text) & 0xFF
    except ValueError:
        return 2


def _exec_error(binary: str) -> str:
    return (
        "failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: error during container "
        f'init: exec: "{binary}": executable file not found in $PATH: unknown'
    )
