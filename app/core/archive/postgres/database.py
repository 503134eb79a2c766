"""The PostgreSQL engine of an archive: the store's SQL on a server, as it runs on SQLite.

:class:`PgDatabase` is the :class:`~app.core.archive.database.Engine` of an archive opened from a
``postgresql://`` URL. The store's modules write their SQL once, for both engines, with ``?``
(or ``:name``) placeholders and the forms both engines share (``ON CONFLICT ... DO``,
``RETURNING``, ``CASE`` instead of SQLite's two-argument ``max``); :class:`PgConnection` turns
the placeholders into psycopg's and reads rows by column name and by index, as
``sqlite3.Row`` does. Values read back the way SQLite stores them: ``jsonb`` as its JSON text,
``timestamptz`` as UTC ISO 8601 text (``2026-12-02T21:07:47+00:00``), so the store's code
decodes one form. Booleans read as ``True``/``False`` (SQLite: 1/0) and are written as Python
booleans on both engines.

Writes run one at a time on the engine's writer thread, each in one transaction (committed in
submission order, rolled back on any error) that holds the archive's write lock
(:data:`WRITE_LOCK`), so writers in every process take turns, as on SQLite; reads borrow a pooled
connection and see what was committed.
The connections log in as the archivist's own role, so the server's row-level security decides
what each read sees (:mod:`~app.core.archive.postgres.roles`). A server error reaches the caller
as a coded :class:`~app.core.errors.ArchiveError` (:func:`~.connect.translate`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.adapt import Loader
from psycopg.rows import RowMaker
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from app.core.archive.database import log_unawaited
from app.core.archive.engine import Connection
from app.core.archive.postgres.connect import Conn, open_pool, redact, translate
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

T = TypeVar("T")

READ_THREADS = 2
WRITE_LOCK = 0x61727869  # "arxi"
"""The transaction-level advisory lock every write holds: writes to one shared archive, from
every process and machine, run one at a time and each sees the one before it, the guarantee
SQLite's ``BEGIN IMMEDIATE`` gives a folder archive (a find-or-create, a new id, a version check
and a plan's claim are each read-then-write). Index workers embed in transactions of their own
and do not take it."""
PART_BYTES = 8 << 20
"""A media file's bytes are kept in parts of 8 MiB (as ``arxiu archive copy`` writes them)."""
POOL_SIZE = 4

_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|::|\?|:[A-Za-z_][A-Za-z0-9_]*|%")
"""What :func:`to_psycopg` rewrites or must leave alone: quoted text, ``::`` casts,
placeholders and ``%``."""
_CONVERTED: dict[str, str] = {}
"""Statements already converted (the store runs a few hundred distinct ones)."""


def to_psycopg(sql: str) -> str:
    """``sql`` with its ``?`` and ``:name`` placeholders as psycopg's ``%s`` and
    ``%(name)s``, and every literal ``%`` doubled (in quoted text too); a ``?`` or ``:name``
    inside quoted text and ``::`` casts are left as they are."""
    done = _CONVERTED.get(sql)
    if done is None:
        done = _TOKENS.sub(_convert, sql)
        if len(_CONVERTED) < 4096:
            _CONVERTED[sql] = done
    return done


def _convert(match: re.Match[str]) -> str:
    token = match.group(0)
    if token == "?":
        return "%s"
    if token == "%":
        return "%%"
    if token.startswith(":") and token != "::":
        return f"%({token[1:]})s"
    return token.replace("%", "%%")  # quoted text: psycopg reads every % of the statement


class PgRow(tuple[Any, ...]):
    """A row read by index or by column name, with ``keys()`` (``dict(row)`` works), as
    ``sqlite3.Row``."""

    names: tuple[str, ...] = ()
    _where: dict[str, int] = {}  # noqa: RUF012 (set per statement by the row maker)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._where[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self.names)


def _row_maker(cursor: psycopg.Cursor[Any]) -> RowMaker[PgRow]:
    """psycopg's row factory for :class:`PgRow`: one row class per statement's columns."""
    names = tuple(column.name for column in cursor.description or ())
    row_class = type(
        "Row", (PgRow,), {"names": names, "_where": {n: i for i, n in enumerate(names)}}
    )

    def make(values: Sequence[Any]) -> PgRow:
        return row_class(values)  # type: ignore[no-any-return]

    return make


class IsoTimestampLoader(Loader):
    """``timestamptz`` read as SQLite's text: UTC ISO 8601 with a ``T`` and ``+00:00`` (the
    session runs in UTC)."""

    def load(self, data: Any) -> str:
        text = bytes(data).decode()
        return datetime.fromisoformat(text).isoformat()


def prepare_store(conn: Conn) -> None:
    """Read ``jsonb`` as its text and ``timestamptz`` as ISO 8601 on this connection."""
    conn.adapters.register_loader("jsonb", TextLoader)
    conn.adapters.register_loader("json", TextLoader)
    conn.adapters.register_loader("timestamptz", IsoTimestampLoader)


class PgCursor:
    """A statement's rows (``fetchone``, ``fetchall``, iteration) and ``rowcount``."""

    def __init__(self, cursor: psycopg.Cursor[PgRow]) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        """Rows the statement changed (or returned)."""
        return self._cursor.rowcount

    def fetchone(self) -> PgRow | None:
        """The next row, or ``None``."""
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[PgRow]:
        """Every remaining row."""
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


class PgConnection:
    """A psycopg connection that runs the store's SQL (see the module)."""

    def __init__(self, conn: Conn, tracer: Callable[[str], None] | None = None) -> None:
        self.raw = conn
        self._tracer = tracer

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = (), /) -> PgCursor:
        """Run one statement."""
        if self._tracer is not None:
            self._tracer(sql)
        cursor = self.raw.cursor(row_factory=_row_maker)
        cursor.execute(to_psycopg(sql), _params(parameters))
        return PgCursor(cursor)

    def executemany(
        self, sql: str, parameters: Iterable[Sequence[Any] | Mapping[str, Any]], /
    ) -> PgCursor:
        """Run one statement for each parameter set (pipelined by psycopg)."""
        if self._tracer is not None:
            self._tracer(sql)
        cursor = self.raw.cursor(row_factory=_row_maker)
        rows = [_params(p) for p in parameters]
        if rows:
            cursor.executemany(to_psycopg(sql), rows)
        return PgCursor(cursor)


def _params(parameters: Sequence[Any] | Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
    if isinstance(parameters, Mapping):
        return parameters
    return list(parameters)


class PgDatabase:
    """The connections of one PostgreSQL archive: a pool for reads, one writer thread."""

    dialect = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.read_only = read_only
        self._pool: ConnectionPool[Conn] = open_pool(
            url, max_size=POOL_SIZE, configure=prepare_store
        )
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arxiu-writer")
        self._write_conn: Conn | None = None
        self._readers: ThreadPoolExecutor | None = None
        self._numbers = itertools.count(1)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._closed = False
        self._tracer: Callable[[str], None] | None = None
        with self._pool.connection() as conn:
            found = conn.execute("SELECT session_user").fetchone()
        self.role: str | None = str(found[0]) if found else None
        """The server role the connections log in as (the archivist, for the audit log)."""

    def trace(self, listener: Callable[[str], None] | None) -> None:
        """Call ``listener(statement)`` for each statement, on the thread that runs it
        (``None``: stop): for diagnostics, and for tests that check which threads reach the
        archive."""
        self._tracer = listener

    @property
    def where(self) -> str:
        """The archive's URL without its password (for messages)."""
        return redact(self.url)

    # -- reads -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[PgConnection]:
        """A pooled connection for reads; server errors become coded errors. Nested on one
        thread, the inner read shares the outer one's connection."""
        self._check_open()
        held: PgConnection | None = getattr(self._local, "held", None)
        if held is not None:
            yield held
            return
        try:
            with self._pool.connection() as conn:
                wrapped = PgConnection(conn, self._tracer)
                self._local.held = wrapped
                try:
                    yield wrapped
                finally:
                    self._local.held = None
        except psycopg.Error as exc:
            raise translate(exc, self.url) from exc

    async def aread(self, fn: Callable[[PgConnection], T]) -> T:
        """Run ``fn(conn)`` on a read thread and await it (the loop goes on meanwhile)."""
        if getattr(self._local, "read_thread", False):
            return self._read_now(fn)
        return await asyncio.wrap_future(self._read_pool().submit(self._read_now, fn))

    def _read_now(self, fn: Callable[[PgConnection], T]) -> T:
        with self.reading() as conn:
            return fn(conn)

    def _read_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            self._check_open()
            if self._readers is None:
                self._readers = ThreadPoolExecutor(
                    max_workers=READ_THREADS, initializer=self._named
                )
            return self._readers

    def _named(self) -> None:
        threading.current_thread().name = f"arxiu-read-{next(self._numbers)}"
        self._local.read_thread = True

    # -- writes ------------------------------------------------------------------------------
    def write(self, fn: Callable[[PgConnection], T]) -> T:
        """Run ``fn`` in one transaction on the writer thread."""
        return self.submit(fn).result()

    async def awrite(self, fn: Callable[[PgConnection], T]) -> T:
        """:meth:`write` as an awaitable; a cancelled caller does not cancel the write."""
        waiter = asyncio.wrap_future(self.submit(fn))
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            waiter.add_done_callback(lambda done: log_unawaited(done, self.where))
            raise

    def submit(self, fn: Callable[[PgConnection], T]) -> Future[T]:
        """Queue ``fn`` for the writer thread; transactions commit in submission order."""
        if self.read_only:
            raise ArchiveError(
                "archive.read_only",
                Phrase.of("The archive {where} was opened read-only.", where=self.where),
                hint="Open it again with write access.",
            )
        self._check_open()
        return self._writer.submit(self._write_now, fn)

    def _write_now(self, fn: Callable[[PgConnection], T]) -> T:
        try:
            conn = self._writer_conn()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                return fn(PgConnection(conn, self._tracer))
        except psycopg.Error as exc:
            if self._write_conn is not None and self._write_conn.broken:
                self._write_conn = None
            raise translate(exc, self.url) from exc

    def _writer_conn(self) -> Conn:
        """The writer thread's own connection (made again when the server dropped it)."""
        if self._write_conn is None or self._write_conn.closed:
            from app.core.archive.postgres.connect import connect

            self._write_conn = connect(self.url, autocommit=True)
            prepare_store(self._write_conn)
        return self._write_conn

    # -- media files -------------------------------------------------------------------------
    def keep_file(self, conn: Connection, path: str, source: Path) -> None:
        """Keep ``source``'s bytes as media file ``path`` (``media_files``, ``media_parts`` of
        :data:`PART_BYTES`), once: a path is its content's hash."""
        if conn.execute("SELECT 1 FROM media_files WHERE path = ?", (path,)).fetchone():
            return
        digest = hashlib.sha256()
        conn.execute(
            "INSERT INTO media_files(path, size, sha256) VALUES (?, ?, '')",
            (path, source.stat().st_size),
        )
        with source.open("rb") as handle:
            for number, part in enumerate(iter(lambda: handle.read(PART_BYTES), b"")):
                digest.update(part)
                conn.execute(
                    "INSERT INTO media_parts(path, part, content) VALUES (?, ?, ?)",
                    (path, number, part),
                )
        conn.execute("UPDATE media_files SET sha256 = ? WHERE path = ?", (digest.hexdigest(), path))

    def fetch_file(self, path: str, target: Path) -> bool:
        """Write media file ``path`` to ``target`` (through a temporary file, renamed when
        whole); ``False`` when the archive has no such file."""
        with self.reading() as conn:
            found = conn.execute("SELECT 1 FROM media_files WHERE path = ?", (path,)).fetchone()
            if found is None:
                return False
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.part")
            counted = conn.execute(
                "SELECT count(*) FROM media_parts WHERE path = ?", (path,)
            ).fetchone()
            count = counted[0] if counted else 0
            with partial.open("wb") as out:
                for number in range(int(count)):
                    row = conn.execute(
                        "SELECT content FROM media_parts WHERE path = ? AND part = ?",
                        (path, number),
                    ).fetchone()
                    if row is None:
                        raise ArchiveError(
                            "archive.media_missing",
                            Phrase.of(
                                "Part {number} of media file {path} is missing in the archive.",
                                number=number,
                                path=path,
                            ),
                        )
                    out.write(bytes(row[0]))
        os.replace(partial, target)
        return True

    # -- lifecycle ---------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ArchiveError("archive.closed", "The archive is closed.", category="internal")

    def close(self) -> None:
        """Finish pending writes and close every connection."""
        if self._closed:
            return
        with self._lock:
            readers, self._readers = self._readers, None
        if readers is not None:
            readers.shutdown(wait=True)
        self._writer.submit(self._close_writer).result()
        self._writer.shutdown(wait=True)
        self._closed = True
        self._pool.close()

    def _close_writer(self) -> None:
        if self._write_conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._write_conn.close()
            self._write_conn = None
