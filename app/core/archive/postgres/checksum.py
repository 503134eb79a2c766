"""``arxiu archive checksum ARCHIVE``: one digest per table and one in all, the same on both
engines for the same archive.

Each table's rows are read in key order (the copy's readers) and each row written in its
canonical form (:func:`~.canonical.canonical_row`: compact JSON; JSON values with sorted keys,
times in UTC, flags as 0/1, blobs and vectors as hex); the table's digest is the SHA-256 of
those lines. The media files are digested by path, size and the SHA-256 of their bytes. The
digest in all is the SHA-256 of the ``table digest`` lines in table order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from app.core.archive.postgres.canonical import canonical_row
from app.core.archive.postgres.tables import TABLES, Table
from app.core.archive.postgres.transfer import Side, open_source

BATCH_ROWS = 5000


@dataclass(frozen=True)
class TableDigest:
    """One table's row count and digest."""

    table: str
    rows: int
    sha256: str


@dataclass(frozen=True)
class ArchiveDigest:
    """Every table's digest, and the digest in all."""

    location: str
    tables: tuple[TableDigest, ...]
    sha256: str

    def lines(self, total: str = "all") -> list[str]:
        """The report ``arxiu archive checksum`` prints: a line per table (its rows and
        digest), then the total, named ``total`` (the CLI's word for it)."""
        width = max(len(name) for name in [total, *(t.table for t in self.tables)])
        out = [f"{t.table:<{width}}  {t.rows:>9}  {t.sha256}" for t in self.tables]
        out.append(f"{total:<{width}}  {sum(t.rows for t in self.tables):>9}  {self.sha256}")
        return out


def table_digest(side: Side, table: Table, batch_rows: int = BATCH_ROWS) -> TableDigest:
    """The digest of one table of ``side``."""
    digest = hashlib.sha256()
    count = 0
    last: list[object] | None = None
    while True:
        rows = side.rows(table, last, batch_rows)
        for row in rows:
            digest.update(canonical_row(table, row).encode() + b"\n")
        count += len(rows)
        if len(rows) < batch_rows:
            return TableDigest(table.name, count, digest.hexdigest())
        last = [rows[-1][table.names.index(k)] for k in table.key]


def archive_digest(location: str) -> ArchiveDigest:
    """The digests of the archive at ``location`` (a folder or a ``postgresql://`` URL)."""
    side = open_source(location)
    try:
        side.check_tables()
        tables = tuple(table_digest(side, t) for t in TABLES)
    finally:
        side.close()
    total = hashlib.sha256("".join(f"{t.table} {t.sha256}\n" for t in tables).encode())
    return ArchiveDigest(side.location, tables, total.hexdigest())
