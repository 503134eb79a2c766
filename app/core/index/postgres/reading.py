"""Reading a shared archive's index through the archive's own connections."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app.core.archive.postgres.connect import Conn
from app.core.archive.postgres.database import PgConnection
from app.core.archive.store import Archive
from app.core.errors import ArchiveError


@contextmanager
def raw_reading(archive: Archive) -> Iterator[Conn]:
    """A psycopg connection of the shared ``archive``'s read pool (the SQL of the index
    modules is psycopg's, not the store's); server errors come out coded, as the archive's."""
    with archive.db.reading() as conn:
        if not isinstance(conn, PgConnection):
            raise ArchiveError(
                "archive.not_shared", "This archive is a folder.", category="internal"
            )
        yield conn.raw
