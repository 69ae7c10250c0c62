"""Placeholder (to be written)."""

from __future__ import annotations

from sandbox.control.runtime import Controller

CONTROLLERS: tuple[type[Controller], ...] = ()
