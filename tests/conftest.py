"""Shared fixtures: offline hubs, a private ARXIU_HOME, fresh and demo archives; and the checks
every test gets: a WARNING (or worse) log record it did not declare fails it, and a connection
to anything but this machine's loopback (or a unix socket) raises :class:`NetworkBlocked`."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.archive import Archive, open_archive
from tests import postgres_server

pg_server = postgres_server.pg_server
pg_database = postgres_server.pg_database
"""The PostgreSQL server of the tests (tests/postgres_server.py), one per session."""

ENGINES = ("sqlite", "postgresql")
"""The engines the ``archive`` fixture runs each of its tests on (``sqlite_only`` for one)."""

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared dataset not available: {path}")
    return path


EXPECTED_LOGS: tuple[tuple[str, str], ...] = ()
"""(logger name prefix, message part) of WARNING records allowed in every test, each with its
reason; a test declares what it alone expects with ``@pytest.mark.allow_log``."""


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``allow_log`` and ``sqlite_only`` markers."""
    config.addinivalue_line(
        "markers",
        "postgresql_only(why): the ``archive`` fixture gives this test a shared archive only "
        "(it tests what only a server has: many people at once)",
    )
    config.addinivalue_line(
        "markers",
        "sqlite_only(why): the ``archive`` fixture gives this test a SQLite archive only (it "
        "tests what only a folder archive has), not one on each engine",
    )
    config.addinivalue_line(
        "markers",
        "allow_log(logger, message=''): a WARNING-or-worse record this test expects, from "
        "`logger` (or a logger under it) whose message contains `message`",
    )


def _allowed(record: logging.LogRecord, allowances: list[tuple[str, str]]) -> bool:
    message = record.getMessage()
    return any(
        (record.name == name or record.name.startswith(name + ".")) and part in message
        for name, part in allowances
    )


@pytest.fixture(autouse=True)
def english_unless_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test speaks English unless it chooses a language (``ARXIU_LANG``, or removes it to
    test the settings and the system's): on a developer's machine with ``LANG=ca_ES.UTF-8``
    the CLI and the window would otherwise answer the English tests in Catalan."""
    monkeypatch.setenv("ARXIU_LANG", "en")


@pytest.fixture(autouse=True)
def no_unexpected_warnings(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """Fail a test on a WARNING (or worse) log record it did not declare: bugs are visible."""
    yield
    allowances = list(EXPECTED_LOGS)
    for marker in request.node.iter_markers("allow_log"):
        allowances += [(name, str(marker.kwargs.get("message", ""))) for name in marker.args]
    records = [*caplog.get_records("setup"), *caplog.get_records("call")]
    bad = [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.WARNING and not _allowed(r, allowances)
    ]
    assert not bad, f"unexpected log records (fix them, or mark the test allow_log): {bad}"


class NetworkBlocked(RuntimeError):
    """A test tried to connect to an address off this machine (see :func:`loopback_only`).

    Not an ``OSError``: code that handles a refused connection must not turn the guard's
    refusal into an ordinary "server unreachable" path and pass."""


LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(family: int, address: Any) -> bool:
    """Whether a ``connect`` to ``address`` (of socket ``family``) stays on this machine: a
    unix socket, ``localhost``, or a loopback IP (127.0.0.0/8, ``::1``, ``::ffff:127.0.0.1``)."""
    if family == getattr(socket, "AF_UNIX", None) or isinstance(address, str | bytes):
        return True  # a unix socket's address is a path
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0].decode() if isinstance(address[0], bytes) else str(address[0])
    host = host.strip("[]").split("%")[0]  # "[::1]", "fe80::1%eth0"
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False  # a host name: never resolved here, never allowed
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _refuse(address: Any) -> NetworkBlocked:
    return NetworkBlocked(
        f"tests may not connect to {address!r}: only loopback (127.0.0.1, ::1, localhost) and "
        "unix sockets are allowed (the loopback_only guard in tests/conftest.py)"
    )


@pytest.fixture(autouse=True, scope="session")
def loopback_only() -> Iterator[None]:
    """Every test, and every fixture, may connect only to this machine: ``socket.connect``,
    ``connect_ex`` and ``socket.create_connection`` (hence asyncio, httpx, urllib) raise
    :class:`NetworkBlocked` for any other address, before any packet or DNS lookup. Servers
    on loopback (the API's, llama.cpp's, a local PostgreSQL) stay reachable. Child processes
    a test starts are not covered."""
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    create_connection = socket.create_connection

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if not is_loopback(self.family, address):
            raise _refuse(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if not is_loopback(self.family, address):
            raise _refuse(address)
        return connect_ex(self, address)

    def guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        if not is_loopback(socket.AF_INET, address):
            raise _refuse(address)
        return create_connection(address, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        patch.setattr(socket, "create_connection", guarded_create_connection)
        yield


@pytest.fixture(autouse=True)
def arxiu_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty ARXIU_HOME (settings, catalog, default archive)."""
    home = tmp_path_factory.mktemp("arxiu-home")
    monkeypatch.setenv("ARXIU_HOME", str(home))
    return home


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that takes the ``archive`` fixture on each engine (``[sqlite]``,
    ``[postgresql]`` in its id), unless it is marked ``sqlite_only`` or ``postgresql_only``."""
    if "archive_engine" in metafunc.fixturenames:  # the ``archive`` below, not a test's own
        if metafunc.definition.get_closest_marker("sqlite_only"):
            engines = ENGINES[:1]
        elif metafunc.definition.get_closest_marker("postgresql_only"):
            engines = ENGINES[1:]
        else:
            engines = ENGINES
        metafunc.parametrize("archive_engine", engines, indirect=True)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Count the engine-parametrised tests per engine (``[sqlite]`` / ``[postgresql]`` ids)."""
    counts: dict[str, dict[str, int]] = {engine: {} for engine in ENGINES}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            for engine in ENGINES:
                if f"[{engine}" in nodeid or f"-{engine}]" in nodeid or f"-{engine}-" in nodeid:
                    counts[engine][outcome] = counts[engine].get(outcome, 0) + 1
    if any(counts.values()):
        for engine, by_outcome in counts.items():
            shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(by_outcome.items()))
            terminalreporter.write_line(f"archive engine {engine}: {shown or 'none'}")


@pytest.fixture
def archive_engine(request: pytest.FixtureRequest) -> str:
    """The engine of the ``archive`` fixture (parametrised by :func:`pytest_generate_tests`)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def archive(
    tmp_path: Path, archive_engine: str, request: pytest.FixtureRequest
) -> Iterator[Archive]:
    """A fresh, empty archive: a folder (SQLite), or a fresh database on the tests'
    PostgreSQL server."""
    if archive_engine == "postgresql":
        location = str(request.getfixturevalue("pg_database"))
    else:
        location = str(tmp_path / "archive")
    arch = open_archive(location, create=True)
    yield arch
    arch.close()


@pytest.fixture(scope="session")
def demo_archive_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo archive built once per test session; copy it (or open it read-only) to use it."""
    from app.core.archive.demo import create_demo_archive

    folder = tmp_path_factory.mktemp("demo-archive") / "archive"
    create_demo_archive(folder).close()
    return folder
