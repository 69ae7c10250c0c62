"""What sh does itself, the same in a container's command and in an exec, and how it unwinds.

The builtins here need only the shell's state (`State`: variables, last status, positional
parameters, files to test): `echo`, `printf`, `true`, `false`, `:`, `exit`, `test`/`[`,
`export`, `readonly`, `unset`, `set` (positional parameters only), `shift`, `local` (global
here), `read`, `break`, `continue`, `return`, and `trap`/`wait`/`ulimit`/`umask`, which succeed
quietly. Control flow unwinds the walker (`shellprocess`) with the exceptions drawn here:

    ShellExit     `exit N`: the shell ends with N
    ShellFailure  an error sh treats as fatal (bad arithmetic, a sandbox cap): `sh: message`
    BreakLoop, ContinueLoop, ReturnFrom   `break N`, `continue N`, `return N`

Messages and statuses are BusyBox ash's. Pure: no files are written, nothing runs on the host.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Protocol

from sandbox.kubelet.coreutils import Input, Stdio
from sandbox.kubelet.shellarith import ArithmeticFailure, number


class ShellExit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class ShellFailure(Exception):
    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.message, self.status = message, status


class BreakLoop(Exception):
    def __init__(self, levels: int) -> None:
        super().__init__(levels)
        self.levels = levels


class ContinueLoop(BreakLoop):
    """`continue N`: leaves N-1 loops, then goes on with the next round of the Nth."""


class ReturnFrom(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class State(Protocol):
    variables: dict[str, str]
    status: int
    positional: list[str]

    def read_file(self, path: str) -> str | None: ...

    def is_directory(self, path: str) -> bool: ...


class LineInput:
    """A stdin `read` takes a line at a time from, leaving the rest for whoever reads next."""

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


Builtin = Callable[[State, list[str], Stdio], Awaitable[int]]


async def _echo(shell: State, args: list[str], io: Stdio) -> int:
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode().decode("unicode_escape", errors="replace")
    await io.out(text + ("\n" if newline else ""))
    return 0


async def _printf(shell: State, args: list[str], io: Stdio) -> int:
    if not args:
        await io.err("printf: usage: printf FORMAT [ARGUMENT...]\n")
        return 1
    template, values = args[0], list(args[1:])
    text = template.encode().decode("unicode_escape", errors="replace")

    def fill(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        value = values.pop(0) if values else ""
        if match.group(0)[-1] in "di":
            try:
                return str(number(value))
            except ArithmeticFailure:
                return "0"
        return value

    await io.out(re.sub(r"%%|%[-0-9.]*[sdif]", fill, text))
    return 0


def _code(text: str, shell: State) -> int:
    try:
        return int(text) & 0xFF
    except ValueError:
        raise ShellFailure(f"exit: Illegal number: {text}") from None


async def _exit(shell: State, args: list[str], io: Stdio) -> int:
    raise ShellExit(_code(args[0], shell) if args else shell.status)


async def _return(shell: State, args: list[str], io: Stdio) -> int:
    raise ReturnFrom(_code(args[0], shell) if args else shell.status)


async def _break(shell: State, args: list[str], io: Stdio) -> int:
    raise BreakLoop(max(_code(args[0], shell), 1) if args else 1)


async def _continue(shell: State, args: list[str], io: Stdio) -> int:
    raise ContinueLoop(max(_code(args[0], shell), 1) if args else 1)


async def _test(shell: State, args: list[str], io: Stdio) -> int:
    if args and args[-1] == "]":
        args = args[:-1]
    try:
        return 0 if _truth(shell, args) else 1
    except ValueError as error:
        await io.err(f"sh: {error}\n")
        return 2


def _truth(shell: State, args: list[str]) -> bool:
    if args[:1] == ["!"]:
        return not _truth(shell, args[1:])
    for joiner in ("-o", "-a"):
        if joiner in args[1:-1]:
            at = args.index(joiner, 1)
            left, right = _truth(shell, args[:at]), _truth(shell, args[at + 1 :])
            return (left or right) if joiner == "-o" else (left and right)
    if len(args) == 2 and args[0] in ("-f", "-e", "-d", "-r", "-s", "-x", "-w", "-L", "-h"):
        text, directory = shell.read_file(args[1]), shell.is_directory(args[1])
        held = {"-f": text is not None, "-d": directory, "-s": bool(text)}
        return held.get(args[0], text is not None or directory)
    if len(args) == 2 and args[0] in ("-z", "-n"):
        return (args[1] == "") == (args[0] == "-z")
    if len(args) == 3 and args[1] in ("=", "==", "!="):
        return (args[0] == args[2]) == (args[1] != "!=")
    if len(args) == 3 and args[1] in _NUMERIC:
        try:
            first, second = int(args[0]), int(args[2])
        except ValueError:
            bad = args[2] if args[0].lstrip("-").isdigit() else args[0]
            raise ValueError(f"{bad}: bad number") from None
        return _NUMERIC[args[1]](first, second)
    return len(args) == 1 and args[0] != ""


_NUMERIC: dict[str, Callable[[int, int], bool]] = {
    "-eq": lambda a, b: a == b,
    "-ne": lambda a, b: a != b,
    "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b,
    "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b,
}


async def _export(shell: State, args: list[str], io: Stdio) -> int:
    for arg in args:
        name, equals, value = arg.partition("=")
        if equals:
            shell.variables[name] = value
    return 0


async def _unset(shell: State, args: list[str], io: Stdio) -> int:
    for name in args:
        shell.variables.pop(name, None)
    return 0


async def _set(shell: State, args: list[str], io: Stdio) -> int:
    if "--" in args:
        shell.positional = args[args.index("--") + 1 :]
    elif args and not args[0].startswith(("-", "+")):
        shell.positional = list(args)
    return 0


async def _shift(shell: State, args: list[str], io: Stdio) -> int:
    count = int(args[0]) if args and args[0].isdigit() else 1
    if count > len(shell.positional):
        return 1
    shell.positional = shell.positional[count:]
    return 0


async def _read(shell: State, args: list[str], io: Stdio) -> int:
    names = [a for a in args if not a.startswith("-")] or ["REPLY"]
    stdin = io.stdin if isinstance(io.stdin, LineInput) else LineInput(io.stdin)
    line = await stdin.line()
    fields = (line or "").split(None, len(names) - 1) if len(names) > 1 else [(line or "").strip()]
    for position, name in enumerate(names):
        shell.variables[name] = fields[position] if position < len(fields) else ""
    return 1 if line is None else 0


async def _quiet(shell: State, args: list[str], io: Stdio) -> int:
    return 0


async def _false(shell: State, args: list[str], io: Stdio) -> int:
    return 1


BUILTINS: dict[str, Builtin] = {
    "echo": _echo,
    "printf": _printf,
    "exit": _exit,
    "return": _return,
    "break": _break,
    "continue": _continue,
    "true": _quiet,
    ":": _quiet,
    "false": _false,
    "test": _test,
    "[": _test,
    "export": _export,
    "readonly": _export,
    "local": _export,
    "unset": _unset,
    "set": _set,
    "shift": _shift,
    "read": _read,
    "trap": _quiet,
    "wait": _quiet,
    "ulimit": _quiet,
    "umask": _quiet,
}
