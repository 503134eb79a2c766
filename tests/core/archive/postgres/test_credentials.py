"""The password of a shared archive in the OS keyring (faked: the OS keyring is an edge these
machines lack), used by every connection to the same URL, against the real server's SCRAM
login; never written to a file, never in a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.archive.postgres import credentials
from app.core.archive.postgres.connect import connect, open_pool
from app.core.errors import ArchiveError
from tests.core.models.keyring_fake import MemoryKeyring, memory_keyring, no_keyring
from tests.postgres_server import PgServer

__all__ = ["memory_keyring", "no_keyring"]
SECRET = "pw-remembered-9"


@pytest.fixture
def ana(pg_server: PgServer, pg_database: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A login role with a password, and its URL to the test's database without it."""
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent/.pgpass")  # no libpq password file either
    name = pg_database.rsplit("/", 1)[1]
    role = f"{name}_ana"
    with pg_server.admin(name) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRET}'")
        conn.execute("CREATE EXTENSION vector")  # the pool's connections check for it
    return pg_server.url(name, user=role) + "?sslmode=disable"


def test_the_account_ignores_options_and_fills_the_default_port() -> None:
    assert credentials.account("postgresql://ana@db.example.org/arxiu?sslmode=verify-full") == (
        "ana@db.example.org:5432/arxiu"
    )
    assert credentials.account("postgresql://ana@db:6543/tate") == "ana@db:6543/tate"
    assert credentials.account("postgresql:///arxiu") is None  # a local socket, no user


def test_a_remembered_password_opens_the_archive(
    ana: str, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    with pytest.raises(ArchiveError) as error:
        connect(ana, vector=False)
    assert error.value.code == "archive.pg_auth_failed"  # no password anywhere: refused
    credentials.store_password(ana, SECRET)
    assert list(memory_keyring.passwords.values()) == [SECRET]
    assert SECRET not in ana
    with connect(ana, vector=False) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (ana.split("//")[1].split("@")[0],)
    pool = open_pool(ana.replace("?sslmode=disable", "?sslmode=prefer"), max_size=2)
    try:
        with pool.connection() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.close()


def test_a_wrong_remembered_password_is_refused_without_saying_it(
    ana: str, memory_keyring: MemoryKeyring
) -> None:
    credentials.store_password(ana, "not-" + SECRET)
    with pytest.raises(ArchiveError) as error:
        connect(ana, vector=False)
    assert error.value.code == "archive.pg_auth_failed"
    assert SECRET not in str(error.value) and "not-" not in str(error.value)
    assert credentials.forget_password(ana) and not credentials.forget_password(ana)


def test_the_url_s_own_password_and_pgpassword_win_over_the_keyring(
    ana: str, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store_password(ana, "stale")
    with_password = ana.replace("_ana@", f"_ana:{SECRET}@")
    connect(with_password, vector=False).close()
    monkeypatch.setenv("PGPASSWORD", SECRET)
    connect(ana, vector=False).close()
    assert credentials.password_for(ana) is None  # libpq's own source is used


@pytest.mark.usefixtures("no_keyring")
def test_without_a_keyring_nothing_is_stored_anywhere(ana: str, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as error:
        credentials.store_password(ana, SECRET)
    assert error.value.code == "archive.keyring_unavailable"
    assert credentials.stored_password(ana) is None
    with pytest.raises(ArchiveError) as refused:
        connect(ana, vector=False)
    assert refused.value.code == "archive.pg_auth_failed"


@pytest.mark.usefixtures("no_keyring")
def test_a_password_for_this_session_only_opens_and_is_kept_nowhere(ana: str) -> None:
    credentials.use_for_session(ana, SECRET)
    try:
        connect(ana, vector=False).close()
        assert credentials.stored_password(ana) is None
    finally:
        credentials._SESSION.clear()
    with pytest.raises(ArchiveError):
        connect(ana, vector=False)
