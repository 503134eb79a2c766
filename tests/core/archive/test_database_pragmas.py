"""Every writable connection of an archive syncs as WAL allows, the writer's first of all."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.database import WRITER_CACHE_KIB

NORMAL, MEMORY = 1, 2


def settings(conn: sqlite3.Connection) -> tuple[str, int, int]:
    journal = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    return (
        journal,
        conn.execute("PRAGMA synchronous").fetchone()[0],
        conn.execute("PRAGMA temp_store").fetchone()[0],
    )


@pytest.mark.sqlite_only("SQLite pragmas of a folder archive")
def test_the_writer_and_the_readers_sync_normally_in_wal(archive: Archive) -> None:
    assert archive.db.write(settings) == ("wal", NORMAL, MEMORY)
    cache = archive.db.write(lambda conn: conn.execute("PRAGMA cache_size").fetchone()[0])
    assert cache == -WRITER_CACHE_KIB
    with archive.db.reading() as conn:
        assert settings(conn) == ("wal", NORMAL, MEMORY)


def test_an_archive_opened_again_tunes_its_new_connections(tmp_path: Path) -> None:
    open_archive(tmp_path / "a", create=True).close()
    with open_archive(tmp_path / "a") as archive:
        assert archive.db.write(settings) == ("wal", NORMAL, MEMORY)
    with open_archive(tmp_path / "a", read_only=True) as archive, archive.db.reading() as conn:
        assert settings(conn)[0] == "wal"  # read-only: nothing set, nothing written
