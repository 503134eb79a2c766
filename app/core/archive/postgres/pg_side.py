"""The PostgreSQL end of a copy or a checksum: an archive database read or written by table.

Rows are read in key order (text keys in the ``C`` collation: byte order, as SQLite's
``BINARY``) after a given key; psycopg and the pgvector adapter give them in their neutral form
already (parsed ``jsonb``, aware ``timestamptz``, ``bytes``, a vector as a numpy array, turned
into its float32 bytes here). Each batch goes in with ``COPY`` together with the copy's
progress (``archive_copy``) in one transaction. A media file's bytes are read and written in
8 MiB parts (``media_parts``); its SHA-256 for the checksum is computed from those bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence

import psycopg
from psycopg import sql

from app.core.archive.postgres.canonical import Neutral, from_postgres, to_postgres
from app.core.archive.postgres.connect import Conn, connect, database_name, redact, translate
from app.core.archive.postgres.roles import create_policies, create_roles
from app.core.archive.postgres.schema import create_tables, has_schema, user_tables
from app.core.archive.postgres.tables import MEDIA_FILES, TABLES, Table
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

Row = tuple[Neutral, ...]
IDENTITIES = ("media", "audit", "index_chunks")
"""Tables whose ``id`` is an identity column: its sequence is moved past the copied ids."""


def _key_expr(table: Table) -> list[sql.Composable]:
    out: list[sql.Composable] = []
    for name in table.key:
        ident = sql.Identifier(name)
        kind = table.column(name).kind
        out.append(sql.SQL('{} COLLATE "C"').format(ident) if kind == "text" else ident)
    return out


def keyset_query(table: Table, after: Sequence[object] | None, limit: int) -> sql.Composed:
    """``SELECT`` of ``table``'s rows in key order after the key ``after``."""
    keys = sql.SQL(", ").join(_key_expr(table))
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in table.names)
    where: sql.Composable = sql.SQL("")
    if after is not None:
        marks = sql.SQL(", ").join(sql.Placeholder() * len(table.key))
        where = sql.SQL(" WHERE ROW({}) > ROW({})").format(keys, marks)
    return sql.SQL("SELECT {} FROM {}{} ORDER BY {} LIMIT {}").format(
        cols, sql.Identifier(table.name), where, keys, sql.Literal(int(limit))
    )


class PgSide:
    """An archive database as the source or the destination of a copy."""

    def __init__(self, conn: Conn, url: str) -> None:
        self.conn = conn
        self.url = url
        self.location = redact(url)

    @classmethod
    def open_source(cls, url: str) -> PgSide:
        """The archive at ``url`` (it must hold the schema, and this role see every row).

        Raises:
            ArchiveError: ``archive.not_found`` without a schema, ``archive.copy_partial_source``
                for a role that row-level security hides rows from, or a connection error.
        """
        side = cls(connect(url), url)
        if not has_schema(side.conn):
            side.close()
            raise ArchiveError(
                "archive.not_found",
                Phrase.of("The database {where} holds no Arxiu archive.", where=side.location),
                category="input",
            )
        if not side._sees_every_row():
            side.close()
            raise ArchiveError(
                "archive.copy_partial_source",
                Phrase.of(
                    "The role of {where} does not see every row (the restricted rows, "
                    "or the archive's plan key): a copy or a checksum would miss them.",
                    where=side.location,
                ),
                hint="Connect as the archive's owner, or as a role with the restricted and the "
                "write right.",
                category="permission",
            )
        return side

    @classmethod
    def open_destination(cls, url: str) -> PgSide:
        """The archive at ``url`` to copy into: its schema, roles and policies are made first
        when the database has no table.

        Raises:
            ArchiveError: ``archive.copy_destination_not_empty`` when the database holds
                tables but no Arxiu schema; ``archive.pg_no_vector``; a connection error.
        """
        from app.core.archive.postgres.connect import ensure_vector, prepare

        conn = connect(url, vector=False)
        side = cls(conn, url)
        try:
            if not has_schema(conn):
                if user_tables(conn):
                    raise _not_empty(
                        side.location, Phrase.of("it holds tables that are not an archive")
                    )
                with conn.transaction():
                    ensure_vector(conn)
                    create_tables(conn)
                    create_policies(conn, create_roles(conn, database_name(url)))
            prepare(conn)
        except BaseException:
            side.close()
            raise
        return side

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def _sees_every_row(self) -> bool:
        row = self.conn.execute(
            "SELECT r.rolsuper OR r.rolbypassrls "
            "OR pg_has_role(current_user, c.relowner, 'MEMBER') OR (arxiu_may_read_restricted() "
            "AND has_table_privilege('public.archive_secrets', 'SELECT')) "
            "FROM pg_roles r, pg_class c WHERE r.rolname = current_user "
            "AND c.oid = 'public.records'::regclass"
        ).fetchone()
        self.conn.commit()
        return bool(row and row[0])

    # -- reading -------------------------------------------------------------------------------
    def check_tables(self) -> None:
        """Nothing to check: the schema is this version's own."""

    def identity(self) -> str:
        """The archive's identity (as :meth:`SqliteSide.identity`, from the same plan key)."""
        from app.core.archive.plan_seal import PLAN_SECRET

        row = self.conn.execute(
            "SELECT value FROM archive_secrets WHERE name = %s", (PLAN_SECRET,)
        ).fetchone()
        self.conn.commit()
        seed = _bytes(row[0]) if row else self.location.encode()
        return hashlib.sha256(b"arxiu-archive-id\n" + seed).hexdigest()[:32]

    def rows(self, table: Table, after: Sequence[object] | None, limit: int) -> list[Row]:
        """Up to ``limit`` rows of ``table`` after the key ``after``, in key order (for
        ``media_files`` the SHA-256 is that of the stored bytes)."""
        found = self.conn.execute(keyset_query(table, after, limit), list(after or ())).fetchall()
        self.conn.commit()
        rows = [
            tuple(from_postgres(c, v) for c, v in zip(table.columns, r, strict=True)) for r in found
        ]
        if table.name == MEDIA_FILES:
            rows = [(r[0], r[1], self._digest(str(r[0]))) for r in rows]
        return rows

    def _digest(self, path: str) -> str:
        digest = hashlib.sha256()
        for part in self.file_parts(path):
            digest.update(part)
        return digest.hexdigest()

    def file_parts(self, path: str) -> Iterator[bytes]:
        """The bytes of media file ``path``, part by part."""
        count = self.conn.execute(
            "SELECT count(*) FROM media_parts WHERE path = %s", (path,)
        ).fetchone()
        for part in range(_int(count[0]) if count else 0):
            row = self.conn.execute(
                "SELECT content FROM media_parts WHERE path = %s AND part = %s", (path, part)
            ).fetchone()
            if row is not None:
                yield _bytes(row[0])
        self.conn.commit()

    def row_count(self, table: Table) -> int:
        """How many rows ``table`` holds."""
        query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table.name))
        row = self.conn.execute(query).fetchone()
        self.conn.commit()
        return _int(row[0]) if row else 0

    # -- writing -------------------------------------------------------------------------------
    def progress(self) -> dict[str, tuple[str, list[object] | None, int, bool]]:
        """The copy's progress per table: source, last key, rows, finished."""
        rows = self.conn.execute(
            "SELECT table_name, source, last_key, rows, finished FROM archive_copy"
        ).fetchall()
        self.conn.commit()
        return {str(r[0]): (str(r[1]), _key(r[2]), _int(r[3]), bool(r[4])) for r in rows}

    def holds_data(self) -> bool:
        """Whether any table but ``archive_secrets`` holds a row."""
        return any(self.row_count(t) for t in TABLES if t.name != "archive_secrets")

    def start(self, source: str) -> None:
        """Begin a copy into this (empty) archive."""
        with self.conn.transaction():
            self.conn.execute("DELETE FROM archive_secrets")
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO archive_copy(table_name, source) VALUES (%s, %s)",
                    [(t.name, source) for t in TABLES],
                )

    def write_batch(
        self, table: Table, rows: list[Row], last_key: list[object] | None, finished: bool
    ) -> None:
        """``COPY`` ``rows`` into ``table`` and record the progress, in one transaction."""
        copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table.name), sql.SQL(", ").join(sql.Identifier(c) for c in table.names)
        )
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                if table.name != MEDIA_FILES:  # files: written one by one (write_file)
                    with cur.copy(copy) as stream:
                        for row in rows:
                            stream.write_row(
                                [to_postgres(c, v) for c, v in zip(table.columns, row, strict=True)]
                            )
                cur.execute(
                    "UPDATE archive_copy SET last_key = coalesce(%s::jsonb, last_key), "
                    "rows = rows + %s, finished = %s WHERE table_name = %s",
                    (None if last_key is None else json.dumps(last_key), len(rows), finished,
                     table.name),
                )  # fmt: skip
        except psycopg.Error as exc:
            raise translate(exc, self.url) from exc

    def write_file(self, row: Row, parts: Iterator[bytes]) -> None:
        """Write media file ``row`` (path, size, SHA-256) and its bytes in one transaction,
        replacing what an interrupted copy left of it."""
        path = str(row[0])
        with self.conn.transaction():
            self.conn.execute("DELETE FROM media_parts WHERE path = %s", (path,))
            self.conn.execute(
                "INSERT INTO media_files(path, size, sha256) VALUES (%s, %s, %s) "
                "ON CONFLICT (path) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256",
                (path, row[1], row[2]),
            )
            for number, part in enumerate(parts):
                self.conn.execute(
                    "INSERT INTO media_parts(path, part, content) VALUES (%s, %s, %s)",
                    (path, number, part),
                )

    def finish(self) -> None:
        """Move the identity sequences past the copied ids."""
        with self.conn.transaction():
            for table in IDENTITIES:
                self.conn.execute(
                    sql.SQL(
                        "SELECT setval(pg_get_serial_sequence({}, 'id'), "
                        "coalesce(max(id), 0) + 1, false) FROM {}"
                    ).format(sql.Literal(table), sql.Identifier(table))
                )


def _bytes(value: object) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    return bytes(value)


def _int(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def _key(value: object) -> list[object] | None:
    return list(value) if isinstance(value, list) else None


def _not_empty(location: str, why: Phrase) -> ArchiveError:
    return ArchiveError(
        "archive.copy_destination_not_empty",
        Phrase.of("Will not copy into {where}: {why}.", where=location, why=why),
        hint="Copy into a new, empty database (createdb), or resume the same copy.",
        category="input",
    )
