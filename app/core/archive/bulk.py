"""Bulk writes for importers: many records per transaction, matched by external ids.

A layer above the archive that keeps something in step with the records (the lexical index)
adds a *batch hook* (:meth:`BulkWriter.batch_hook`): it is called inside each batch's
transaction with the records the batch created or changed, values in memory
(:class:`~app.core.archive.bulk_plan.Written`), so the records and what is derived from them
commit together and nothing is read back. What it returns runs once the batch has committed.
A batch written record by record (the fallback for a bad record) calls no hook: what a hook
keeps must be brought current from the records afterwards anyway (``sync_chunks`` does).
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.bulk_plan import Replan, Written, upsert_batch
from app.core.archive.engine import Connection
from app.core.archive.model import Record, RecordKey
from app.core.archive.records import (
    EXTERNAL_ID_UPSERT,
    Values,
    insert_record,
    next_id,
    normalize_values,
    read_or_none,
    relation_fields,
    require_section,
    store_values,
)
from app.core.errors import ArxiuError

if TYPE_CHECKING:
    from app.core.archive.engine import Engine

ROW_ERRORS = (
    ValueError,  # UnicodeEncodeError: a lone surrogate; values that are not JSON
    TypeError,
    OverflowError,
    RecursionError,  # a value nested too deeply to serialise
    sqlite3.IntegrityError,
    sqlite3.InterfaceError,
    sqlite3.DataError,
)
"""Failures that concern one record's data, not the archive or the transaction."""

AfterCommit = Callable[[], None]
BatchHook = Callable[[Connection, list[Written]], AfterCommit | None]
"""``hook(conn, written)``: runs in a bulk upsert's transaction, after its rows are written;
may return what to run once the batch has committed (on the writer thread)."""


@dataclass(frozen=True)
class NewRecord:
    """A record to upsert in bulk (importers)."""

    section_tipo: str
    values: Values
    external_id: str | None = None
    section_id: int | None = None
    restricted: bool | None = None


@dataclass(frozen=True)
class UpsertResult:
    """What a bulk upsert did."""

    created: int
    updated: int
    unchanged: int
    keys: list[RecordKey]
    failed: tuple[tuple[int, str], ...] = ()
    """``(position in the batch, reason)`` of each record left out (``per_row`` only);
    ``keys`` then holds the keys of the other records, in order."""


class BulkWriter:
    """Bulk upserts; mixed into :class:`~app.core.archive.store.Archive`."""

    db: Engine
    _batch_hooks: tuple[BatchHook, ...] = ()

    def _notify(self, keys: list[RecordKey]) -> None:  # provided by Archive
        raise NotImplementedError

    @contextlib.contextmanager
    def batch_hook(self, hook: BatchHook) -> Iterator[None]:
        """Call ``hook`` in every bulk upsert submitted inside the ``with`` (see the module).

        A hook equal to one already in place (two imports at once into one archive) is not
        added twice: each batch runs it once.
        """
        if hook in self._batch_hooks:
            yield
            return
        self._batch_hooks = (*self._batch_hooks, hook)
        try:
            yield
        finally:
            self._batch_hooks = tuple(h for h in self._batch_hooks if h is not hook)

    # -- bulk --------------------------------------------------------------------------------
    def upsert_records(self, records: list[NewRecord], *, source: str = "") -> UpsertResult:
        """Create or update many records in one transaction; see :meth:`submit_upsert`."""
        return self.submit_upsert(records, source=source).result()

    def submit_upsert(
        self, records: list[NewRecord], *, source: str = "", per_row: bool = False
    ) -> Future[UpsertResult]:
        """Create or update many records in one transaction (importers).

        Records with an ``external_id`` are matched through ``external_ids`` (``source``,
        ``external_id``) so that importing the same data twice creates nothing twice. Returns at
        once: the caller may build the next batch while the writer thread commits this one.

        The batch is planned in memory and written in a few statements (:mod:`.bulk_plan`);
        if that fails on one record's data, it is written again record by record, in order.
        With ``per_row``, a record that cannot be stored (a lone surrogate, a value nested too
        deeply, an invalid value) does not roll the batch back: the batch is written again row
        by row, and each such record is left out and listed in :attr:`UpsertResult.failed`.
        Without it, any failure rolls the whole batch back and is raised.
        """

        hooks = self._batch_hooks
        after: list[AfterCommit] = []

        def run(conn: Connection) -> UpsertResult:
            conn.execute("SAVEPOINT upsert_batch")
            try:
                result, written = upsert_planned_written(conn, source, records)
            except Exception as exc:
                if not isinstance(exc, Replan) and row_error(exc) is None:
                    raise
                conn.execute("ROLLBACK TO upsert_batch")
                # record by record: the same result, or the same failure (left out with
                # per_row, raised without it, which rolls the whole batch back)
                result, written = upsert_in_order(conn, source, records, per_row=per_row), []
            conn.execute("RELEASE upsert_batch")
            for hook in hooks if written else ():
                done = hook(conn, written)
                if done is not None:
                    after.append(done)
            return result

        future = self.db.submit(run)
        future.add_done_callback(lambda done: self._notify_done(done, after))
        return future

    def _notify_done(self, future: Future[UpsertResult], after: list[AfterCommit]) -> None:
        if future.exception() is None:
            for done in after:
                done()
            self._notify(future.result().keys)

    def external_key(self, source: str, external_id: str) -> RecordKey | None:
        """The record imported from ``source`` under ``external_id``, if any."""
        with self.db.reading() as conn:
            row = conn.execute(
                "SELECT section_tipo, section_id FROM external_ids WHERE source = ? "
                "AND external_id = ?",
                (source, external_id),
            ).fetchone()
        return RecordKey(row[0], row[1]) if row else None


def row_error_types() -> tuple[type[BaseException], ...]:
    """:data:`ROW_ERRORS`, with PostgreSQL's own once its driver is loaded: inside a write,
    psycopg's errors arrive as they are (the engine codes them at the transaction's end), an
    integrity or data error (class 23 or 22: a text with a NUL, a number out of range) about one
    record's data as sqlite3's would."""
    psycopg = sys.modules.get("psycopg")  # not imported for a folder archive
    if psycopg is None:
        return ROW_ERRORS
    return (*ROW_ERRORS, psycopg.IntegrityError, psycopg.DataError)


def row_error(exc: BaseException) -> str | None:
    """Why one record could not be stored, when ``exc`` is about that record's data (else None)."""
    if isinstance(exc, ArxiuError):
        return exc.message if exc.category == "input" else None
    if isinstance(exc, row_error_types()):
        text = f"{type(exc).__name__}: {exc}"
        return text.encode("utf-8", "backslashreplace").decode("utf-8")[:300]
    return None


def upsert_planned(conn: Connection, source: str, records: list[NewRecord]) -> UpsertResult:
    """The batch written in a few statements (:func:`~.bulk_plan.upsert_batch`): what
    :func:`upsert_in_order` stores, or an exception (a row error, :class:`Replan`)."""
    return upsert_planned_written(conn, source, records)[0]


def upsert_planned_written(
    conn: Connection, source: str, records: list[NewRecord]
) -> tuple[UpsertResult, list[Written]]:
    """:func:`upsert_planned`, with the records the batch created or changed (for the batch
    hooks)."""
    done = upsert_batch(conn, source, records)
    counts = Counter(done.outcomes)
    result = UpsertResult(counts["created"], counts["updated"], counts["unchanged"], done.keys)
    return result, done.written


def upsert_in_order(
    conn: Connection, source: str, records: list[NewRecord], *, per_row: bool = False
) -> UpsertResult:
    """The batch written record by record, in order (the reference :func:`upsert_planned`
    reproduces); the first record that cannot be stored raises, or with ``per_row`` is left
    out (one savepoint per record) and listed in :attr:`UpsertResult.failed`."""
    return (_upsert_each if per_row else _upsert_all)(conn, source, records)


def _upsert_all(conn: Connection, source: str, records: list[NewRecord]) -> UpsertResult:
    batch = _Batch(conn)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    keys: list[RecordKey] = []
    for item in records:
        outcome, key = _upsert_one(conn, batch, source, item)
        counts[outcome] += 1
        keys.append(key)
    return UpsertResult(counts["created"], counts["updated"], counts["unchanged"], keys)


def _upsert_each(conn: Connection, source: str, records: list[NewRecord]) -> UpsertResult:
    """Like :func:`_upsert_all`, one savepoint per record, leaving out those that fail."""
    batch = _Batch(conn)
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    keys: list[RecordKey] = []
    failed: list[tuple[int, str]] = []
    for position, item in enumerate(records):
        conn.execute("SAVEPOINT upsert_row")
        try:
            outcome, key = _upsert_one(conn, batch, source, item)
        except Exception as exc:
            reason = row_error(exc)
            if reason is None:
                raise
            conn.execute("ROLLBACK TO upsert_row")
            conn.execute("RELEASE upsert_row")
            failed.append((position, reason))
            continue
        conn.execute("RELEASE upsert_row")
        counts[outcome] += 1
        keys.append(key)
    return UpsertResult(
        counts["created"], counts["updated"], counts["unchanged"], keys, tuple(failed)
    )


def _upsert_one(
    conn: Connection, batch: _Batch, source: str, item: NewRecord
) -> tuple[str, RecordKey]:
    """Create or update one record; ``("created" | "updated" | "unchanged", key)``."""
    clean = normalize_values(item.values)
    key = _resolve_external(conn, source, item)
    if key is None and item.section_id is not None:
        key = RecordKey(item.section_tipo, item.section_id)
    before = read_or_none(conn, key) if key is not None else None
    if before is None:
        key = key or RecordKey(item.section_tipo, batch.next_id(item.section_tipo))
        insert_record(conn, key, clean, item.restricted, batch.relations(key.section_tipo))
        outcome = "created"
    elif _upsert_existing(conn, before, clean, item.restricted):
        outcome = "updated"
    else:
        outcome = "unchanged"
    assert key is not None
    if item.external_id is not None:
        conn.execute(
            EXTERNAL_ID_UPSERT,
            (source, item.external_id, key.section_tipo, key.section_id),
        )
    return outcome, key


def _upsert_existing(
    conn: Connection, before: Record, clean: Values, restricted: bool | None
) -> bool:
    if restricted is None:  # the source says nothing: a person's restriction stays
        restricted = before.restricted
    if before.values == clean and before.restricted == restricted:
        return False
    store_values(conn, before.key, clean, before.version + 1, restricted=restricted)
    return True


class _Batch:
    """Per-transaction caches for bulk writes: next ids and relation fields per section."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._next: dict[str, int] = {}
        self._relations: dict[str, list[str]] = {}

    def next_id(self, tipo: str) -> int:
        """A fresh id in ``tipo`` (ids handed out in this batch are not reused)."""
        if tipo not in self._next:
            require_section(self.conn, tipo)
            self._next[tipo] = next_id(self.conn, tipo)
        sid = self._next[tipo]
        self._next[tipo] = sid + 1
        return sid

    def relations(self, tipo: str) -> list[str]:
        """The relation fields of ``tipo``."""
        if tipo not in self._relations:
            self._relations[tipo] = relation_fields(self.conn, tipo)
        return self._relations[tipo]


def _resolve_external(conn: Connection, source: str, item: NewRecord) -> RecordKey | None:
    if item.external_id is None:
        return None
    row = conn.execute(
        "SELECT section_tipo, section_id FROM external_ids WHERE source = ? AND external_id = ?",
        (source, item.external_id),
    ).fetchone()
    return None if row is None else RecordKey(row[0], row[1])
