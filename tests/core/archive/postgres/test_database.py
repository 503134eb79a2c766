"""The PostgreSQL engine's own pieces: the store's SQL translated for psycopg, rows read by name
and by index, values read back in SQLite's forms, media files kept and fetched."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.postgres.database import to_psycopg


@pytest.mark.parametrize(
    ("store_sql", "psycopg_sql"),
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("UPDATE t SET v = :value WHERE k = :key", "UPDATE t SET v = %(value)s WHERE k = %(key)s"),
        ("SELECT x::text FROM t WHERE y LIKE 'a%'", "SELECT x::text FROM t WHERE y LIKE 'a%%'"),
        ("SELECT 'is it ? or :name' WHERE z = ?", "SELECT 'is it ? or :name' WHERE z = %s"),
        ('SELECT "we?ird" FROM t WHERE n % 2 = ?', 'SELECT "we?ird" FROM t WHERE n %% 2 = %s'),
        ("SELECT 'it''s' || ?", "SELECT 'it''s' || %s"),
    ],
)
def test_placeholders_become_psycopgs_and_quoted_text_stays(
    store_sql: str, psycopg_sql: str
) -> None:
    assert to_psycopg(store_sql) == psycopg_sql


@pytest.mark.postgresql_only("the PostgreSQL engine's row and value forms")
def test_rows_read_by_name_and_index_with_sqlites_forms(archive: Archive) -> None:
    with archive.db.reading() as conn:
        row = conn.execute(
            "SELECT 'a%' AS pct, CAST('{\"b\": [1, 2]}' AS jsonb) AS doc, "
            "CAST('2026-12-02 21:07:47+00' AS timestamptz) AS at, TRUE AS flag "
            "WHERE ? = ?",
            (1, 1),
        ).fetchone()
    assert row is not None
    assert row["pct"] == row[0] == "a%"
    assert row["doc"] == '{"b": [1, 2]}'  # JSON text, as SQLite stores it
    assert row["at"] == "2026-12-02T21:07:47+00:00"  # ISO 8601, as the store writes it
    assert row["flag"] is True
    assert dict(row) == {"pct": "a%", "doc": row["doc"], "at": row["at"], "flag": True}


@pytest.mark.postgresql_only("a shared archive's media live in the server")
def test_a_media_file_kept_in_the_server_is_fetched_by_another_workstation(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = bytes(range(256)) * 4099  # not a multiple of anything
    source = tmp_path / "scan.bin"
    source.write_bytes(payload)
    archive.db.write(lambda conn: archive.db.keep_file(conn, "ab/scan.bin", source))
    archive.db.write(lambda conn: archive.db.keep_file(conn, "ab/scan.bin", source))  # once
    monkeypatch.setenv("ARXIU_HOME", str(tmp_path / "elsewhere"))  # another cache folder
    with open_archive(archive.location) as elsewhere:
        assert not (elsewhere.media_dir / "ab/scan.bin").exists()
        assert elsewhere.media_path("ab/scan.bin").read_bytes() == payload
        assert not elsewhere.db.fetch_file("no/such.bin", tmp_path / "none")
    with archive.db.reading() as conn:
        assert conn.execute("SELECT count(*) FROM media_files").fetchone()[0] == 1
