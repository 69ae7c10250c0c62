"""A container's writable layer: the files its processes write, over the ones it cannot change.

A real container writes into an overlay on top of its image; the sandbox keeps that overlay in
memory, per container start, so `kubectl cp` into a pod, `echo x > /tmp/f` in one exec and
`cat /tmp/f` in the next see the same file. A layer belongs to one start of one container:
`Layers` keys it by pod uid, container name and restart count, so a restarted container or a
recreated pod starts clean, as it would from its image; the kubelet drops a pod's layers when
it forgets the pod.

It is bounded (`MAX_BYTES` of content and `MAX_FILES` files per container), as a node's disk
is: a write past either limit raises `LayerFull`, which the tools turn into BusyBox's `No space
left on device` and a non-zero exit. Contents are `str` as everywhere in the exec tools; bytes
that are not UTF-8 travel as surrogate escapes (`encode`/`decode` here), so a binary file
copied in comes back out byte for byte. Nothing here touches the host's disk.
"""

from __future__ import annotations

import posixpath

MAX_BYTES = 8 * 1024 * 1024
MAX_FILES = 1000
Identity = tuple[str, str, int]  # pod uid, container name, restart count


class LayerFull(Exception):
    """A write would take the layer past its size or file-count limit (ENOSPC)."""


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


class WritableLayer:
    """Files and directories one container start has written, by absolute normalized path."""

    def __init__(self, *, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES) -> None:
        self.files: dict[str, str] = {}
        self.directories: set[str] = set()
        self.max_bytes = max_bytes
        self.max_files = max_files
        self._sizes: dict[str, int] = {}

    @property
    def used(self) -> int:
        return sum(self._sizes.values())

    def write(self, path: str, text: str, *, append: bool = False) -> None:
        """Create, replace or extend the file at `path`; its directories come with it."""
        path = posixpath.normpath(path)
        if append:
            text = self.files.get(path, "") + text
        size = len(encode(text))
        if path not in self.files and len(self.files) >= self.max_files:
            raise LayerFull(path)
        if self.used - self._sizes.get(path, 0) + size > self.max_bytes:
            raise LayerFull(path)
        self.files[path] = text
        self._sizes[path] = size
        self.make_directory(posixpath.dirname(path))

    def make_directory(self, path: str) -> None:
        path = posixpath.normpath(path)
        while path != "/" and path not in self.directories:
            self.directories.add(path)
            path = posixpath.dirname(path)


class Layers:
    """The writable layers of the containers a kubelet runs, one per container start."""

    def __init__(self) -> None:
        self._layers: dict[Identity, WritableLayer] = {}

    def of(self, uid: str, container: str, restarts: int) -> WritableLayer:
        """The layer of this start; an earlier start's layer of the same container is gone."""
        for stale in [k for k in self._layers if k[:2] == (uid, container) and k[2] != restarts]:
            del self._layers[stale]
        return self._layers.setdefault((uid, container, restarts), WritableLayer())

    def forget(self, uid: str) -> None:
        """Drop every layer of the pod with this uid (it was deleted or replaced)."""
        for gone in [k for k in self._layers if k[0] == uid]:
            del self._layers[gone]
