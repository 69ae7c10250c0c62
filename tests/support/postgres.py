"""A real PostgreSQL server for the tests of the crew's shared state, one per test process.

    @pytest.fixture
    def url(request: pytest.FixtureRequest) -> str:
        return fresh_database(request.config)  # postgresql://postgres@127.0.0.1:PORT/t_...

The server starts on the first test that asks for a database and stops when the session ends
(`config.add_cleanup`), so a run pays for it once (about a second: `initdb` with trust auth and
no fsync, then `pg_ctl -w start` on a free loopback port); each test gets a database of its
own, created empty. Its data directory is a fresh folder under the system's temporary one.

PostgreSQL refuses to run as root, and CI runs the tests as root: then the server runs as the
`postgres` system user (Debian's package creates it) through `runuser`, in a folder it owns.
Without PostgreSQL the tests that need it skip, unless `$CI` is set: CI must run them, so there
they fail, saying what to install. `make install` installs it (scripts/install-system-deps.sh).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

SUPERUSER = "postgres"
SYSTEM_USER = "postgres"  # who runs the server when the tests run as root
_KEY = pytest.StashKey["Postgres"]()


class PostgresError(AssertionError):
    """PostgreSQL did not start or answer as the tests need; the message carries its log."""


@dataclass
class Postgres:
    bin: Path  # the folder of initdb, pg_ctl and postgres
    workdir: Path
    port: int
    as_user: tuple[str, ...]  # the command prefix that runs a tool as the server's owner

    @property
    def data(self) -> Path:
        return self.workdir / "data"

    def url(self, database: str = "postgres", *, user: str = SUPERUSER, password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", "--no-instructions")  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        log = self.workdir / "server.log"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(log), "-o", options, "-w", "-t", "60",
                  "start")  # fmt: skip

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [*self.as_user, str(self.bin / tool), *args],
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        if done.returncode != 0:
            log = self.workdir / "server.log"
            said = log.read_text() if log.is_file() else ""
            raise PostgresError(f"{tool} {' '.join(args)} exited {done.returncode}:\n"
                                f"{done.stdout}{done.stderr}{said}")  # fmt: skip


def fresh_database(config: pytest.Config) -> str:
    """The URL of a new database on this test process's server, started on first use."""
    server = config.stash.get(_KEY, None)
    if server is None:
        server = _started()
        config.stash[_KEY] = server
        config.add_cleanup(server.stop)
    return server.database()


def postgres_bin() -> Path | None:
    """The folder of `initdb`: on PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("initdb")
    if found is not None:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(versions[-1]).parent if versions else None


def _started() -> Postgres:
    bin = postgres_bin()
    if bin is None:
        missing = "no PostgreSQL here (no initdb): run `make install` (installs it)"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    workdir = Path(tempfile.mkdtemp(prefix="kubecrew-postgres-"))
    as_user: tuple[str, ...] = ()
    if os.geteuid() == 0:  # PostgreSQL will not run as root
        try:
            owner = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            shutil.rmtree(workdir)
            pytest.fail(
                f"the tests run as root and there is no `{SYSTEM_USER}` user to run PostgreSQL "
                "as: install Debian's postgresql package (`make install`)"
            )
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
        as_user = ("runuser", "-u", SYSTEM_USER, "--")
    server = Postgres(bin, workdir, _free_port(), as_user)
    try:
        server.start()
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return server


def _version(initdb: str) -> tuple[int, ...]:
    number = Path(initdb).parent.parent.name
    return tuple(int(part) for part in number.split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
