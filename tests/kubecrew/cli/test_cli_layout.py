"""The command line's layout: each command group stands alone, and what two share lives in
`kubecrew.cli.options` (with the `-o` printer in `output` and an answer as data in `answers`).
Read from the source with `ast`, so an import inside a function counts as much as one at the
top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kubecrew.cli

PACKAGE = "kubecrew.cli"
CLI = Path(kubecrew.cli.__file__).parent
SHARED = frozenset({"options", "output", "answers"})  # what any command module may import
WIRING = "main"  # imports every command group: that is its job
MODULES = sorted(path.stem for path in CLI.glob("*.py") if path.stem != "__init__")
COMMANDS = frozenset(MODULES) - SHARED - {WIRING}


def _imported_cli_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) for every `kubecrew.cli` module the source imports, wherever it does."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # `from .x import y` in kubecrew/cli/ (level 1), or above it
                parent = PACKAGE.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            names = [f"{base}.{alias.name}" for alias in node.names]
            names.append(base)
        else:
            continue
        for name in names:
            if name.startswith(PACKAGE + "."):
                found.append((node.lineno, name.removeprefix(PACKAGE + ".").split(".")[0]))
    return found


def test_the_layout_knows_the_command_modules() -> None:
    assert {"approvals", "proposals", "sandbox", "faults", "watch", "run"} <= COMMANDS


@pytest.mark.parametrize("module", sorted(COMMANDS | SHARED))
def test_command_modules_import_no_other_command_module(module: str) -> None:
    source = (CLI / f"{module}.py").read_text()
    crossings = sorted(
        {
            f"{module}.py:{line} imports {PACKAGE}.{target}"
            for line, target in _imported_cli_modules(source)
            if target in COMMANDS
        }
    )
    assert not crossings, (
        "a command module imports another command module; move what they share to "
        f"{PACKAGE}.options or the package that owns the work: " + "; ".join(crossings)
    )
