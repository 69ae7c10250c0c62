"""Running a parsed shell script: control flow, expansions, redirections and the caps, shared
by the two simulated shells so a construct means the same in both.

`ShellProcess` walks a `shellast` tree; what a command name does beyond sh's own builtins
(`shellbuiltins`) is its subclass's: `commands._Process` turns it into timed log lines of a
container's process, `shell.Shell` into an exec's stdout and stderr. The walker is async
because an exec's commands wait (stdin, sleeps); the container's never suspend, and
`run_to_end` drives them without an event loop. Expansions happen each time a command runs:
parameters (with their operators), `$((...))`, `$(...)` and backticks (a subshell whose stdout,
trailing newlines stripped, becomes the text), word splitting of unquoted results on blanks,
and `*`/`?`/`[...]` globs against the files the subclass shows. Functions take positional
parameters; `( ... )` and substitutions keep their assignments to themselves.

Caps, each answered as a failing shell (`sh: sandbox: ...`, status 2), never a hang: `MAX_STEPS`
commands per script, `MAX_SPINS` iterations of a loop in a row while no time passes,
`MAX_DEPTH` nested substitutions, function calls and subshells, `MAX_OUTPUT` characters written.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from sandbox.kubelet.coreutils import Stdio, TextInput, Write
from sandbox.kubelet.shellarith import ArithmeticFailure, evaluate
from sandbox.kubelet.shellast import (
    AndOr,
    Arith,
    Case,
    Command,
    For,
    Function,
    Group,
    If,
    Loop,
    Param,
    Pipeline,
    Redirect,
    Redirected,
    Script,
    Simple,
    Text,
    Word,
)
from sandbox.kubelet.shellbuiltins import (
    BUILTINS,
    BreakLoop,
    ContinueLoop,
    LineInput,
    ReturnFrom,
    ShellExit,
    ShellFailure,
)
from sandbox.kubelet.shellpatterns import (
    FIELD,
    LITERAL,
    QUOTED,
    SPLIT,
    Piece,
    expand_glob,
    glob_regex,
    split,
    trimmed,
)
from sandbox.kubelet.shellsyntax import ShellSyntaxError, parse

MAX_STEPS = 100_000
MAX_SPINS = 10_000
MAX_DEPTH = 50
MAX_OUTPUT = 1_000_000
T = TypeVar("T")


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (a container's process: nothing awaits
    anything but the script's own code)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a container's simulated shell suspended")


async def _discard(_: str) -> None:
    return None


class ShellProcess(ABC):
    """One sh process; subclasses say what programs do and which files exist."""

    pid = 1

    def __init__(self, variables: dict[str, str], *, name: str = "sh") -> None:
        self.variables = variables
        self.status = 0
        self.positional: list[str] = []
        self.name = name
        self.functions: dict[str, Command] = {}
        self.clock = 0.0  # seconds the script has spent sleeping or waiting
        self.steps = self.depth = self.written = 0
        self.exited = False  # `exit` ended the script

    # -- what subclasses provide --------------------------------------------------------------

    @abstractmethod
    async def program(self, name: str, args: list[str], io: Stdio) -> int:
        """Run a command that is neither a builtin nor a function; its exit status."""

    def read_file(self, path: str) -> str | None:
        return None

    def is_directory(self, path: str) -> bool:
        return False

    def entries(self, directory: str) -> list[str]:
        return []

    def writer(self, path: str, *, append: bool, io: Stdio) -> Write:
        return _discard

    def looping(self, loop: Loop) -> Callable[[], bool]:
        """Called when a `while`/`until` starts; what it returns is called before each round
        and may end the loop (False). Here: the cap on rounds while no time passes."""
        spins, since = 0, self.clock

        def round_starts() -> bool:
            nonlocal spins, since
            spins = spins + 1 if self.clock == since else 0
            since = self.clock
            if spins >= MAX_SPINS:
                raise ShellFailure(
                    f"sandbox: a loop ran {MAX_SPINS} times without pausing; script stopped"
                )
            return True

        return round_starts

    def saved(self) -> Callable[[], None]:
        """How to undo what a subshell changes (its variables, functions, parameters)."""
        variables, functions = dict(self.variables), dict(self.functions)
        positional = list(self.positional)

        def restore() -> None:
            self.variables.clear()
            self.variables.update(variables)
            self.functions, self.positional = functions, positional

        return restore

    # -- entry --------------------------------------------------------------------------------

    async def run_text(self, text: str, io: Stdio) -> int:
        """Parse and run `text`; a syntax error is sh's (`sh: syntax error: ...`, status 2)."""
        try:
            script = parse(text)
        except ShellSyntaxError as error:
            await io.err(f"sh: {error}\n")
            self.status = 2
            return 2
        return await self.run(script, io)

    async def run(self, script: Script, io: Stdio) -> int:
        counted = replace(io, out=self._counted(io.out), err=self._counted(io.err))
        if not isinstance(counted.stdin, LineInput):
            counted = replace(counted, stdin=LineInput(counted.stdin))
        try:
            await self.body(script, counted)
        except ShellExit as done:
            self.status, self.exited = done.code, True
        except ShellFailure as failure:
            await io.err(f"sh: {failure.message}\n")
            self.status = failure.status
        except ReturnFrom as returned:
            self.status = returned.code
        except BreakLoop:  # `break` or `continue` outside any loop does nothing, as in sh
            pass
        return self.status

    def _counted(self, write: Write) -> Write:
        async def counted(text: str) -> None:
            self.written += len(text)
            if self.written > MAX_OUTPUT:
                raise ShellFailure(f"sandbox: output over {MAX_OUTPUT} characters; script stopped")
            await write(text)

        return counted

    # -- commands -----------------------------------------------------------------------------

    async def body(self, script: Script, io: Stdio) -> None:
        for item in script:
            await self._and_or(item, io)

    async def _and_or(self, item: AndOr, io: Stdio) -> None:
        await self._pipeline(item.first, io)
        for op, pipeline in item.rest:
            if (op == "&&") == (self.status == 0):
                await self._pipeline(pipeline, io)

    async def _pipeline(self, pipeline: Pipeline, io: Stdio) -> None:
        stdin = io.stdin
        for position, command in enumerate(pipeline.commands):
            last = position == len(pipeline.commands) - 1
            piped: list[str] = []

            async def collect(text: str, into: list[str] = piped) -> None:
                into.append(text)

            await self.command(command, Stdio(stdin, io.out if last else collect, io.err))
            stdin = LineInput(TextInput("".join(piped)))
        if pipeline.negated:
            self.status = int(self.status == 0)

    async def command(self, command: Command, io: Stdio) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ShellFailure(f"sandbox: script stopped at its limit of {MAX_STEPS} commands")
        if isinstance(command, Simple):
            await self._simple(command, io)
        elif isinstance(command, If):
            await self._if(command, io)
        elif isinstance(command, Loop):
            await self._loop(command, io)
        elif isinstance(command, For):
            await self._for(command, io)
        elif isinstance(command, Case):
            await self._case(command, io)
        elif isinstance(command, Group):
            await (
                self.subshell(command.body, io) if command.subshell else self.body(command.body, io)
            )
        elif isinstance(command, Function):
            self.functions[command.name] = command.body
            self.status = 0
        elif isinstance(command, Redirected):
            redirected = await self._redirect(command.redirects, io)
            if redirected is not None:
                await self.command(command.command, redirected)

    async def _if(self, command: If, io: Stdio) -> None:
        for condition, body in command.branches:
            await self.body(condition, io)
            if self.status == 0:
                await self.body(body, io)
                return
        self.status = 0
        if command.otherwise is not None:
            await self.body(command.otherwise, io)

    async def _loop(self, loop: Loop, io: Stdio) -> None:
        round_starts, status = self.looping(loop), 0
        while round_starts():
            await self.body(loop.condition, io)
            if (self.status == 0) == loop.until:
                break
            try:
                await self.body(loop.body, io)
            except BreakLoop as jump:
                if self._leaves(jump):
                    status = self.status
                    break
            status = self.status
        self.status = status

    def _leaves(self, jump: BreakLoop) -> bool:
        """Whether `break`/`continue` leaves this loop (True) or goes on with it (False)."""
        if jump.levels > 1:
            jump.levels -= 1
            raise jump
        return not isinstance(jump, ContinueLoop)

    async def _for(self, loop: For, io: Stdio) -> None:
        values = list(self.positional) if loop.words is None else await self.fields(loop.words, io)
        status = 0
        for value in values:
            self.variables[loop.name] = value
            try:
                await self.body(loop.body, io)
            except BreakLoop as jump:
                if self._leaves(jump):
                    status = self.status
                    break
            status = self.status
        self.status = status

    async def _case(self, case: Case, io: Stdio) -> None:
        subject = await self.string(case.word, io)
        for patterns, body in case.arms:
            for pattern in patterns:
                if re.fullmatch(await self._pattern(pattern, io), subject, re.DOTALL):
                    self.status = 0
                    await self.body(body, io)
                    return
        self.status = 0

    async def subshell(self, script: Script, io: Stdio) -> None:
        restore = self._deeper()
        try:
            await self.body(script, io)
        except ShellExit as done:
            self.status = done.code
        finally:
            restore()
            self.depth -= 1

    def _deeper(self) -> Callable[[], None]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.depth -= 1
            raise ShellFailure(f"sandbox: nested deeper than {MAX_DEPTH} levels; script stopped")
        return self.saved()

    async def _simple(self, command: Simple, io: Stdio) -> None:
        words = await self.fields(command.words, io)
        self.status = 0  # a bare assignment's status is its last substitution's
        values = [(name, await self.string(value, io)) for name, value in command.assignments]
        redirected = await self._redirect(command.redirects, io)
        if redirected is None:
            return
        if not words:
            self.variables.update(values)
            return
        before = {name: self.variables.get(name) for name, _ in values}
        self.variables.update(values)
        try:
            self.status = await self.call(words[0], words[1:], redirected)
        finally:
            for name, old in before.items():
                if old is None:
                    self.variables.pop(name, None)
                else:
                    self.variables[name] = old

    async def call(self, name: str, args: list[str], io: Stdio) -> int:
        if name in self.functions:
            return await self._function(self.functions[name], args, io)
        if name in BUILTINS:
            return await BUILTINS[name](self, args, io)
        if name == "eval":
            return await self._source(" ".join(args), io)
        if name in (".", "source"):
            text = self.read_file(args[0]) if args else None
            if text is None:
                raise ShellFailure(f"{name}: can't open '{args[0] if args else ''}'")
            return await self._source(text, io)
        if name == "exec" and args:
            raise ShellExit(await self.call(args[0], args[1:], io))
        if name == "exec":
            return 0
        return await self.program(name, args, io)

    async def _source(self, text: str, io: Stdio) -> int:
        try:
            script = parse(text)
        except ShellSyntaxError as error:
            raise ShellFailure(str(error)) from None
        await self.body(script, io)
        return self.status

    async def _function(self, body: Command, args: list[str], io: Stdio) -> int:
        self._deeper()
        positional, self.positional = self.positional, list(args)
        try:
            await self.command(body, io)
        except ReturnFrom as returned:
            self.status = returned.code
        finally:
            self.positional = positional
            self.depth -= 1
        return self.status

    async def _redirect(self, redirects: tuple[Redirect, ...], io: Stdio) -> Stdio | None:
        """`io` with the redirections applied; None (status 1) when a file cannot be opened."""
        for redirect in redirects:
            target = await self.string(redirect.target, io)
            if redirect.op in (">&", "<&"):
                stream = {"1": io.out, "2": io.err}.get(target, _discard)
                io = replace(io, err=stream) if redirect.fd == 2 else replace(io, out=stream)
            elif redirect.op == "<":
                text = self.read_file(target)
                if text is None:
                    await io.err(f"sh: can't open '{target}': No such file or directory\n")
                    self.status = 1
                    return None
                io = replace(io, stdin=LineInput(TextInput(text)))
            else:
                append = redirect.op == ">>"
                sink = (
                    _discard if target == "/dev/null" else self.writer(target, append=append, io=io)
                )
                if redirect.fd in (1, -1):
                    io = replace(io, out=sink)
                if redirect.fd in (2, -1):
                    io = replace(io, err=sink)
        return io

    # -- expansions ---------------------------------------------------------------------------

    async def string(self, word: Word, io: Stdio) -> str:
        """The word expanded as one string: no splitting, no globbing."""
        return "".join(text for text, how in await self._pieces(word, io) if how != FIELD)

    async def fields(self, words: tuple[Word, ...], io: Stdio) -> list[str]:
        found: list[str] = []
        for word in words:
            for field in split(await self._pieces(word, io)):
                found.extend(self._glob(field))
        return found

    async def _pattern(self, word: Word, io: Stdio) -> str:
        """The word as a regular expression of its glob (quoted characters match themselves)."""
        pieces = await self._pieces(word, io)
        return "".join(
            glob_regex(text) if how != QUOTED else re.escape(text) for text, how in pieces
        )

    async def _pieces(self, word: Word, io: Stdio) -> list[Piece]:
        pieces: list[Piece] = []
        for part in word:
            if isinstance(part, Text):
                pieces.append((part.text, QUOTED if part.quoted else LITERAL))
                continue
            how = QUOTED if part.quoted else SPLIT
            if isinstance(part, Param) and part.name == "@" and part.quoted and not part.op:
                for position, value in enumerate(self.positional):
                    pieces.extend(
                        [(value, QUOTED)] if position == 0 else [("", FIELD), (value, QUOTED)]
                    )
                continue
            if isinstance(part, Param):
                text = await self._parameter(part, io)
            elif isinstance(part, Arith):
                text = str(self._arithmetic(await self.string(part.expression, io)))
            else:
                text = await self.substitute(part.script, io)
            pieces.append((text, how))
        return pieces

    def _arithmetic(self, text: str) -> int:
        try:
            return evaluate(
                text, lambda name: self.variables.get(name, ""), self.variables.__setitem__
            )
        except ArithmeticFailure as failure:
            raise ShellFailure(str(failure)) from None

    async def _parameter(self, part: Param, io: Stdio) -> str:
        value = self._value(part.name)
        op = part.op
        if op == "len":
            return str(len(value or ""))
        if op in ("#", "##", "%", "%%"):
            return trimmed(value or "", await self._pattern(part.arg, io), op)
        missing = value is None or (op.startswith(":") and value == "")
        if not op or (not missing and op in (":-", "-", ":=", "=", ":?", "?")):
            return value or ""
        if op in (":+", "+"):
            return "" if missing else await self.string(part.arg, io)
        argument = await self.string(part.arg, io)
        if op in (":=", "="):
            self.variables[part.name] = argument
        if op in (":?", "?"):
            raise ShellFailure(f"{part.name}: {argument or 'parameter not set'}")
        return argument

    def _value(self, name: str) -> str | None:
        special = {
            "?": str(self.status),
            "$": str(self.pid),
            "#": str(len(self.positional)),
            "@": " ".join(self.positional),
            "*": " ".join(self.positional),
            "0": self.name,
            "!": "",
            "-": "",
        }
        if name in special:
            return special[name]
        if name.isdigit():
            index = int(name) - 1
            return self.positional[index] if index < len(self.positional) else None
        return self.variables.get(name)

    async def substitute(self, script: Script, io: Stdio) -> str:
        captured: list[str] = []

        async def capture(text: str) -> None:
            captured.append(text)

        restore = self._deeper()
        try:
            await self.body(script, Stdio(LineInput(TextInput()), capture, io.err))
        except ShellExit as done:
            self.status = done.code
        except ShellFailure as failure:
            await io.err(f"sh: {failure.message}\n")
            self.status = failure.status
        finally:
            status = self.status
            restore()
            self.depth -= 1
            self.status = status
        return "".join(captured).rstrip("\n")

    def _glob(self, field: list[Piece]) -> list[str]:
        text = "".join(t for t, _ in field)
        if not any(how != QUOTED and re.search(r"[*?[]", t) for t, how in field):
            return [text]
        pattern = "".join(
            t if how != QUOTED else re.sub(r"([*?[\]])", r"[\1]", t) for t, how in field
        )
        found = sorted(expand_glob(pattern, self.entries, self.is_directory))
        return found or [text]
