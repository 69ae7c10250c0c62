"""A command run in a real pseudo-terminal (stdlib `pty`), as a person's terminal runs it: a
prompt_toolkit application reads keys from it and Rich writes to it. `Terminal.type` sends keys,
`Terminal.expect` reads the screen text (ANSI sequences stripped) until a pattern shows, and
answers prompt_toolkit's cursor-position query as a terminal does.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>()][0-9A-Za-z]?")
CURSOR_QUERY = b"\x1b[6n"  # prompt_toolkit asks where the cursor is; a terminal answers


class Terminal:
    """A process on the slave side of a pty; what it wrote, read from the master side."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.raw = b""
        self.seen = 0  # how much of the screen text `expect` has consumed

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, pattern: str, *, timeout: float = 60) -> str:
        """Read until `pattern` (a regex) shows in the text after the last match; that text."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()[self.seen :]
            found = re.search(pattern, text)
            if found:
                self.seen += found.end()
                return text[: found.end()]
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} not shown in {timeout} s; screen:\n{text}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process closed the terminal
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"chat exited before {pattern!r}; screen:\n{text}")
                if CURSOR_QUERY in chunk:
                    os.write(self.master, b"\x1b[1;1R")
                self.raw += chunk

    def text(self) -> str:
        return _ANSI.sub("", self.raw.decode(errors="replace")).replace("\r", "")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)
