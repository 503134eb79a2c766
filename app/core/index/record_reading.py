"""Which index reads an open archive gets: :class:`~app.core.index.record_reads.SqliteRecordReads`
for a folder, :class:`~app.core.index.postgres.record_reads.PgRecordReads` for a shared archive
(:func:`~app.core.index.record_hits.search_records` and
:func:`~app.core.index.exact_names.exact_names` read through it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.core.archive.store import Archive
from app.core.index.record_reads import RecordReads, SqliteRecordReads


@contextmanager
def record_reads(archive: Archive) -> Iterator[RecordReads]:
    """The index reads of ``archive`` for a ``with`` block (a folder's SQLite, a shared
    archive's server). The archive's own reads inside the block share its connection."""
    if archive.shared:
        from app.core.index.postgres.reading import raw_reading
        from app.core.index.postgres.record_reads import PgRecordReads

        with raw_reading(archive) as conn:
            yield PgRecordReads(conn)
        return
    with archive.sqlite.reading() as sqlite_conn:
        yield SqliteRecordReads(sqlite_conn)
