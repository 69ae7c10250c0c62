"""The one-line failure every kubecrew entry point ends with, drawn in one place.

`kubecrew` itself, its sandbox commands and `make demo` all promise the same thing when something
goes wrong: one red-labelled line on stderr, never a traceback. The message is escaped (paths and
exception texts may hold Rich markup brackets) and never wrapped, so paths stay copy-pasteable.
Only that rendering lives here: deciding to fail, and the exit status, belong to the caller.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape


def print_failure(message: str, *, label: str = "error", hint: str | None = None) -> None:
    line = f"[bold red]{escape(label)}:[/] {escape(message)}"
    if hint is not None:
        line += f" [dim]({escape(hint)})[/]"
    Console(stderr=True, highlight=False).print(line, soft_wrap=True)
