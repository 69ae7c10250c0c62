"""Placeholder: application profiles (to be written)."""

from __future__ import annotations


class ProfileBook:
    pass
