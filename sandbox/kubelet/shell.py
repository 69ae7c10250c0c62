"""A small POSIX shell for execs: what `kubectl exec POD -- sh -c "a; b && c | d"` prints.

Why not `commands.py`: that interpreter answers what a container's own process shows in its log
over time (one merged stream, no stdin, no pipes), so the kubelet can schedule lines and an
exit; an exec needs stdout and stderr apart, stdin, pipelines and a real exit status. The two
share the tools (`coreutils`, the network tools) and the list of programs an image is assumed
to have (`commands.QUIET_TOOLS`).

Understood: `;`, newlines, `&&`, `||`, `|` (stages run one after another, each reading what the
previous one wrote), `&` (run in the foreground), single and double quotes, backslash escapes,
`$VAR`, `${VAR}` and `$?` from the container's environment and the script's own assignments
(`A=1`, `export A=1`), redirections (`> f`, `>> f`, `2> f`, `2>&1`, `>&2`, `< f`; `/dev/null`
discards; files go to the container's writable layer, `layer`, and outlive the exec; a full
layer is `sh: write error: No space left on device`), `[`/`test` on strings and files. Loops,
conditionals and command substitution are not simulated: they fail with exit 2 and a message
that says so. An unknown program is `sh: NAME: not found` (127) inside a script; given directly
to exec it raises `ExecNotFound`, which the kubelet reports as the runtime does.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from sandbox.kubelet.commands import QUIET_TOOLS, SHELLS, duration
from sandbox.kubelet.coreutils import TOOLS, Box, Input, Stdio, TextInput, Tool, Write
from sandbox.kubelet.layer import LayerFull
from sandbox.kubelet.tar import tar

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "\n")
_REDIRECTS = ("&>", ">&1", ">&2", ">>", ">", "<")  # after an optional file descriptor
_UNSUPPORTED = {"if", "then", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac"}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(\?))")
_LITERAL_DOLLAR = "\x00"  # a `$` that was quoted: never expanded
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PROGRAMS: dict[str, Tool] = {**TOOLS, "tar": tar}  # tar needs the Box, so it lives apart


class ExecNotFound(Exception):
    """The program an exec names is not in the container (the runtime cannot start it)."""

    def __init__(self, binary: str) -> None:
        super().__init__(binary)
        self.binary = binary


class ScriptError(Exception):
    """The script cannot be read (unterminated quote) or uses syntax not simulated."""


class _Exit(Exception):  # control flow: `exit` unwinds the script
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Token:
    text: str
    op: bool = False  # an operator or a redirection, not a word


class Shell:
    """One shell process in a container: its variables and last status live as long as it."""

    def __init__(self, box: Box) -> None:
        self.box = box
        self.status = 0

    # -- entry points -------------------------------------------------------------------------

    async def exec_argv(self, argv: list[str], io: Stdio) -> int:
        """An exec's command as the runtime starts it: a program, no shell in between."""
        name = posixpath.basename(argv[0])
        if not self._known(name):
            raise ExecNotFound(argv[0])
        try:
            return await self._command(name, argv[1:], io)
        except _Exit as done:
            return done.code

    async def script(self, text: str, io: Stdio) -> int:
        try:
            await self._list(tokenize(text), io)
        except ScriptError as exc:
            await io.err(f"sh: {exc}\n")
            self.status = 2
        except _Exit as done:
            self.status = done.code
        return self.status

    async def interactive(self, io: Stdio) -> int:
        """`sh` reading its commands from stdin, line by line, until `exit` or the end."""
        stdin = _Lines(io.stdin)
        io = replace(io, stdin=stdin)
        while (line := await stdin.line()) is not None:
            try:
                await self._list(tokenize(line), io)
            except ScriptError as exc:
                await io.err(f"sh: {exc}\n")
                self.status = 2
            except _Exit as done:
                return done.code
        return self.status

    # -- evaluation ---------------------------------------------------------------------------

    async def _list(self, tokens: list[Token], io: Stdio) -> None:
        connector = ";"
        pipeline: list[Token] = []
        for token in [*tokens, Token(";", op=True)]:
            if token.op and token.text in ("&&", "||", ";", "&", "\n", ";;"):
                if pipeline and not (
                    (connector == "&&" and self.status != 0)
                    or (connector == "||" and self.status == 0)
                ):
                    self.status = await self._pipeline(pipeline, io)
                connector, pipeline = token.text, []
            else:
                pipeline.append(token)

    async def _pipeline(self, tokens: list[Token], io: Stdio) -> int:
        stages: list[list[Token]] = [[]]
        for token in tokens:
            if token.op and token.text == "|":
                stages.append([])
            else:
                stages[-1].append(token)
        stdin: Input = io.stdin
        status = 0
        for position, stage in enumerate(stages):
            last = position == len(stages) - 1
            piped: list[str] = []

            async def collect(text: str, into: list[str] = piped) -> None:
                into.append(text)

            stage_io = Stdio(stdin, io.out if last else collect, io.err)
            status = await self._simple(stage, stage_io)
            stdin = TextInput("".join(piped))
        return status

    async def _simple(self, tokens: list[Token], io: Stdio) -> int:
        words: list[str] = []
        position = 0
        while position < len(tokens):
            token = tokens[position]
            position += 1
            if not token.op:
                words.append(self._expand(token.text))
                continue
            target = self._expand(tokens[position].text) if position < len(tokens) else ""
            if not token.text:  # `>&1` or `1>&1`: a no-op
                continue
            if token.text not in ("2>&1", ">&2"):
                if position >= len(tokens) or tokens[position].op:
                    raise ScriptError(f"syntax error: unexpected redirection {token.text}")
                position += 1
            io = self._redirect(token.text, target, io)
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            self.box.env[name] = value
        if not words:
            return 0
        if words[0] in _UNSUPPORTED:
            raise ScriptError(f"'{words[0]}' is not simulated by the sandbox in exec scripts")
        name = posixpath.basename(words[0])
        if not self._known(name):
            await io.err(f"sh: {words[0]}: not found\n")
            return 127
        return await self._command(name, words[1:], io)

    def _redirect(self, operator: str, target: str, io: Stdio) -> Stdio:
        async def discard(_: str) -> None:
            return None

        def into(path: str, *, append: bool) -> Write:
            full, layer = self.box.path(path), self.box.layer
            with contextlib.suppress(LayerFull):  # then the first write says so
                layer.write(full, "", append=append)

            async def write(text: str) -> None:
                try:
                    layer.write(full, text, append=True)
                except LayerFull:
                    await io.err("sh: write error: No space left on device\n")

            return write

        if operator == "2>&1":
            return replace(io, err=io.out)
        if operator == ">&2":
            return replace(io, out=io.err)
        if operator == "<":
            text = self.box.read(target)
            if text is None:
                raise ScriptError(f"can't open '{target}': No such file or directory")
            return replace(io, stdin=TextInput(text))
        sink = discard if target == "/dev/null" else into(target, append=">>" in operator)
        if operator.startswith("2"):
            return replace(io, err=sink)
        if operator == "&>":
            return replace(io, out=sink, err=sink)
        return replace(io, out=sink)

    def _expand(self, word: str) -> str:
        def value(match: re.Match[str]) -> str:
            if match.group(3):
                return str(self.status)
            return self.box.env.get(match.group(1) or match.group(2), "")

        return _VARIABLE.sub(value, word).replace(_LITERAL_DOLLAR, "$")

    def _known(self, name: str) -> bool:
        return name in _BUILTINS or name in _PROGRAMS or name in SHELLS or name in QUIET_TOOLS

    async def _command(self, name: str, args: list[str], io: Stdio) -> int:
        if name in _BUILTINS:
            return await _BUILTINS[name](self, args, io)
        if name in _PROGRAMS:
            return await _PROGRAMS[name](args, io, self.box)
        if name in SHELLS:
            return await self._subshell(args, io)
        return 0  # a program the image has whose effect the sandbox does not simulate

    async def _subshell(self, args: list[str], io: Stdio) -> int:
        child = Shell(replace(self.box, env=dict(self.box.env)))
        options = [a for a in args if a.startswith("-")]
        words = [a for a in args if not a.startswith("-")]
        if any("c" in option for option in options):
            return await child.script(words[0] if words else "", io) if words else 2
        if words:
            text = self.box.read(words[0])
            if text is None:
                await io.err(f"sh: can't open '{words[0]}': No such file or directory\n")
                return 2
            return await child.script(text, io)
        return await child.interactive(io)


class _Lines:
    """A stdin read a line at a time by `sh`, whose commands may read the rest themselves."""

    def __init__(self, stdin: Input) -> None:
        self._stdin = stdin
        self._buffer = ""
        self._closed = False

    async def line(self) -> str | None:
        while "\n" not in self._buffer and not self._closed:
            chunk = await self._stdin.read()
            if chunk is None:
                self._closed = True
            else:
                self._buffer += chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition("\n")
        return line

    async def read(self) -> str | None:
        if self._buffer:
            text, self._buffer = self._buffer, ""
            return text
        return None if self._closed else await self._stdin.read()


def tokenize(text: str) -> list[Token]:  # noqa: C901 - one pass over the characters, as sh reads
    tokens: list[Token] = []
    word: list[str] = []
    started = False  # a word is open (even an empty quoted one: "")
    position = 0

    def close() -> None:
        nonlocal started
        if started:
            tokens.append(Token("".join(word)))
        word.clear()
        started = False

    while position < len(text):
        char = text[position]
        if char == "'":
            end = text.find("'", position + 1)
            if end < 0:
                raise ScriptError("syntax error: unterminated quoted string")
            word.append(text[position + 1 : end].replace("$", _LITERAL_DOLLAR))
            started, position = True, end + 1
        elif char == '"':
            position, started = _double_quoted(text, position + 1, word), True
        elif char == "\\" and position + 1 < len(text):
            escaped = text[position + 1]
            word.append(_LITERAL_DOLLAR if escaped == "$" else escaped)
            started, position = True, position + 2
        elif char == "#" and not started:
            end = text.find("\n", position)
            position = len(text) if end < 0 else end
        elif char in " \t":
            close()
            position += 1
        elif char == "$" and text.startswith("$(", position):
            raise ScriptError("command substitution $(...) is not simulated by the sandbox")
        elif char in "<>" or text.startswith("&>", position):
            fd = "".join(word) if started and "".join(word) in ("1", "2") else ""
            if fd:
                word.clear()
                started = False
            close()
            redirect = next(r for r in _REDIRECTS if text.startswith(r, position))
            tokens.append(Token(_canonical(fd, redirect), op=True))
            position += len(redirect)
        elif operator := next((o for o in _OPERATORS if text.startswith(o, position)), None):
            close()
            tokens.append(Token(operator, op=True))
            position += len(operator)
        else:
            word.append(char)
            started, position = True, position + 1
    close()
    return tokens


def _canonical(fd: str, redirect: str) -> str:
    """One spelling per redirection: `2>&1`, `>&2`, `2>`, `2>>`, `>`, `>>`, `<`, `&>`."""
    if redirect in (">&1", ">&2"):
        return "2>&1" if fd == "2" and redirect == ">&1" else (">&2" if redirect == ">&2" else "")
    return ("2" if fd == "2" else "") + redirect


def _double_quoted(text: str, position: int, word: list[str]) -> int:
    while position < len(text):
        char = text[position]
        if char == '"':
            return position + 1
        if char == "\\" and position + 1 < len(text) and text[position + 1] in '"\\$`':
            word.append(_LITERAL_DOLLAR if text[position + 1] == "$" else text[position + 1])
            position += 2
            continue
        word.append(char)
        position += 1
    raise ScriptError("syntax error: unterminated quoted string")


# -- builtins: what sh (BusyBox ash) does itself --------------------------------------------


async def _echo(shell: Shell, args: list[str], io: Stdio) -> int:
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-ne", "-en"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode().decode("unicode_escape", errors="replace")
    await io.out(text + ("\n" if newline else ""))
    return 0


async def _printf(shell: Shell, args: list[str], io: Stdio) -> int:
    if not args:
        await io.err("printf: usage: printf FORMAT [ARGUMENT...]\n")
        return 1
    template, values = args[0], list(args[1:])
    text = template.encode().decode("unicode_escape", errors="replace")

    def fill(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        return values.pop(0) if values else ""

    await io.out(re.sub(r"%%|%[-0-9.]*[sdif]", fill, text))
    return 0


async def _exit(shell: Shell, args: list[str], io: Stdio) -> int:
    code = shell.status
    if args:
        try:
            code = int(args[0]) & 0xFF
        except ValueError:
            await io.err(f"sh: exit: Illegal number: {args[0]}\n")
            code = 2
    raise _Exit(code)


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


async def _export(shell: Shell, args: list[str], io: Stdio) -> int:
    for arg in args:
        name, equals, value = arg.partition("=")
        if equals:
            shell.box.env[name] = value
    return 0


async def _unset(shell: Shell, args: list[str], io: Stdio) -> int:
    for name in args:
        shell.box.env.pop(name, None)
    return 0


async def _say(shell: Shell, text: str, io: Stdio) -> int:
    await io.out(text + "\n")
    return 0


async def _test(shell: Shell, args: list[str], io: Stdio) -> int:
    if args and args[-1] == "]":
        args = args[:-1]
    box = shell.box
    if len(args) == 2 and args[0] in ("-f", "-e", "-d", "-r", "-s"):
        path = posixpath.normpath(posixpath.join(box.cwd, args[1]))
        is_file, is_dir = box.read(path) is not None, box.is_directory(path)
        held = {"-f": is_file, "-r": is_file, "-s": bool(box.read(path)), "-d": is_dir}
        return 0 if held.get(args[0], is_file or is_dir) else 1
    if len(args) == 2 and args[0] in ("-z", "-n"):
        return 0 if (args[1] == "") == (args[0] == "-z") else 1
    if len(args) == 3 and args[1] in ("=", "==", "!="):
        return 0 if (args[0] == args[2]) == (args[1] != "!=") else 1
    return 0 if len(args) == 1 and args[0] else 1


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


async def _true(shell: Shell, args: list[str], io: Stdio) -> int:
    return 0


async def _false(shell: Shell, args: list[str], io: Stdio) -> int:
    return 1


async def _pwd(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.cwd, io)


async def _hostname(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.hostname, io)


async def _date(shell: Shell, args: list[str], io: Stdio) -> int:
    return await _say(shell, shell.box.now.strftime("%a %b %e %H:%M:%S UTC %Y"), io)


Builtin = Callable[[Shell, list[str], Stdio], Awaitable[int]]
_BUILTINS: dict[str, Builtin] = {
    "echo": _echo,
    "printf": _printf,
    "exit": _exit,
    "true": _true,
    ":": _true,
    "false": _false,
    "sleep": _sleep,
    "cd": _cd,
    "export": _export,
    "unset": _unset,
    "test": _test,
    "[": _test,
    "pwd": _pwd,
    "hostname": _hostname,
    "date": _date,
    "id": _id,
    "whoami": _whoami,
}
