"""Fixtures for the kubectl suite."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.background import Background
from tests.support.kubectl import Kubectl


@pytest.fixture
def background(shared_kubectl: Kubectl) -> Iterator[Callable[..., Background]]:
    """Starts kubectl commands in the background; stops whichever still run after the test."""
    started: list[Background] = []

    def start(*args: str) -> Background:
        started.append(Background(shared_kubectl, *args))
        return started[-1]

    yield start
    for process in started:
        process.close()
