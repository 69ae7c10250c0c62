"""Files only their owner may read: the policy store, its key, an agent's checkpoints and memory.

`private` creates a file 0600 whatever the umask, or tightens one this process's user owns, with
SQLite's -wal and -shm files (which SQLite creates with the database's own mode). A file someone
else owns is left alone: sharing it was their decision, and changing it is not ours to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE = 0o600


def private(path: Path) -> None:
    """Create `path` empty with mode 0600 when missing; else tighten it when we own it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    except FileExistsError:
        tighten(path)
    else:
        os.close(fd)
    for companion in ("-wal", "-shm"):
        tighten(path.with_name(path.name + companion))


def tighten(path: Path) -> None:
    """Take group and other permissions off `path` when this process's user owns it."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(found.st_mode)
    if found.st_uid == os.getuid() and mode & ~PRIVATE:
        path.chmod(mode & PRIVATE)
