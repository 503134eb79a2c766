"""What the results by record read of an archive's index, on either engine: records whose chunk
labels hold a query's words, each record's languages, a record's chunks.

:func:`record_reads` lends the reads of an open archive for a ``with`` block: SQLite's (FTS5
over the ``label`` column) for a folder, the server's
(:class:`~app.core.index.postgres.records.PgRecordReads`: the ``tsvector`` and the folded
label) for a shared archive. :func:`~app.core.index.record_hits.search_records` and
:func:`~app.core.index.exact_names.exact_names` read through it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from app.core.archive.model import RecordKey
from app.core.archive.store import Archive
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
        """Records with a chunk label holding every word of ``query`` (FTS5's ``label``
        column), under ``flt``."""
        words = WORD.findall(query.lower())
        if not words:
            return []
        quoted = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
        where = lexical.SqlFilter(
            flt.sections,
            tuple((r.section_tipo, r.section_id) for r in flt.records),
            flt.exclude_restricted,
        )
        clause, args = where.clause()
        rows = self.conn.execute(
            "SELECT DISTINCT c.section_tipo, c.section_id FROM index_fts "
            "JOIN index_chunks c ON c.id = index_fts.rowid "
            f"WHERE index_fts MATCH ?{clause} LIMIT ?",
            [f"label : ({quoted})", *args, LOOKUP_LIMIT],
        ).fetchall()
        return [RecordKey(str(r[0]), int(r[1])) for r in rows]

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


@contextmanager
def record_reads(archive: Archive) -> Iterator[RecordReads]:
    """The index reads of ``archive`` for a ``with`` block (a folder's SQLite, a shared
    archive's server). The archive's own reads inside the block share its connection."""
    if archive.shared:
        from app.core.index.postgres.reading import raw_reading
        from app.core.index.postgres.records import PgRecordReads

        with raw_reading(archive) as conn:
            yield PgRecordReads(conn)
        return
    with archive.sqlite.reading() as sqlite_conn:
        yield SqliteRecordReads(sqlite_conn)
