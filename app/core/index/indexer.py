"""The background indexer: incremental, resumable, pausable, cancellable, with progress events.

Work is never queued in memory only: what is left is read from the database each time (records
whose version differs from the indexed one, indexed records that were deleted, chunks without a
vector for one of the index's models), and each batch commits in one transaction. A killed
process therefore resumes where it stopped, redoing at most the batch that was in flight.

Records are chunked first and their chunks committed at once, without waiting for any model:
the lexical index (FTS5, kept by triggers) is then complete, and :func:`sync_chunks` does the
same at import time. Vectors follow, one batch per model in turn, so that an archive indexed by
an earlier version with MiniLM alone gets its multilingual vectors in the background while
every search answers from what exists.

The indexer runs on its own thread; ``notify()`` (wired to ``Archive.add_listener``) only sets an
event, so the caller's event loop is never blocked. Progress listeners are called on the indexer
thread: a Qt front end re-emits them as a signal, an asyncio one uses :meth:`subscribe_async`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol, runtime_checkable

from app.core.archive.model import RecordKey
from app.core.archive.store import Archive
from app.core.errors import ArxiuError, IndexError_
from app.core.index import changes, storage
from app.core.index.chunk_context import (
    DbSql,
    archive_trails,
    chunk_with_trails,
    mark_changed,
)
from app.core.index.embedders import Embedder, Vectors
from app.core.index.foreground import Foreground
from app.core.index.progress import IndexProgress, Phase, index_progress
from app.core.index.section_shapes import SectionShapes
from app.core.index.storage import RecordWork, WriteResult
from app.core.phrases import Phrase

log = logging.getLogger(__name__)

State = Literal["idle", "running", "paused", "cancelled", "error"]
RECORD_BATCH = 1000
"""Records chunked per committed batch of a background run (no model involved: cheap)."""
SYNC_BATCH = 5000
"""Records chunked per transaction by :func:`sync_chunks` (and read per query)."""
BULK_MIN = 2000
"""Records to chunk from which :func:`sync_chunks` may rebuild FTS5 instead of using triggers."""
BULK_WAVE = 100_000
"""Records chunked in memory, then written in one transaction, by a bulk sync."""
VECTOR_BATCH = 512
"""Chunk texts embedded per committed batch and model, in one encode call so that
sentence-transformers sorts a large batch by length and pads little (measured against raw
encode of the same chunks: 128 records 0.85x, 256 0.91x, 512 1.06x)."""
PROGRESS_KEY = "progress"
COVERAGE_EVERY = 2.0
"""Seconds between two measurements of the dense coverage during a run (at least 20 times
what the last one took: on a large archive counting is a scan of every chunk per model, and
it must stay a small share of the run)."""


@dataclass(frozen=True)
class Progress:
    """A snapshot of the indexer for a progress bar.

    ``done`` and ``total`` count the work items of the run's current ``phase``: records to
    (re)chunk (``"chunking"``), then distinct chunk texts to embed, one per model that lacks
    its vector (``"embedding"``). Each total is the real count, listed when its phase starts
    (the texts exist only once their records are chunked); within a phase it never falls and
    grows only when records change during the run. ``items`` counts every item of the run.
    """

    state: State = "idle"
    done: int = 0
    total: int = 0
    phase: Phase | None = None
    items: int = 0
    """Work items finished by this run, every phase together."""
    yielding: bool = False
    """Waiting for a person's search or question to end before the next batch
    (:mod:`~app.core.index.foreground`)."""
    error: ArxiuError | None = None
    loading: str | None = None
    """The model being loaded into memory just now (its id), if any."""
    dense: float | None = None
    """Share of the chunk texts embedded by every model (1.0: semantic search sees all)."""
    models: tuple[IndexProgress, ...] = ()
    """Each model's chunks embedded of all, measured with ``dense`` (see
    :mod:`~app.core.index.progress`)."""

    @property
    def fraction(self) -> float:
        """``done / total`` (1.0 when there is nothing to do)."""
        return self.done / self.total if self.total else 1.0


ProgressListener = Callable[[Progress], None]
WrittenCallback = Callable[[WriteResult], None]


@runtime_checkable
class BackgroundEmbedder(Protocol):
    """An embedder that runs indexing batches apart from query vectors, below them
    (:class:`~app.core.index.embed_worker.WorkerEmbedder`)."""

    def embed_background(self, texts: list[str]) -> Vectors:
        """``texts`` embedded as an indexing batch (yields to queries and waiting people)."""
        ...


def embed_batch(embedder: Embedder, texts: list[str]) -> Vectors:
    """``texts`` embedded as indexing work: in the background lane where ``embedder`` has one,
    so that a query vector is never queued behind the batch."""
    if isinstance(embedder, BackgroundEmbedder):
        return embedder.embed_background(texts)
    return embedder.embed(texts)


class Cancelled(Exception):
    """Raised inside the run loop when :meth:`Indexer.cancel` was called."""


class Paused(Exception):
    """Raised inside a run on the caller's thread when :meth:`Indexer.pause` was called."""


_CHUNK_LISTENERS: weakref.WeakKeyDictionary[Archive, list[WrittenCallback]] = (
    weakref.WeakKeyDictionary()
)


def as_embedders(embedders: Embedder | Sequence[Embedder]) -> tuple[Embedder, ...]:
    """One embedder or several, as a tuple."""
    if isinstance(embedders, (list, tuple)):
        return tuple(embedders)
    return (embedders,)  # type: ignore[return-value]


def chunk_batch(archive: Archive, keys: list[RecordKey], orphans: list[RecordKey]) -> WriteResult:
    """(Re)chunk ``keys`` and forget ``orphans`` in one transaction; no model is involved.

    The records are read in bulk; one already chunked at its current version is skipped (a
    key listed twice costs nothing) and one deleted meanwhile is left to the next orphan scan.
    """
    work = chunk_work(archive, keys)
    if not work and not orphans:
        return WriteResult([], [])
    result = write_work(archive, work, orphans)
    chunks_written(archive, result)
    return result


def chunk_work(archive: Archive, keys: list[RecordKey]) -> list[RecordWork]:
    """The chunks of the records of ``keys`` that need them (read in bulk, not written; each
    record of a hierarchy led by its trail, :mod:`~app.core.index.chunk_context`)."""
    shapes = SectionShapes(archive)
    trails = archive_trails(shapes)
    work: list[RecordWork] = []
    for start in range(0, len(keys), SYNC_BATCH):
        with archive.sqlite.reading() as conn:
            records = list(storage.read_records(conn, keys[start : start + SYNC_BATCH]).values())
        for record, chunks in zip(records, chunk_with_trails(records, shapes, trails), strict=True):
            work.append(RecordWork(record.key, record.version, record.restricted, chunks))
    return work


def write_work(
    archive: Archive, work: list[RecordWork], orphans: list[RecordKey], *, bulk: bool = False
) -> WriteResult:
    """Write ``work`` and forget ``orphans`` in one transaction, marking to chunk again what is
    under a record whose chunks change (:func:`~app.core.index.chunk_context.mark_changed`)."""
    hierarchies = SectionShapes(archive).hierarchy

    def write(conn: sqlite3.Connection) -> WriteResult:
        mark_changed(DbSql(conn), hierarchies, work)
        if bulk:
            return storage.bulk_write_records(conn, work)
        return storage.write_records(conn, work, orphans)

    return archive.sqlite.write(write)


def _bulk_write(archive: Archive, work: list[RecordWork]) -> None:
    chunks_written(archive, write_work(archive, work, [], bulk=True))


def chunks_written(archive: Archive, result: WriteResult) -> None:
    """Tell the chunk listeners of ``archive`` (the indexers' ``on_written``) that ``result``'s
    chunks were committed."""
    for listener in list(_CHUNK_LISTENERS.get(archive, [])):
        listener(result)


def pending_work(archive: Archive) -> tuple[list[RecordKey], list[RecordKey]]:
    """Every record to (re)chunk and every indexed record gone, in one scan each (none when
    no record changed since a scan found nothing: see :func:`changes.pending_unchanged`)."""
    with archive.sqlite.reading() as conn:
        unchanged, gen = changes.pending_unchanged(conn)
        if unchanged:
            return [], []
        todo = storage.pending_records(conn)
        orphans = storage.orphan_records(conn)
    if not todo and not orphans:
        changes.mark_synced(archive, gen)
    return [key for key, _ in todo], orphans


def sync_chunks(archive: Archive, *, at_most: int | None = None) -> int:
    """Chunk every record changed since it was last chunked (the lexical index is then
    current); returns how many records were handled. Called after every import, and before a
    search with ``at_most``: when more records than that are to (re)chunk, nothing is done
    (the background indexer gets to them) and 0 is returned.

    The work is listed once (listing it again for every batch of 256 records made the Tate
    import take 847 s). When it is a large share of the archive (a first import), up to
    :data:`BULK_WAVE` records are written in one transaction with one FTS5 rebuild
    (:func:`storage.bulk_write_records`); otherwise :data:`SYNC_BATCH` records a transaction,
    the triggers keeping FTS5 current.

    A shared archive's records are chunked in its server, as its index workers chunk them
    (:func:`app.core.index.postgres.chunker.sync_archive`).
    """
    if archive.shared:
        from app.core.index.postgres.chunker import sync_archive

        return sync_archive(archive, at_most=at_most)
    handled = 0
    while True:
        todo, orphans = pending_work(archive)
        if not todo and not orphans:
            return handled
        if at_most is not None and len(todo) + len(orphans) > at_most:
            return handled
        chunk_batch(archive, [], orphans)
        with archive.sqlite.reading() as conn:
            indexed = storage.count_indexed_records(conn)
        bulk = len(todo) >= BULK_MIN and 2 * len(todo) >= indexed
        step = BULK_WAVE if bulk else SYNC_BATCH
        for start in range(0, len(todo), step):
            part = todo[start : start + step]
            if bulk:
                _bulk_write(archive, chunk_work(archive, part))
            else:
                chunk_batch(archive, part, [])
        handled += len(todo) + len(orphans)


class Indexer:
    """Keeps one archive's index up to date on a background thread.

    Args:
        archive: the archive.
        embedders: the index's model, or its models (every chunk gets a vector from each).
        on_written: called after each committed batch (to update in-memory matrices).
        foreground: the "a person is waiting" signal: while it is held no new batch starts
            (default: one of its own, see :meth:`person_waiting`).
    """

    def __init__(
        self,
        archive: Archive,
        embedders: Embedder | Sequence[Embedder],
        on_written: WrittenCallback | None = None,
        *,
        foreground: Foreground | None = None,
    ) -> None:
        self.archive = archive
        self.foreground = foreground if foreground is not None else Foreground()
        self.embedders = as_embedders(embedders)
        self.embedder = self.embedders[0]
        self.on_written = on_written
        if on_written is not None:
            _CHUNK_LISTENERS.setdefault(archive, []).append(on_written)
        self._listeners: list[ProgressListener] = []
        self._progress = Progress()
        self._wake = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._idle = threading.Event()
        self._idle.set()
        self._cancel = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._todo: list[RecordKey] = []
        self._orphans: list[RecordKey] = []
        self._after: dict[str, str] = {}
        self._coverage_cost = 0.0
        """Per model, the last content hash of its last batch (where the next one starts)."""

    # -- control -----------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or wake) the background thread; it indexes whatever is pending."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop = False
                self._thread = threading.Thread(
                    target=self._loop, name="arxiu-indexer", daemon=True
                )
                self._thread.start()
        self.notify()

    def notify(self, keys: list[RecordKey] | None = None) -> None:
        """Something changed: look for work (never blocks; ``Archive`` listener signature)."""
        self._idle.clear()
        self._cancel.clear()
        self._wake.set()

    def pause(self) -> None:
        """Stop after the batch in flight, keeping the run's place."""
        self._running.clear()

    def resume(self) -> None:
        """Continue a paused run."""
        self._running.set()

    def cancel(self) -> None:
        """Abandon the current run after the batch in flight (finished batches stay indexed)."""
        self._cancel.set()
        self._running.set()
        self.foreground.interrupt()

    def person_waiting(self) -> contextlib.AbstractContextManager[None]:
        """Hold "a person is waiting" for a ``with`` block: no new batch starts until every
        holder has left (the batch in flight finishes first)."""
        return self.foreground.hold()

    @property
    def paused(self) -> bool:
        """Whether :meth:`pause` is in force."""
        return not self._running.is_set()

    def close(self, timeout: float = 30.0) -> None:
        """Stop the thread (after the batch in flight) and wait for it."""
        listeners = _CHUNK_LISTENERS.get(self.archive, [])
        if self.on_written in listeners:
            listeners.remove(self.on_written)
        self._stop = True
        self.cancel()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # -- waiting -----------------------------------------------------------------------------
    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no work is left (or the run ended); ``False`` on timeout."""
        return self._idle.wait(timeout)

    async def wait_idle_async(self, timeout: float | None = None) -> bool:
        """:meth:`wait_idle` for asyncio code: waits in an executor, never on the loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.wait_idle, timeout)

    # -- progress ----------------------------------------------------------------------------
    def add_listener(self, listener: ProgressListener) -> None:
        """Call ``listener(progress)`` (on the indexer thread) at each change."""
        self._listeners.append(listener)

    def remove_listener(self, listener: ProgressListener) -> None:
        """Stop calling ``listener``."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def subscribe_async(
        self, loop: asyncio.AbstractEventLoop, listener: ProgressListener
    ) -> ProgressListener:
        """Deliver progress to ``listener`` on ``loop``'s thread; returns the wrapper to remove."""

        def forward(progress: Progress) -> None:
            loop.call_soon_threadsafe(listener, progress)

        self.add_listener(forward)
        return forward

    def progress(self) -> Progress:
        """The latest progress snapshot."""
        return self._progress

    def _emit(self, progress: Progress) -> None:
        self._progress = progress
        for listener in list(self._listeners):
            try:
                listener(progress)
            except Exception:  # a broken listener must not stop indexing
                log.exception("index progress listener failed")

    # -- the run -----------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                break
            try:
                self.run(wait_when_paused=True)
            except Exception as exc:  # a bug: log it, report it, keep the thread alive
                log.exception("indexing failed")
                error = IndexError_(
                    "index.failed",
                    Phrase.of("Indexing failed: {why}", why=str(exc)),
                    category="internal",
                )
                self._emit(replace(self._progress, state="error", error=error))
                self._idle.set()
        self._idle.set()

    def run(self, *, wait_when_paused: bool = False) -> Progress:
        """Index everything pending now, on the calling thread; returns the final progress.

        Runs are serialised: a second caller waits for the first. Each batch's progress is
        persisted (``index_state``), so a restarted app can show how far the last run got.
        A pause stops the run after the batch in flight: the background thread waits there
        for :meth:`resume` (``wait_when_paused``); a caller's own run returns, paused, and
        the next run carries on where it stopped.
        """
        with self._run_lock:
            self._cancel.clear()
            try:
                final = self._run_batches(wait_when_paused)
            except Cancelled:
                final = replace(self._progress, state="cancelled")
            except Paused:
                final = replace(self._progress, state="paused")
            except ArxiuError as error:  # closing abandons the batch in flight: no error
                stopping = self._stop or self._cancel.is_set()
                final = replace(self._progress, state="cancelled" if stopping else "error")
                final = final if stopping else replace(final, error=error)
            self._emit(final)
            self._persist(final)
        if not self._wake.is_set():
            self._idle.set()
        return final

    def _run_batches(self, wait_when_paused: bool) -> Progress:
        phase, total = self._phase_start()
        progress = Progress("running", 0, total, phase=phase)
        progress = replace(progress, dense=self.coverage(), models=self.figures())
        measured = time.monotonic()
        self._emit(progress)
        while True:
            self._checkpoint(progress, wait_when_paused)
            phase, step = self._step()
            if step == 0:
                idle = replace(progress, state="idle", total=progress.done, yielding=False)
                return replace(idle, dense=self.coverage(), models=self.figures())
            if phase != progress.phase:  # its items are listed now: a real total
                progress = replace(progress, phase=phase, done=0, total=0)
            done = progress.done + step
            total = progress.total if done <= progress.total else done + self._remaining(phase)
            if time.monotonic() - measured > max(COVERAGE_EVERY, 20 * self._coverage_cost):
                before = time.monotonic()
                progress = replace(progress, dense=self.coverage(), models=self.figures())
                measured = time.monotonic()
                self._coverage_cost = measured - before
            progress = replace(progress, done=done, total=total, items=progress.items + step)
            self._emit(progress)
            self._persist(progress)

    def _phase_start(self) -> tuple[Phase, int]:
        """The phase a run starts in and its real item count (the records to chunk, listed
        here once for the run's first wave; else the texts every model lacks)."""
        if not self._todo and not self._orphans:
            self._todo, self._orphans = pending_work(self.archive)
        if self._todo or self._orphans:
            return "chunking", self._remaining("chunking")
        return "embedding", self._remaining("embedding")

    def _remaining(self, phase: Phase) -> int:
        """Items of ``phase`` still to do: records listed and not chunked yet, or texts
        lacking a vector of a model (counted after the last committed batch)."""
        if phase == "chunking":
            return len(self._todo) + len(self._orphans)
        return sum(self._counts().missing.values())

    def _persist(self, progress: Progress) -> None:
        value = json.dumps(
            {"state": progress.state, "done": progress.done, "total": progress.total}
        )
        self.archive.sqlite.write(lambda conn: storage.set_state(conn, PROGRESS_KEY, value))

    def last_run(self) -> Progress | None:
        """The progress persisted by the last run on this archive (any process), if any."""
        with self.archive.sqlite.reading() as conn:
            value = storage.get_state(conn, PROGRESS_KEY)
        if value is None:
            return None
        data = json.loads(value)
        return Progress(data["state"], int(data["done"]), int(data["total"]))

    def _checkpoint(self, progress: Progress, wait_when_paused: bool) -> None:
        """Between two batches: wait while paused or while a person waits, stop if cancelled."""
        while True:
            if not self._running.is_set():
                self._emit(replace(progress, state="paused"))
                if not wait_when_paused:
                    raise Paused
                self._running.wait()
                self._emit(replace(progress, state="running"))
            if self._cancel.is_set():
                raise Cancelled
            if not self.foreground.waiting:
                return
            self._emit(replace(progress, yielding=True))
            self.foreground.wait_clear(self._interrupted)  # no polling: woken by the last holder
            self._emit(replace(progress, yielding=False))

    def _interrupted(self) -> bool:
        return self._stop or self._cancel.is_set()

    def pending(self) -> int:
        """Work items left: records to chunk plus texts to embed, for every model."""
        return self._counts().pending()

    def coverage(self) -> float:
        """Share of distinct chunk texts that have a vector of every model (1.0 when none)."""
        counts = self._counts()
        texts = counts.texts * len(self.embedders)
        return 1.0 - sum(counts.missing.values()) / texts if texts else 1.0

    def figures(self) -> tuple[IndexProgress, ...]:
        """Each model's chunks embedded of all (the status bar's and the CLI's figure)."""
        return index_progress(self._counts(), (e.model_id for e in self.embedders))

    def estimate(self) -> int:
        """:meth:`pending`, counting one text per model for each record still to chunk."""
        counts = self._counts()
        return counts.pending_records * (1 + len(self.embedders)) + sum(counts.missing.values())

    def _counts(self) -> changes.IndexCounts:
        """The counts (cached while nothing changes, see :mod:`.changes`)."""
        return changes.counts(self.archive, tuple(e.model_id for e in self.embedders))

    def step(self) -> int:
        """Do one batch of work; returns how many items it finished (0: nothing left)."""
        return self._step()[1]

    def _step(self) -> tuple[Phase, int]:
        """Do one batch of work; returns its phase and how many items it finished.

        Changed records are chunked first (all of them, batch after batch, before any
        embedding); then each model embeds one batch of the texts it lacks. The records to
        chunk are listed once per wave (one scan of ``records``), and each model reads the
        chunks it lacks in hash order from where its last batch stopped.
        """
        if not self._todo and not self._orphans:
            self._todo, self._orphans = pending_work(self.archive)
        if self._todo or self._orphans:
            keys, self._todo = self._todo[:RECORD_BATCH], self._todo[RECORD_BATCH:]
            orphans, self._orphans = self._orphans[:RECORD_BATCH], self._orphans[RECORD_BATCH:]
            self._index_records(keys, orphans)
            return "chunking", len(keys) + len(orphans)
        done = 0
        for embedder in self.embedders:
            missing = self._missing(embedder.model_id)
            if missing:
                self._embed_missing(embedder, missing)
                done += len(missing)
        return "embedding", done

    def _missing(self, model: str) -> list[tuple[str, str]]:
        """The next batch of texts ``model`` lacks (from the start again once at the end)."""
        after = self._after.get(model, "")
        with self.archive.sqlite.reading() as conn:
            missing = storage.missing_vectors(conn, model, VECTOR_BATCH, after)
            if not missing and after:
                missing = storage.missing_vectors(conn, model, VECTOR_BATCH)
        self._after[model] = missing[-1][0] if missing else ""
        return missing

    def _index_records(self, keys: list[RecordKey], orphans: list[RecordKey]) -> None:
        chunk_batch(self.archive, keys, orphans)

    def _embed_missing(self, embedder: Embedder, missing: list[tuple[str, str]]) -> None:
        self._load(embedder)
        model = embedder.model_id
        vectors = embed_batch(embedder, [text for _, text in missing])
        by_hash = {h: v for (h, _), v in zip(missing, vectors, strict=True)}
        self.archive.sqlite.write(lambda conn: storage.write_vectors(conn, model, by_hash))
        with self.archive.sqlite.reading() as conn:
            ids = storage.chunks_with_hashes(conn, list(by_hash))
        if self.on_written:
            self.on_written(WriteResult([], ids, model))

    def _load(self, embedder: Embedder) -> None:
        """Load ``embedder``'s model, saying so in the progress while it loads."""
        if getattr(embedder, "loaded", True):
            return
        before = self._progress
        self._emit(replace(before, loading=embedder.model_id))
        try:
            getattr(embedder, "load", lambda: None)()
        finally:
            self._emit(replace(self._progress, loading=None))
