"""Chunking records as an import writes them: in the import's own transactions, from memory.

:func:`chunking_imports` adds a batch hook to the archive
(:meth:`~app.core.archive.bulk.BulkWriter.batch_hook`) for the length of an import: each bulk
upsert then chunks the records it created or changed from the values it has just written
(nothing is read back and parsed again) and writes their chunks, and their FTS5 rows, in the
same transaction as the records. A killed import therefore leaves every committed record
chunked and searchable already.

What the hook does not see (a batch written record by record after a bad record, a record
written outside a bulk upsert) is still pending afterwards, in ``index_records`` terms, and
:func:`~app.core.index.indexer.sync_chunks` after the import chunks it as before.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.core.archive.bulk_plan import Written
from app.core.archive.engine import Connection
from app.core.archive.model import Record
from app.core.archive.store import Archive
from app.core.index import storage
from app.core.index.chunk_context import (
    DbSql,
    archive_trails,
    chunk_with_trails,
    mark_changed,
    records_reader,
)
from app.core.index.indexer import chunks_written
from app.core.index.section_shapes import SectionShapes
from app.core.index.storage import RecordWork

FTS_AT_ONCE = 2000
"""A batch of at least this many records enters FTS5 in one statement
(``storage.write_records(fts_at_once=True)``). Measured by writing the rows of the whole Tate
import again in its 5,000-record batches: 3.46 s CPU through the trigger, 3.16 s in one
statement; the EAD sets' 500-record batches gained nothing (1.81-1.83 s CPU for the import
against 1.73-1.77 s), so smaller batches keep the trigger."""


@contextlib.contextmanager
def chunking_imports(archive: Archive) -> Iterator[None]:
    """Chunk every record that bulk upserts inside the ``with`` create or change, in their
    transactions (the chunk listeners are told once each batch has committed)."""
    if archive.shared:  # chunked in its server after the import (sync_chunks), as workers do
        yield
        return
    with archive.batch_hook(ChunkHook(archive)):
        yield


@dataclass(frozen=True)
class ChunkHook:
    """The batch hook of :func:`chunking_imports` (equal for one archive: two imports at once
    into it chunk each batch once)."""

    archive: Archive

    def __call__(self, conn: Connection, batch: list[Written]) -> Callable[[], None]:
        """Chunk ``batch`` and write its chunks on ``conn`` (the batch's transaction: a
        SQLite one, the hook being installed on folder archives only)."""
        assert isinstance(conn, sqlite3.Connection)
        shapes = SectionShapes(self.archive)  # read per batch: an import may add fields
        records = [
            Record(i.key.section_tipo, i.key.section_id, i.values, i.version, i.restricted)
            for i in batch
        ]
        cut = chunk_with_trails(records, shapes, archive_trails(shapes, records_reader(conn)))
        work = [
            RecordWork(item.key, item.version, item.restricted, chunks)
            for item, chunks in zip(batch, cut, strict=True)
        ]
        mark_changed(DbSql(conn), shapes.hierarchy, work)
        result = storage.write_records(conn, work, [], fts_at_once=len(work) >= FTS_AT_ONCE)
        return lambda: chunks_written(self.archive, result)
