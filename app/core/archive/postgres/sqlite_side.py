"""The SQLite end of a copy or a checksum: an archive folder read or written table by table.

Rows are read in key order after a given key (keyset pagination), in their neutral form
(:mod:`.canonical`). The media files are the files under ``media/`` (thumbnails included), in
path order. Writes go through the archive's one writer: each batch, with the copy's progress
(``archive_copy``), in one transaction; a media file is written under a temporary name and
renamed into place before its progress is recorded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from app.core.archive.media import file_sha256
from app.core.archive.plan_seal import PLAN_SECRET
from app.core.archive.postgres.canonical import Neutral, from_sqlite, to_sqlite
from app.core.archive.postgres.tables import BY_NAME, MEDIA_FILES, TABLES, Table, is_derived
from app.core.archive.store import DB_NAME, Archive, open_archive
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

Row = tuple[Neutral, ...]
PART_BYTES = 8 << 20

PROGRESS_SQL = (
    "CREATE TABLE IF NOT EXISTS archive_copy (table_name TEXT PRIMARY KEY, source TEXT NOT NULL, "
    "last_key TEXT, rows INTEGER NOT NULL DEFAULT 0, finished INTEGER NOT NULL DEFAULT 0)"
)


def keyset_sql(table: Table, after: Sequence[object] | None, limit: int) -> str:
    """``SELECT`` of ``table``'s rows in key order after the key ``after`` (``?`` marks)."""
    cols = ", ".join(f'"{c}"' for c in table.names)
    key = ", ".join(f'"{k}"' for k in table.key)
    where = ""
    if after is not None:
        where = f" WHERE ({key}) > ({', '.join('?' * len(table.key))})"
    return f'SELECT {cols} FROM "{table.name}"{where} ORDER BY {key} LIMIT {int(limit)}'


class SqliteSide:
    """An archive folder as the source or the destination of a copy."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.location = str(archive.folder)

    @classmethod
    def open_source(cls, folder: Path) -> SqliteSide:
        """The archive in ``folder``, read-only."""
        return cls(open_archive(folder, read_only=True))

    @classmethod
    def open_destination(cls, folder: Path) -> SqliteSide:
        """The archive in ``folder`` to copy into (created when the folder has none).

        Raises:
            ArchiveError: ``archive.copy_destination_not_empty`` for a folder with other files
                and no archive.
        """
        folder = Path(folder).expanduser()
        if not (folder / DB_NAME).exists() and folder.exists() and any(folder.iterdir()):
            raise ArchiveError(
                "archive.copy_destination_not_empty",
                Phrase.of(
                    "The folder {folder} is not empty and holds no archive.", folder=str(folder)
                ),
                hint="Copy into a new (or empty) folder.",
                category="input",
            )
        side = cls(open_archive(folder, create=True))
        side.archive.sqlite.write(lambda conn: conn.execute(PROGRESS_SQL))
        return side

    def close(self) -> None:
        """Close the archive."""
        self.archive.close()

    # -- reading -------------------------------------------------------------------------------
    def check_tables(self) -> None:
        """Refuse an archive with a table or a column the copy does not know (it would be lost).

        Raises:
            ArchiveError: ``archive.copy_unknown_table``.
        """
        with self.archive.sqlite.reading() as conn:
            names = [
                str(r[0])
                for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            for name in names:
                table = BY_NAME.get(name)
                columns = [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{name}")')]
                if is_derived(name) or (table is not None and tuple(columns) == table.names):
                    continue
                raise ArchiveError(
                    "archive.copy_unknown_table",
                    Phrase.of(
                        "The archive has a table this copy does not know: {name} ({columns}).",
                        name=name,
                        columns=str(columns),
                    ),
                    hint="Update Arxiu on both ends; nothing was copied.",
                    details={"table": name},
                )

    def identity(self) -> str:
        """A stable identity of the archive that reveals nothing: a digest of its plan key."""
        with self.archive.sqlite.reading() as conn:
            row = conn.execute(
                "SELECT value FROM archive_secrets WHERE name = ?", (PLAN_SECRET,)
            ).fetchone()
        seed = bytes(row[0]) if row else self.location.encode()
        return hashlib.sha256(b"arxiu-archive-id\n" + seed).hexdigest()[:32]

    def rows(self, table: Table, after: Sequence[object] | None, limit: int) -> list[Row]:
        """Up to ``limit`` rows of ``table`` after the key ``after``, in key order."""
        if table.name == MEDIA_FILES:
            return self._files(after, limit)
        with self.archive.sqlite.reading() as conn:
            found = conn.execute(keyset_sql(table, after, limit), list(after or ())).fetchall()
        return [
            tuple(from_sqlite(table, c, v) for c, v in zip(table.columns, r, strict=True))
            for r in found
        ]

    def _paths(self) -> list[str]:
        root = self.archive.media_dir
        found = [
            Path(top, name).relative_to(root).as_posix()
            for top, _, files in os.walk(root)
            for name in files
            if not name.startswith(".arxiu-copy-")
        ]
        return sorted(found)

    def _files(self, after: Sequence[object] | None, limit: int) -> list[Row]:
        last = str(after[0]) if after else None
        paths = [p for p in self._paths() if last is None or p > last][:limit]
        out: list[Row] = []
        for path in paths:
            full = self.archive.media_dir / path
            out.append((path, full.stat().st_size, file_sha256(full)))
        return out

    def file_parts(self, path: str) -> Iterator[bytes]:
        """The bytes of media file ``path``, 8 MiB at a time."""
        with (self.archive.media_dir / path).open("rb") as handle:
            yield from iter(lambda: handle.read(PART_BYTES), b"")

    def row_count(self, table: Table) -> int:
        """How many rows ``table`` holds (files, for ``media_files``)."""
        if table.name == MEDIA_FILES:
            return len(self._paths())
        with self.archive.sqlite.reading() as conn:
            return int(conn.execute(f'SELECT count(*) FROM "{table.name}"').fetchone()[0])

    # -- writing -------------------------------------------------------------------------------
    def progress(self) -> dict[str, tuple[str, list[object] | None, int, bool]]:
        """The copy's progress per table: source, last key, rows, finished."""
        with self.archive.sqlite.reading() as conn:
            rows = conn.execute(
                "SELECT table_name, source, last_key, rows, finished FROM archive_copy"
            ).fetchall()
        return {
            str(r[0]): (str(r[1]), None if r[2] is None else json.loads(r[2]), r[3], bool(r[4]))
            for r in rows
        }

    def holds_data(self) -> bool:
        """Whether any table but ``archive_secrets`` holds a row (or ``media/`` a file)."""
        return any(self.row_count(t) for t in TABLES if t.name != "archive_secrets")

    def start(self, source: str) -> None:
        """Begin a copy into this (empty) archive: its own plan key gives way to the source's."""

        def begin(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM archive_secrets")
            conn.executemany(
                "INSERT INTO archive_copy(table_name, source) VALUES (?, ?)",
                [(t.name, source) for t in TABLES],
            )

        self.archive.sqlite.write(begin)

    def write_batch(
        self, table: Table, rows: list[Row], last_key: list[object] | None, finished: bool
    ) -> None:
        """Insert ``rows`` into ``table`` and record the progress, in one transaction."""
        cols = ", ".join(f'"{c}"' for c in table.names)
        marks = ", ".join("?" * len(table.names))
        values = [
            tuple(to_sqlite(c, v) for c, v in zip(table.columns, row, strict=True)) for row in rows
        ]

        def write(conn: sqlite3.Connection) -> None:
            if table.name != MEDIA_FILES:
                conn.executemany(f'INSERT INTO "{table.name}" ({cols}) VALUES ({marks})', values)
            _record(conn, table.name, last_key, len(rows), finished)

        self.archive.sqlite.write(write)

    def write_file(self, row: Row, parts: Iterator[bytes]) -> None:
        """Write media file ``row`` (path, size, SHA-256): a temporary name, then renamed into
        place, so an interrupted copy leaves no half-written file."""
        path = str(row[0])
        target = self.archive.media_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(".arxiu-copy-" + target.name)
        try:
            with temp.open("wb") as handle:
                for part in parts:
                    handle.write(part)
            os.replace(temp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()

    def finish(self) -> None:
        """Nothing to do on SQLite (AUTOINCREMENT follows the ids written)."""


def _record(
    conn: sqlite3.Connection, table: str, last_key: list[object] | None, rows: int, done: bool
) -> None:
    conn.execute(
        "UPDATE archive_copy SET last_key = coalesce(?, last_key), rows = rows + ?, "
        "finished = ? WHERE table_name = ?",
        (None if last_key is None else json.dumps(last_key), rows, int(done), table),
    )
