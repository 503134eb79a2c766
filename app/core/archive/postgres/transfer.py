"""``arxiu archive copy SRC DST``: an archive from SQLite to PostgreSQL or back, resumably.

Every table that holds data (:data:`~.tables.TABLES`, the media files included) is copied in
key order, in batches; each batch goes into the destination together with the copy's progress
(the table ``archive_copy`` there: the source's identity, the last key copied, whether the
table is done) in one transaction. A copy that is killed and run again continues after the
last batch it committed, so it neither loses nor doubles a row. A destination that holds data
and is not a copy of the same source in progress is refused, as is a source table the copy
does not know (it would be lost).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from app.core.archive.postgres.canonical import Neutral
from app.core.archive.postgres.connect import is_postgres_url
from app.core.archive.postgres.tables import MEDIA_FILES, TABLES, Table
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

Row = tuple[Neutral, ...]
BATCH_ROWS = 2000
BatchHook = Callable[[str, int], None]
"""Called after each committed batch with the table and the rows copied of it so far."""


class Side(Protocol):
    """One end of a copy (:class:`~.sqlite_side.SqliteSide`, :class:`~.pg_side.PgSide`)."""

    location: str

    def close(self) -> None: ...
    def check_tables(self) -> None: ...
    def identity(self) -> str: ...
    def rows(self, table: Table, after: Sequence[object] | None, limit: int) -> list[Row]: ...
    def file_parts(self, path: str) -> Iterator[bytes]: ...
    def row_count(self, table: Table) -> int: ...
    def progress(self) -> dict[str, tuple[str, list[object] | None, int, bool]]: ...
    def holds_data(self) -> bool: ...
    def start(self, source: str) -> None: ...
    def write_batch(
        self, table: Table, rows: list[Row], last_key: list[object] | None, finished: bool
    ) -> None: ...
    def write_file(self, row: Row, parts: Iterator[bytes]) -> None: ...
    def finish(self) -> None: ...


@dataclass
class CopyReport:
    """What a copy did: rows per table (this run and in all), and whether it resumed."""

    source: str
    destination: str
    resumed: bool
    copied: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)


def open_source(location: str) -> Side:
    """The archive at ``location`` (a folder or a ``postgresql://`` URL) to read."""
    if is_postgres_url(location):
        from app.core.archive.postgres.pg_side import PgSide

        return PgSide.open_source(location)
    from app.core.archive.postgres.sqlite_side import SqliteSide

    return SqliteSide.open_source(Path(location))


def open_destination(location: str) -> Side:
    """The archive at ``location`` to write (made when missing)."""
    if is_postgres_url(location):
        from app.core.archive.postgres.pg_side import PgSide

        return PgSide.open_destination(location)
    from app.core.archive.postgres.sqlite_side import SqliteSide

    return SqliteSide.open_destination(Path(location))


def copy_archive(
    source: str,
    destination: str,
    *,
    batch_rows: int = BATCH_ROWS,
    on_batch: BatchHook | None = None,
) -> CopyReport:
    """Copy the archive at ``source`` into ``destination`` (one of them a PostgreSQL URL).

    Raises:
        ArchiveError: ``archive.copy_same_engine`` (two folders or two URLs),
            ``archive.copy_destination_not_empty``, ``archive.copy_unknown_table``,
            ``archive.copy_bad_value``, and the errors of opening either end.
    """
    if is_postgres_url(source) == is_postgres_url(destination):
        raise ArchiveError(
            "archive.copy_same_engine",
            "Copy goes between SQLite and PostgreSQL: one end must be a folder, the other a "
            "postgresql:// URL.",
            hint="To copy a SQLite archive, copy its folder; a database, with pg_dump.",
            category="input",
        )
    src = open_source(source)
    try:
        src.check_tables()
        dst = open_destination(destination)
        try:
            return _copy(src, dst, batch_rows, on_batch)
        finally:
            dst.close()
    finally:
        src.close()


def _copy(src: Side, dst: Side, batch_rows: int, on_batch: BatchHook | None) -> CopyReport:
    identity = src.identity()
    progress = dst.progress()
    resumed = bool(progress)
    if progress:
        sources = {entry[0] for entry in progress.values()}
        if sources != {identity}:
            raise _refused(dst.location, Phrase.of("it holds a copy of another archive"))
    elif dst.holds_data():
        raise _refused(dst.location, Phrase.of("it already holds archive data"))
    else:
        dst.start(identity)
        progress = dst.progress()
    report = CopyReport(src.location, dst.location, resumed)
    for table in TABLES:
        _, last, done_rows, finished = progress[table.name]
        copied = 0 if finished else _copy_table(src, dst, table, last, batch_rows, on_batch)
        report.copied[table.name] = copied
        report.totals[table.name] = done_rows + copied
    dst.finish()
    return report


def _copy_table(
    src: Side,
    dst: Side,
    table: Table,
    last: list[object] | None,
    batch_rows: int,
    on_batch: BatchHook | None,
) -> int:
    copied = 0
    while True:
        rows = src.rows(table, last, batch_rows)
        if rows:
            last = [rows[-1][table.names.index(k)] for k in table.key]
        if table.name == MEDIA_FILES:
            for row in rows:
                dst.write_file(row, src.file_parts(str(row[0])))
        finished = len(rows) < batch_rows
        dst.write_batch(table, rows, last if rows else None, finished)
        copied += len(rows)
        if on_batch is not None and rows:
            on_batch(table.name, copied)
        if finished:
            return copied


def _refused(location: str, why: Phrase) -> ArchiveError:
    return ArchiveError(
        "archive.copy_destination_not_empty",
        Phrase.of("Will not copy into {where}: {why}.", where=location, why=why),
        hint="Copy into a new folder or a new, empty database; a copy that was interrupted "
        "resumes when run again with the same source.",
        category="input",
    )
