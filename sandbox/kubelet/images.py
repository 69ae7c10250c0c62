"""Placeholder: the image registry catalog (to be written)."""

from __future__ import annotations


class ImageCatalog:
    @classmethod
    def default(cls) -> ImageCatalog:
        return cls()
