"""Schema migrations: from empty, from every earlier version, and refusing newer schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.migrations import MIGRATIONS
from app.core.errors import ArchiveError
from tests.core.archive.schema_shape import migrate_to, schema_shape


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return {r[0] for r in rows}
    finally:
        conn.close()


def test_migrates_an_empty_folder_to_the_latest_schema(tmp_path: Path) -> None:
    archive = open_archive(tmp_path / "a", create=True)
    try:
        assert archive.db.schema_version() == len(MIGRATIONS)
    finally:
        archive.close()
    names = tables(tmp_path / "a" / "archive.db")
    assert {"sections", "fields", "records", "links", "media", "audit", "conversations"} <= names
    conn = sqlite3.connect(tmp_path / "a" / "archive.db")
    applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    conn.close()
    assert applied == [m.name for m in MIGRATIONS]


@pytest.mark.parametrize("start", range(len(MIGRATIONS)))
def test_migrates_from_every_earlier_version(tmp_path: Path, start: int) -> None:
    folder = tmp_path / "a"
    folder.mkdir()
    empty = sqlite3.connect(folder / "archive.db")
    empty.execute("VACUUM")  # an empty SQLite database (a zero-byte file is archive.corrupt)
    empty.close()
    migrate_to(folder / "archive.db", start)  # only the first `start`, as an older Arxiu did
    with open_archive(folder) as archive:
        assert archive.db.schema_version() == len(MIGRATIONS)
    open_archive(tmp_path / "fresh", create=True).close()
    assert schema_shape(folder / "archive.db") == schema_shape(tmp_path / "fresh" / "archive.db")


def test_refuses_a_newer_schema_and_touches_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "a"
    open_archive(folder, create=True).close()
    db_file = folder / "archive.db"
    conn = sqlite3.connect(db_file)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    before = db_file.read_bytes()
    with pytest.raises(ArchiveError) as info:
        open_archive(folder)
    assert info.value.code == "archive.schema_newer"
    assert db_file.read_bytes() == before
