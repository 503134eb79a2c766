"""Migrations on sqlite-utils: every version's schema as before, old archives migrate to a fresh
one's schema, and ``transform`` keeps what sqlite-utils' own would lose."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.migrations import MIGRATIONS, transform, utils_database
from app.core.errors import ArchiveError
from tests.core.archive.schema_shape import (
    SCHEMAS,
    make_old_archive,
    migrate_to,
    schema_shape,
)

OLD_VERSIONS = sorted(int(p.stem.removeprefix("schema_v")) for p in SCHEMAS.glob("schema_v*.sql"))


def test_there_is_a_recorded_schema_for_every_version_before_sqlite_utils() -> None:
    assert list(range(1, len(OLD_VERSIONS) + 1)) == OLD_VERSIONS
    assert len(OLD_VERSIONS) >= 3  # 0001_base, 0002_index, 0003_plan_book


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_each_migration_makes_the_schema_it_made_before(tmp_path: Path, version: int) -> None:
    today = tmp_path / "today.db"
    migrate_to(today, version)
    before = make_old_archive(tmp_path / "before", version)
    assert schema_shape(today) == schema_shape(before)


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_an_archive_made_at_an_old_version_migrates_to_a_fresh_schema(
    tmp_path: Path, version: int
) -> None:
    old = make_old_archive(tmp_path / "old", version)
    with open_archive(tmp_path / "old") as archive:
        assert archive.db.schema_version() == len(MIGRATIONS)
    with open_archive(tmp_path / "fresh", create=True):
        pass
    migrated, fresh = schema_shape(old), schema_shape(tmp_path / "fresh" / "archive.db")
    assert "index_fts" in fresh and fresh["index_fts"]["virtual"]
    assert migrated == fresh


def test_the_shape_sees_a_changed_index(tmp_path: Path) -> None:
    """The comparison above can fail: an index on other columns is another shape."""
    made = make_old_archive(tmp_path / "a", 1)
    before = schema_shape(made)
    conn = sqlite3.connect(made)
    conn.execute("DROP INDEX links_reverse")
    conn.execute("CREATE INDEX links_reverse ON links(to_id, to_section)")
    conn.commit()
    conn.close()
    assert schema_shape(made) != before


def _audit_db(path: Path) -> sqlite3.Connection:
    make_old_archive(path.parent / "t", 1)
    conn = sqlite3.connect(path.parent / "t" / "archive.db", isolation_level=None)
    conn.execute("INSERT INTO audit(at, action, egress) VALUES ('t1', 'create', 'local')")
    conn.execute("INSERT INTO audit(at, action, egress) VALUES ('t2', 'update', 'local')")
    return conn


def test_transform_drops_a_column_and_keeps_the_audit_log_append_only(tmp_path: Path) -> None:
    conn = _audit_db(tmp_path / "x")
    db = utils_database(conn)
    conn.execute("BEGIN IMMEDIATE")
    transform(db, "audit", drop={"egress"})
    conn.execute("COMMIT")
    assert "egress" not in db.table("audit").columns_dict
    assert conn.execute("SELECT id, action FROM audit").fetchall() == [(1, "create"), (2, "update")]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET action = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")
    conn.execute("INSERT INTO audit(at, action) VALUES ('t3', 'delete')")
    assert conn.execute("SELECT max(id) FROM audit").fetchone()[0] == 3  # AUTOINCREMENT kept
    conn.close()


def test_transform_refuses_a_without_rowid_table_and_changes_nothing(tmp_path: Path) -> None:
    conn = _audit_db(tmp_path / "x")
    db = utils_database(conn)
    before = db.table("records").schema
    conn.execute("BEGIN IMMEDIATE")
    with pytest.raises(ArchiveError) as info:
        transform(db, "records", drop={"restricted"})
    conn.execute("ROLLBACK")
    assert info.value.code == "archive.migration_invalid"
    assert db.table("records").schema == before
    conn.close()


def test_wrapping_the_writer_connection_leaves_recursive_triggers_off(tmp_path: Path) -> None:
    conn = _audit_db(tmp_path / "x")
    utils_database(conn)
    assert conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 0
    conn.close()
