"""What the results by record read of an archive's index, on either engine: records whose chunk
labels hold a query's words, each record's languages, a record's chunks.

:class:`SqliteRecordReads` reads a folder's (FTS5 over the ``label`` column);
:func:`app.core.index.record_reading.record_reads` lends the reads of an open archive, either
engine's, for a ``with`` block.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Protocol

from app.core.archive import lexemes
from app.core.archive.model import RecordKey
from app.core.index import lexical, ranking
from app.core.index.hits import SearchFilter
from app.core.index.storage import ChunkRow

LOOKUP_LIMIT = 200
"""Chunks read by the label lookup (a title shared by more records than this is no name)."""
WORD = re.compile(r"\w+", re.UNICODE)
"""A word of a query, for the label lookup."""


class RecordReads(Protocol):
    """What the results by record read of the index, on one connection."""

    def label_candidates(self, query: str, flt: SearchFilter) -> list[RecordKey]:
        """Records with a chunk label holding every word of ``query``, under ``flt`` (at most
        :data:`LOOKUP_LIMIT` chunks read)."""
        ...

    def languages(self, keys: list[RecordKey]) -> dict[RecordKey, frozenset[str]]:
        """Each record's original languages, by the amount of indexed text in each."""
        ...

    def chunks_of(self, key: RecordKey) -> list[ChunkRow]:
        """Every chunk of ``key``, in the record's order."""
        ...


class SqliteRecordReads:
    """:class:`RecordReads` of a folder archive's index (FTS5)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def label_candidates(self, query: str, flt: SearchFilter) -> list[RecordKey]:
        """Records with a chunk label holding every word of ``query`` as a whole word of the
        accent-folded label, under ``flt``: the chunks found first in FTS5's ``label`` column
        (every word's lexemes), then their labels read, as a shared archive does."""
        words = lexemes.words(query)
        if not words:
            return []
        every = " AND ".join(f"({lexical.any_lexeme(w)})" for w in words)
        where = lexical.SqlFilter(
            flt.sections,
            tuple((r.section_tipo, r.section_id) for r in flt.records),
            flt.exclude_restricted,
        )
        clause, args = where.clause()
        rows = self.conn.execute(
            "SELECT c.section_tipo, c.section_id, c.label FROM index_fts "
            "JOIN index_chunks c ON c.id = index_fts.rowid "
            f"WHERE index_fts MATCH ?{clause} LIMIT ?",
            [f"label : ({every})", *args, LOOKUP_LIMIT],
        ).fetchall()
        found: dict[RecordKey, None] = {}
        for tipo, sid, label in rows:
            if set(words) <= set(lexemes.words(str(label or ""))):
                found[RecordKey(str(tipo), int(sid))] = None
        return list(found)

    def languages(self, keys: list[RecordKey]) -> dict[RecordKey, frozenset[str]]:
        """As :func:`app.core.index.ranking.record_languages`."""
        return ranking.record_languages(self.conn, keys)

    def chunks_of(self, key: RecordKey) -> list[ChunkRow]:
        """Every chunk of ``key``, in the record's order."""
        rows = self.conn.execute(
            "SELECT id, field_tipo, lang, label, text, timecode, page FROM index_chunks "
            "WHERE section_tipo = ? AND section_id = ? ORDER BY id",
            (key.section_tipo, key.section_id),
        ).fetchall()
        return [ChunkRow(r[0], key, r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]
