"""A throwaway PostgreSQL cluster for tests: ``initdb`` in a temporary directory, a free
loopback port and a socket directory there, stopped and removed at the end.

The server refuses to run as root, so when the tests run as root the cluster belongs to
an unprivileged user (``postgres``, or ``$KESTREL_TEST_PG_USER``) and its commands run
through ``runuser``. When PostgreSQL is not installed, :func:`missing` says what to
install; the fixture in ``tests/conftest.py`` skips on it locally and fails under CI.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.loopback import free_port

__all__ = ["INSTALL", "Cluster", "cluster", "missing"]

INSTALL = "apt-get install postgresql"
_SCHEMAS = itertools.count(1)


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _user() -> pwd.struct_passwd | None:
    """Who runs the server: ourselves unless root, else an unprivileged account."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("KESTREL_TEST_PG_USER", "postgres")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def missing() -> str | None:
    """Why no cluster can be started here (one short line), or ``None``."""
    if _bin("initdb") is None or _bin("pg_ctl") is None:
        return f"initdb not found; Debian: {INSTALL}"
    if os.geteuid() == 0 and _user() is None:
        return "running as root with no unprivileged 'postgres' user to own the cluster"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is missing: uv sync --all-packages"
    return None


@dataclass(frozen=True)
class Cluster:
    """A running cluster: connect with :attr:`dsn` (user ``kestrel``, trust auth).

    :meth:`stop` and :meth:`start` take the server down and bring it back on the same
    port and data (an outage under running clients)."""

    directory: Path
    port: int
    flags: str = ""

    def stop(self) -> None:
        """Stop the server now (``immediate``: clients' connections break)."""
        pg_ctl = _bin("pg_ctl")
        assert pg_ctl is not None
        _run([pg_ctl, "-D", str(self.directory / "data"), "-m", "immediate", "-w", "stop"], _user())

    def start(self) -> None:
        """Start the stopped server again (same port, same data)."""
        pg_ctl = _bin("pg_ctl")
        assert pg_ctl is not None
        data, log = self.directory / "data", self.directory / "server.log"
        _run([pg_ctl, "-D", str(data), "-l", str(log), "-o", self.flags, "-w", "start"], _user())

    @property
    def dsn(self) -> str:
        return f"postgresql://kestrel@127.0.0.1:{self.port}/kestrel"

    def schema(self) -> str:
        """A fresh schema of the ``kestrel`` database; a DSN that uses it (its tables go
        there), so each test starts empty without the cost of a database."""
        import psycopg

        name = f"t{next(_SCHEMAS)}"
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return f"{self.dsn}?options=-csearch_path%3D{name}"

    def database(self, name: str) -> str:
        """Create database ``name`` (fresh) and return its DSN."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://kestrel@127.0.0.1:{self.port}/{name}"


def _run(args: list[str], user: pwd.struct_passwd | None) -> None:
    command = args if user is None else ["runuser", "-u", user.pw_name, "--", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stdout}{done.stderr}")


@contextmanager
def cluster(**settings: str) -> Iterator[Cluster]:
    """Start a cluster (``settings`` become ``-c name=value``); stop and remove it after."""
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    assert initdb is not None
    assert pg_ctl is not None
    user = _user()
    root = Path(tempfile.mkdtemp(prefix="kestrel-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if user is not None:
        for path in (root, sockets):
            os.chown(path, user.pw_uid, user.pw_gid)
    port = free_port()
    options = {
        "listen_addresses": "127.0.0.1",
        "unix_socket_directories": str(sockets),
        "max_connections": "200",
        "fsync": "off",  # a test cluster: the tests kill clients, never the server
        "full_page_writes": "off",
        **settings,
    }
    flags = " ".join([f"-p {port}", *(f"-c {k}={v}" for k, v in options.items())])
    try:
        _run(
            [initdb, "-D", str(data), "-U", "kestrel", "-A", "trust", "--no-sync", "-E", "UTF8"],
            user,
        )
        _run(
            [pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-o", flags, "-w", "start"],
            user,
        )
        try:
            started = Cluster(root, port, flags)
            import psycopg

            with psycopg.connect(
                f"postgresql://kestrel@127.0.0.1:{port}/postgres", autocommit=True
            ) as conn:
                conn.execute("CREATE DATABASE kestrel")
            yield started
        finally:
            if (data / "postmaster.pid").exists():
                _run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], user)
    finally:
        shutil.rmtree(root, ignore_errors=True)
