"""The SQLite store's files on disk: private to their owner, and the audit key beside the store.

The store file holds every proposal, decision and answer, and the key file the secret that seals
the audit head (`audit.seal`), so both are private (`core.files`: created 0600 whatever the
umask, tightened when this process's user owns them).

The key is 32 random bytes, as hex, in `<store>.key`, written whole before it appears (a
temporary file linked into place), so two processes opening a new store agree on one key. A
missing key is made only for a store whose head was never sealed: a new key for a sealed log
would bless whatever the log says now, so that is refused, naming the file to restore.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from core.errors import Unavailable
from core.files import PRIVATE, tighten

KEY_SUFFIX = ".key"


def key_path(store: Path) -> Path:
    return store.with_name(store.name + KEY_SUFFIX)


def audit_key(store: Path, *, sealed: bool) -> bytes:
    """The store's audit key, made now when the store's head was never sealed."""
    path = key_path(store)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        if sealed:
            raise Unavailable(
                f"the audit key {path} is missing, but the audit log of {store} was sealed "
                f"with it: restore the key from a backup. A new key would vouch for whatever the "
                f"log says now, so none is made; to start over, move {store} aside"
            ) from None
        return _new_key(path) or audit_key(store, sealed=sealed)
    except (OSError, UnicodeDecodeError) as exc:
        raise Unavailable(f"the audit key {path} cannot be read: {exc}") from exc
    tighten(path)
    try:
        return bytes.fromhex(text.strip())
    except ValueError as exc:
        raise Unavailable(
            f"the audit key {path} is not the hex key the store wrote; restore it from a backup"
        ) from exc


def _new_key(path: Path) -> bytes | None:
    """Write a new key to `path`; None when another process wrote one first (read that)."""
    key = secrets.token_bytes(32)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(key.hex() + "\n")
        os.link(draft, path)  # appears whole, or not at all when another key won
    except FileExistsError:
        return None
    finally:
        draft.unlink(missing_ok=True)
    return key
