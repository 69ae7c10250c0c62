"""The tests mirror the packages, and no test file leans on another test file.

Every test directory starts with the top-level package it tests (`kubecrew`, `agents`,
`mcp_servers`, `core`, `sandbox`) or is `architecture` (tests of the whole tree), and is a
package (`__init__.py`) like the rest. What two test files share lives in tests/support/ (a
module named for what it holds) or, as a fixture, in a conftest.py; a module under tests/
imports no `test_*` module, no conftest and no test package's `__init__`, and a helper module
beside some tests is imported only from its own directory. Read with `ast`, so an import inside
a function counts too. Data folders (fixtures/, manifests/ and below) hold no tests.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGES = ("kubecrew", "agents", "mcp_servers", "core", "sandbox")
WHOLE_TREE = ("architecture", "security")  # checks of the whole tree, across packages
SHARED = "support"  # tests/support/: what test files share
DATA = ("fixtures", "manifests")


def _is_data(path: Path, root: Path) -> bool:
    return any(part in DATA for part in path.relative_to(root).parts)


def _modules(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*.py")
        if "__pycache__" not in path.parts and not _is_data(path.parent, root)
    )


def _dotted(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_of(module: str, root: Path) -> Path | None:
    """The file of a module under `root` (tests/), or None for anything outside it."""
    parts = module.split(".")
    if parts[0] != root.name:
        return None
    base = root.parent.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) for every module under `root` that `path` imports."""
    package = _dotted(path, root) if path.name == "__init__.py" else _dotted(path.parent, root)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            named = [m for m in submodules if _file_of(m, root) is not None]
            # `from package import submodule` imports the submodule; any other name is the
            # package's own (its __init__)
            found += [(node.lineno, m) for m in named]
            if len(named) < len(submodules):
                found.append((node.lineno, base))
    return [(line, module) for line, module in found if _file_of(module, root) is not None]


def _refusal(importer: Path, target: Path, root: Path) -> str | None:
    """Why `importer` may not import `target` (both under `root`), or None when it may."""
    if target.is_relative_to(root / SHARED):
        return None
    if target.name.startswith("test_"):
        return "a test module"
    if target.name == "conftest.py":
        return "a conftest"
    if target.name == "__init__.py":
        return "a test package's __init__"
    if target.parent != importer.parent:
        return "a helper of another test folder"
    return None


def cross_test_imports(root: Path = TESTS) -> list[str]:
    """Every import under `root` of what no test file may import, as `file:line: module, why`.
    The fix: a shared helper moves to tests/support/, a shared fixture to a conftest both reach."""
    problems = []
    for path in _modules(root):
        for line, module in _imported(path, root):
            target = _file_of(module, root)
            assert target is not None
            why = _refusal(path, target, root)
            if why is not None:
                problems.append(f"{path.relative_to(root.parent)}:{line}: {module}, {why}")
    return problems


def misplaced_test_directories(root: Path = TESTS) -> list[str]:
    """Every test directory not named for a top-level package or the whole tree, or not a
    package; tests/support/ and data folders aside."""
    problems = []
    for path in sorted({p.parent for p in _modules(root)} - {root}):
        relative = path.relative_to(root)
        if relative.parts[0] == SHARED:
            continue
        if relative.parts[0] not in (*PACKAGES, *WHOLE_TREE):
            problems.append(f"{relative}: not under a top-level package's name")
        if not (path / "__init__.py").is_file():
            problems.append(f"{relative}: no __init__.py")
    return problems


def test_no_test_file_imports_a_test_module_or_another_folders_helpers() -> None:
    assert cross_test_imports() == []


def test_every_test_directory_mirrors_a_top_level_package() -> None:
    assert misplaced_test_directories() == []


def test_the_checks_see_a_test_module_a_conftest_and_a_stray_folder(tmp_path: Path) -> None:
    root = tmp_path / "tests"
    for folder in ("", "support", "core", "core/policy", "kubecrew", "pr_channel"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "support" / "policies.py").write_text("NOON = 12\n")
    (root / "core" / "policy" / "builders.py").write_text("NOON = 12\n")
    (root / "core" / "policy" / "conftest.py").write_text("WEB = 'web'\n")
    (root / "core" / "policy" / "test_a.py").write_text(
        "from tests.support.policies import NOON\nfrom tests.core.policy.builders import NOON\n"
    )
    (root / "kubecrew" / "test_b.py").write_text(
        "from tests.core.policy import test_a\n"
        "from tests.core.policy.conftest import WEB\n"
        "from tests.core.policy.builders import NOON\n"
    )
    inside = "def test_c() -> None:\n    from .. import core\n"  # a function's import counts
    (root / "pr_channel" / "test_c.py").write_text(inside)

    assert cross_test_imports(root) == [
        "tests/kubecrew/test_b.py:1: tests.core.policy.test_a, a test module",
        "tests/kubecrew/test_b.py:2: tests.core.policy.conftest, a conftest",
        "tests/kubecrew/test_b.py:3: tests.core.policy.builders, a helper of another test folder",
        "tests/pr_channel/test_c.py:2: tests.core, a test package's __init__",
    ]
    assert misplaced_test_directories(root) == ["pr_channel: not under a top-level package's name"]
