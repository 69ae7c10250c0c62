"""Waiting for a living sandbox to reach a state, without asserting on how long it took.

The sandbox's control plane runs on its own (accelerated) clock in the server's thread; tests
poll what a client can see until it holds, and fail with the last thing they saw.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(check: Callable[[], T], *, timeout: float = 60, what: str = "") -> T:
    """Call `check` until it returns something truthy (and return that) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            result = check()
        except AssertionError as exc:
            last = exc
        else:
            if result:
                return result
            last = result
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout} s: {what}; last seen: {last!r}")
        time.sleep(0.2)
