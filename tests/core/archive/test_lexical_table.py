"""A folder archive's full-text table holds the chunks' lexemes, in step with the chunks, and
is filled again when the lexemes change."""

from __future__ import annotations

import sqlite3

import pytest

from app.core.archive import Archive, lexical_table

pytestmark = pytest.mark.sqlite_only("the FTS5 table of a folder archive")

CHUNK = (
    "INSERT INTO index_chunks(id, section_tipo, section_id, field_tipo, lang, position, label, "
    "text, content_hash) VALUES (?, 'oh1', ?, 'oh2', ?, 0, ?, ?, ?)"
)


def matching(archive: Archive, expression: str) -> list[int]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT rowid FROM index_fts WHERE index_fts MATCH ? ORDER BY rowid", (expression,)
        ).fetchall()
    return [int(r[0]) for r in rows]


def add_chunks(archive: Archive) -> None:
    def write(conn: sqlite3.Connection) -> None:
        conn.execute(CHUNK, (1, 1, "lg-cat", "Entrevista", "Les famílies desallotjades", "h1"))
        conn.execute(CHUNK, (2, 2, "lg-eng", "Interview", "The families who left", "h2"))

    archive.sqlite.write(write)


def test_chunks_enter_and_leave_the_table_as_their_lexemes(archive: Archive) -> None:
    add_chunks(archive)
    assert matching(archive, '"famil"') == [1]  # Catalan: famílies → famil
    assert matching(archive, '"famili"') == [2]  # English: families → famili
    assert matching(archive, '"families"') == []  # the words themselves are not in it
    archive.db.write(lambda c: c.execute("DELETE FROM index_chunks WHERE id = 1"))
    assert matching(archive, '"famil"') == []
    archive.db.write(
        lambda c: c.execute("INSERT INTO index_fts(index_fts) VALUES ('integrity-check')")
    )


def test_another_version_of_the_lexemes_is_replaced_on_the_next_writable_open(
    archive: Archive,
) -> None:
    add_chunks(archive)

    def made_by_another_version(conn: sqlite3.Connection) -> None:
        lexical_table.empty(conn)
        conn.execute(f"UPDATE {lexical_table.VERSION_TABLE} SET version = '0 another stemmer'")

    archive.sqlite.write(made_by_another_version)
    assert matching(archive, '"famil"') == []
    assert archive.sqlite.write(lexical_table.is_current) is False
    assert "lexemes" in archive.sqlite.migrate()
    assert matching(archive, '"famil"') == [1] and matching(archive, '"famili"') == [2]
    assert "lexemes" not in archive.sqlite.migrate()
