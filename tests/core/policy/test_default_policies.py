"""Every file in policies/ is a valid policy file, and together they form one consistent set.

The files are globbed, so a new or edited default that does not validate fails here, with the
loader's own problem lines as the message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy.documents import KINDS
from core.policy.loading import load_report, parse_text
from tests.support.policies import POLICIES

FILES = sorted(p for p in POLICIES.rglob("*") if p.suffix in (".yaml", ".yml"))


def test_the_defaults_directory_has_policy_files() -> None:
    assert len(FILES) >= 6


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_each_default_file_validates(path: Path) -> None:
    report = parse_text(path.read_text(), path=str(path))
    assert not report.problems, "\n".join(str(problem) for problem in report.problems)
    assert report.policies, f"{path} holds no policy document"


def test_the_defaults_load_as_one_set_with_every_kind() -> None:
    report = load_report([POLICIES])
    assert not report.problems, "\n".join(str(problem) for problem in report.problems)
    policies = report.policy_set()
    assert {policy.kind for policy in policies} == set(KINDS)
    assert policies.priority is not None
    assert policies.priority.spec.ranked() == ("security", "reliability", "cost")


def test_the_readme_names_every_default_file() -> None:
    readme = (POLICIES / "README.md").read_text()
    missing = [path.name for path in FILES if path.name not in readme]
    assert not missing, f"policies/README.md does not describe {missing}"
