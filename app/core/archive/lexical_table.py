"""A folder archive's full-text table: the chunks' lexemes in FTS5, kept in step by triggers.

``index_fts`` is a contentless FTS5 table (``content=''``): its rowid is the chunk's id, its
``label`` and ``text`` columns the chunk's lexemes (:func:`app.core.archive.lexemes.
chunk_lexemes`: folded, stemmed in the chunk's language), made by the SQL function
``arxiu_lexemes(text, lang)`` that every connection of the archive registers
(:func:`register`). The triggers give a new chunk's lexemes to the table and take a deleted
chunk's away (FTS5's ``'delete'`` command, with the same lexemes made again). When the lexemes
change (another stemmer version), the table is filled again on the next writable open
(:func:`ensure_current`), so a delete never names lexemes the table did not get; the version
the table holds is the one row of ``index_fts_lexemes`` (named like FTS5's own tables, so a
copy between engines leaves it, as it leaves them).
"""

from __future__ import annotations

import sqlite3

from app.core.archive.lexemes import LEXEMES_VERSION, chunk_lexemes

FUNCTION = "arxiu_lexemes"
VERSION_TABLE = "index_fts_lexemes"

_TABLE = """
CREATE VIRTUAL TABLE index_fts USING fts5(
    label, text, content='', tokenize="unicode61 remove_diacritics 2"
);
CREATE TRIGGER index_chunks_ai AFTER INSERT ON index_chunks BEGIN
    INSERT INTO index_fts(rowid, label, text)
    VALUES (new.id, arxiu_lexemes(new.label, new.lang), arxiu_lexemes(new.text, new.lang)); END;
CREATE TRIGGER index_chunks_ad AFTER DELETE ON index_chunks BEGIN
    INSERT INTO index_fts(index_fts, rowid, label, text)
    VALUES ('delete', old.id, arxiu_lexemes(old.label, old.lang),
            arxiu_lexemes(old.text, old.lang)); END
"""
"""The table and its triggers. Chunks are only inserted and deleted, never updated."""


def register(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``arxiu_lexemes`` function the triggers call."""
    conn.create_function(FUNCTION, 2, chunk_lexemes, deterministic=True)


def recreate(conn: sqlite3.Connection) -> None:
    """Replace the full-text table (and its triggers) with the lexemes' one and fill it."""
    for trigger in ("index_chunks_ai", "index_chunks_ad", "index_chunks_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE IF EXISTS index_fts")
    for statement in _TABLE.split(";\n"):
        conn.execute(statement.strip())
    conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version TEXT NOT NULL)")
    fill(conn)
    _mark(conn)


def fill(conn: sqlite3.Connection, after_id: int = 0) -> int:
    """Give the table the lexemes of the chunks whose id is above ``after_id``; returns how
    many chunks."""
    cursor = conn.execute(
        "INSERT INTO index_fts(rowid, label, text) SELECT id, arxiu_lexemes(label, lang), "
        "arxiu_lexemes(text, lang) FROM index_chunks WHERE id > ? ORDER BY id",
        (after_id,),
    )
    return cursor.rowcount


def empty(conn: sqlite3.Connection) -> None:
    """Take every chunk out of the table (the chunks themselves stay)."""
    conn.execute("INSERT INTO index_fts(index_fts) VALUES ('delete-all')")


def is_current(conn: sqlite3.Connection) -> bool:
    """Whether the table holds this version's lexemes (``True`` too for a schema from before
    the lexemes: its migration makes the table)."""
    made = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VERSION_TABLE,)
    ).fetchone()
    if made is None:
        return True
    row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
    return row is not None and str(row[0]) == LEXEMES_VERSION


def ensure_current(conn: sqlite3.Connection) -> bool:
    """Fill the table again when it holds another version's lexemes; ``True`` when it did."""
    if is_current(conn):
        return False
    empty(conn)
    fill(conn)
    _mark(conn)
    return True


def _mark(conn: sqlite3.Connection) -> None:
    conn.execute(f"DELETE FROM {VERSION_TABLE}")
    conn.execute(f"INSERT INTO {VERSION_TABLE}(version) VALUES (?)", (LEXEMES_VERSION,))
