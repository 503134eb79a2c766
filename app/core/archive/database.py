"""SQLite connections of one archive: WAL, busy timeout, one writer thread, coded errors.

Reads run on a connection per calling thread. Every write runs on the single writer thread,
inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error), so sqlite3's same-thread
rule holds and writers never interleave.

Code on an event loop (the app runs the core on qasync's loop in the Qt thread) awaits
:meth:`Database.awrite` and :meth:`Database.aread` instead: the write still runs on the writer
thread and the read on one of a few named read threads (``arxiu-read-N``, each with its own
connection), while the loop goes on. The CLI and the importers keep the blocking
:meth:`Database.write`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from app.core.archive import lexical_table
from app.core.archive.engine import Connection
from app.core.archive.migrations import MIGRATIONS, Migration
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

T = TypeVar("T")

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
READ_THREADS = 2
"""Threads of the read executor (a search and a tool read can run at the same time)."""
WRITER_CACHE_KIB = 32 << 10
"""Page cache of the writer connection (SQLite's default is 2 MiB a connection)."""


def tune(conn: sqlite3.Connection) -> None:
    """Per-connection settings of a writable connection: ``synchronous = NORMAL`` once the
    journal is WAL, and temporary tables and indexes (sorts, FTS5 merges) kept in memory.

    ``synchronous`` is a setting of each connection, not of the file: set on one connection
    only, the writer thread's kept the default ``FULL`` and synced the disk at every commit. In
    WAL mode ``NORMAL`` is crash-safe (a power cut may undo the last commits, never corrupt the
    file; a killed process loses nothing committed); in a rollback journal it is not, so a
    connection opened before WAL is on keeps ``FULL`` until :meth:`Database.enable_wal`.
    """
    if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA temp_store = MEMORY")


def log_unawaited(future: asyncio.Future[Any], where: str) -> None:
    """Log the failure of a write whose awaiting caller was cancelled (never dropped silently)."""
    error = None if future.cancelled() else future.exception()
    if error is not None:
        log.error("a write whose caller was cancelled failed on %s", where, exc_info=error)


def translate(exc: sqlite3.Error, path: Path) -> ArchiveError:
    """Map a sqlite3 error to a coded archive error."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return ArchiveError(
            "archive.locked",
            Phrase.of("The archive {path} is locked by another program.", path=str(path)),
            hint="Close the other program using it, then try again.",
            retryable=True,
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return ArchiveError(
            "archive.read_only",
            Phrase.of(
                "The archive {path} cannot be written (read-only location or missing permission).",
                path=str(path),
            ),
            hint="Copy the archive folder somewhere writable, or fix its permissions.",
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return ArchiveError(
            "archive.corrupt",
            Phrase.of(
                "The archive database {path} is damaged or is not an Arxiu archive.",
                path=str(path),
            ),
            hint="Restore the archive folder from a backup; the file was left as it is.",
        )
    if "append-only" in text:
        return ArchiveError(
            "archive.audit_append_only",
            "The audit log is append-only: its rows cannot be changed or deleted.",
            category="permission",
        )
    if "disk" in text and "full" in text:
        return ArchiveError("archive.disk_full", "The disk is full.", hint="Free some space.")
    return ArchiveError(
        "archive.sqlite",
        Phrase.of("SQLite error on {path}: {error}", path=str(path), error=str(exc)),
        category="internal",
    )


class Database:
    """The connections of one ``archive.db``."""

    dialect = "sqlite"
    role: str | None = None

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arxiu-writer")
        self._readers: ThreadPoolExecutor | None = None
        self._reader_numbers = itertools.count(1)
        self._closing = False
        self._closed = False
        self._tracer: Callable[[str], None] | None = None

    # -- connections ---------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            uri = self.path.resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        else:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        lexical_table.register(conn)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not self.read_only:
            tune(conn)
        with self._lock:
            self._all.append(conn)
            conn.set_trace_callback(self._tracer)
        return conn

    def trace(self, listener: Callable[[str], None] | None) -> None:
        """Call ``listener(statement)`` for each SQL statement of every connection, on the
        thread that runs it (``None``: stop): for diagnostics, and for tests that check which
        threads reach SQLite."""
        with self._lock:
            self._tracer = listener
            for conn in self._all:
                conn.set_trace_callback(listener)

    def conn(self) -> sqlite3.Connection:
        """This thread's read connection."""
        if self._closed:
            raise ArchiveError("archive.closed", "The archive is closed.", category="internal")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read connection; sqlite errors become coded errors."""
        try:
            yield self.conn()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    async def aread(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on a read thread (``arxiu-read-N``, its own connection) and await it.

        The loop keeps running meanwhile. sqlite errors become coded errors (:func:`translate`);
        any other exception reaches the caller as it was. ``fn`` may call :meth:`write`: the
        read thread, not the loop, then waits for the writer thread. Called on a read thread
        itself (a tool inside an op that runs there), ``fn`` runs at once on that thread: a
        read never waits for a free read thread while holding one.
        """
        if getattr(self._local, "read_thread", False):
            return self._read_now(fn)
        return await asyncio.wrap_future(self._read_pool().submit(self._read_now, fn))

    def _read_now(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self.reading() as conn:
            return fn(conn)

    def _read_pool(self) -> ThreadPoolExecutor:
        """The read executor, started on first use (the CLI never starts it)."""
        with self._lock:
            if self._closing:
                raise ArchiveError("archive.closed", "The archive is closed.", category="internal")
            if self._readers is None:
                self._readers = ThreadPoolExecutor(
                    max_workers=READ_THREADS, initializer=self._name_reader
                )
            return self._readers

    def _name_reader(self) -> None:
        threading.current_thread().name = f"arxiu-read-{next(self._reader_numbers)}"
        self._local.read_thread = True

    # -- writes ------------------------------------------------------------------------------
    async def awrite(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`write` as an awaitable: the writer thread runs it while the loop goes on.

        Cancelling the awaiting task does not cancel the write (it commits, in order, as if it
        had been awaited); a write that then fails is logged, never dropped silently.

        Raises:
            ArchiveError: ``archive.read_only``, or ``fn``'s sqlite error translated.
        """
        waiter = asyncio.wrap_future(self.submit(fn))
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            waiter.add_done_callback(self._log_unawaited)
            raise

    def _log_unawaited(self, future: asyncio.Future[Any]) -> None:
        log_unawaited(future, str(self.path))

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction on the writer thread."""
        return self.submit(fn).result()

    def submit(self, fn: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Queue ``fn`` for the writer thread; its transaction commits in submission order."""
        if self.read_only:
            raise ArchiveError(
                "archive.read_only",
                Phrase.of("The archive {path} was opened read-only.", path=str(self.path)),
                hint="Open it again with write access.",
            )
        return self._writer.submit(self._write_now, fn)

    def _write_now(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self.conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc
        try:
            result = fn(conn)
            conn.execute("COMMIT")
            return result
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, self.path) from exc
            raise

    def keep_file(self, conn: Connection, path: str, source: Path) -> None:
        """Nothing: a SQLite archive's media files are the files of its ``media/`` folder."""

    def fetch_file(self, path: str, target: Path) -> bool:
        """``False``: the files are in the archive folder already."""
        return False

    # -- schema ------------------------------------------------------------------------------
    def schema_version(self) -> int:
        """How many migrations this database has applied."""
        with self.reading() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    def check_readable(self) -> None:
        """Fail with ``archive.corrupt`` if the file is not a readable SQLite database.

        Reads the header and the schema only: a full ``quick_check`` scans every page (0.18 s
        warm on a 300 MB archive, far more cold) and would run on every open. Damage deeper in
        the file surfaces as ``archive.corrupt`` when the damaged page is read.
        """
        with self.reading() as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()

    def check_intact(self) -> None:
        """Fail with ``archive.corrupt`` unless ``PRAGMA quick_check`` finds every page sound.

        Reads the whole file (0.18 s warm on a 300 MB archive): for bulk writers such as
        indexing, which must report a damaged file before writing anything into it.
        """
        with self.reading() as conn:
            problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise ArchiveError(
                "archive.corrupt",
                Phrase.of(
                    "The archive database {path} is damaged: {problem}.",
                    path=str(self.path),
                    problem=problems[0],
                ),
                hint="Restore the archive folder from a backup; the file was left as it is.",
                details={"problems": problems},
            )

    def migrate(self) -> list[str]:
        """Apply pending migrations in order; returns the names applied."""
        current = self.schema_version()
        if current > len(MIGRATIONS):
            raise ArchiveError(
                "archive.schema_newer",
                Phrase.of(
                    "The archive {path} was written by a newer Arxiu "
                    "(schema {schema}, this version knows {known}).",
                    path=str(self.path),
                    schema=current,
                    known=len(MIGRATIONS),
                ),
                hint="Update Arxiu to open this archive; it was not modified.",
                category="input",
            )
        applied: list[str] = []
        for number, migration in enumerate(MIGRATIONS[current:], start=current + 1):

            def step(conn: sqlite3.Connection, m: Migration = migration, n: int = number) -> None:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS _migrations "
                    "(name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
                )
                m.apply(conn)
                conn.execute("INSERT INTO _migrations(name) VALUES (?)", (m.name,))
                conn.execute(f"PRAGMA user_version = {n}")

            self.write(step)
            applied.append(migration.name)
        if not self.read_only:
            with self.reading() as conn:  # the writer is not opened when there is nothing to do
                current = lexical_table.is_current(conn)
            if not current and self.write(lexical_table.ensure_current):
                applied.append("lexemes")
        return applied

    def enable_wal(self) -> None:
        """Switch the journal to WAL (persistent; a no-op when already on), then tune the
        connections opened before (this thread's and the writer's: see :func:`tune`)."""
        with self.reading() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            tune(conn)
        if not self.read_only:
            self._writer.submit(self._tune_writer).result()

    def _tune_writer(self) -> None:
        """On the writer thread: :func:`tune` its connection and give it a larger page cache
        (bulk imports write several B-trees at once: records, links, external ids, chunks)."""
        try:
            conn = self.conn()
            tune(conn)
            conn.execute(f"PRAGMA cache_size = {-WRITER_CACHE_KIB}")
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def close(self) -> None:
        """Finish pending writes and close every connection."""
        if self._closed:
            return
        with self._lock:
            self._closing = True
            readers, self._readers = self._readers, None
        if readers is not None:
            readers.shutdown(wait=True)
        self._writer.shutdown(wait=True)
        self._closed = True
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
