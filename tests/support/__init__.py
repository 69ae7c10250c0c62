"""Test-only helpers shared by every test folder: the sandbox fixtures' building blocks and the
real-kubectl driver, the worlds the agents and front doors are tested in (a team's GitOps
repository, the agents on a sandbox, the PR channel's and Slack's worlds), the scenes a
deterministic test and its model-planned twin both run, and fakes of the outside services
(GitHub, Slack). Nothing here fakes a client; it only starts real things and runs them.

A module here is named for what it holds; no test module and no conftest is imported by another
test file: what two test files share lives here (tests/architecture/test_tests_layout.py).
"""

import pkgutil

import pytest

# Shared checks live here: rewrite their asserts as pytest does in test modules, so a failure
# still shows the compared values. Registered before any of them is imported.
pytest.register_assert_rewrite(*(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)))
