"""The index of a shared archive (PostgreSQL), as the rest of Arxiu uses it.

:class:`SharedIndex` is what :class:`~app.core.index.service.Index` is for a folder archive,
with the same methods (:class:`~app.core.index.opening.ArchiveIndex`), over the server:

* the search is :class:`~app.core.index.postgres.engine.PgSearchEngine` (``tsvector`` and
  pgvector in the server, the SQLite engine's ranking);
* indexing is the worker's (:mod:`.chunker` chunks the records changed since they were last
  chunked, :func:`~app.core.index.postgres.worker.take_batch` embeds the chunks whose text
  lacks a vector), claimed by row locks, so that this process, other workstations and any
  ``arxiu index --worker`` share the work and none does a record or a text twice;
* the background run, pause, cancel, progress events and yielding to a waiting person are the
  SQLite indexer's own (:class:`SharedIndexer` is an :class:`~app.core.index.indexer.Indexer`
  that reads and writes the server).

Nothing is kept in memory but the query vectors: every search reads the server, so what other
workstations indexed is found at once. Records changed by this process wake the background
run; changes made elsewhere are looked for every :data:`FOLLOW_S` seconds while it runs.
A role without the write right searches and counts, and indexes nothing.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager

import psycopg

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn, connect, translate
from app.core.archive.store import Archive
from app.core.errors import ArchiveError
from app.core.index import indexer as indexer_module
from app.core.index.changes import IndexCounts
from app.core.index.embed_worker import EmbedWorker, index_models
from app.core.index.embedders import Embedder
from app.core.index.foreground import Foreground
from app.core.index.hits import SearchFilter, SearchHit, SearchMode
from app.core.index.indexer import (
    PROGRESS_KEY,
    Indexer,
    Progress,
)
from app.core.index.postgres import ann, chunker, worker
from app.core.index.postgres.counts import index_counts
from app.core.index.postgres.engine import PgSearchEngine, open_search
from app.core.index.postgres.reading import raw_reading
from app.core.index.progress import Phase
from app.core.index.run_control import IndexRunControl
from app.core.index.service import MODEL_SETTING, SEARCH_SYNC_MAX, IndexStats, index_stats

log = logging.getLogger(__name__)

FOLLOW_S = 15.0
"""Seconds between two looks for work left by other workstations, while the background
indexer runs (a look is a count of the records waiting and of the texts without a vector)."""


class SharedIndexer(Indexer):
    """The background indexer of a shared archive: each step chunks a batch of changed
    records (:class:`~.chunker.ChunkWalk`) or embeds a batch of chunks
    (:func:`~.worker.take_batch`), one committed transaction each; the run's control,
    progress and yielding are :class:`~app.core.index.indexer.Indexer`'s.

    Counts and the persisted progress are read through the archive's own connections (they
    work as long as the archive is open, as on SQLite); each run chunks and embeds on a
    connection of its own.

    Args:
        archive: the shared archive.
        embedders: the index's models.
        foreground: the "a person is waiting" signal.
        changed: set after each committed batch (the index then has its engine forget what
            it read of the models' vectors and of the index's size).
    """

    def __init__(
        self,
        archive: Archive,
        embedders: Sequence[Embedder],
        *,
        foreground: Foreground,
        changed: threading.Event | None = None,
    ) -> None:
        super().__init__(archive, embedders, foreground=foreground)
        self.url = archive.location
        self.changed = changed if changed is not None else threading.Event()
        """Set after each committed batch (the index clears it once the engine forgot)."""
        self._models = [e.model_id for e in self.embedders]
        self._conn: Conn | None = None
        self._walk: chunker.ChunkWalk | None = None
        self._chunked = False
        self._vector_after = 0
        self._writable: bool | None = None
        self._sees_all: bool | None = None

    # -- the server ----------------------------------------------------------------------------
    def may_write(self) -> bool:
        """Whether this role may chunk and embed (the write right; an archive opened
        read-only never does)."""
        if self._writable is None:
            if self.archive.db.read_only:
                self._writable = False
            else:
                with self._reading() as conn:
                    row = conn.execute(
                        "SELECT has_table_privilege('public.records', 'UPDATE') "
                        "AND has_table_privilege('public.index_records', 'UPDATE') "
                        "AND has_table_privilege('public.index_chunks', 'INSERT')"
                    ).fetchone()
                self._writable = bool(row and row[0])
        return self._writable

    def sees_all(self, conn: Conn) -> bool:
        """Whether this role reads every record (see :mod:`.chunker`)."""
        if self._sees_all is None:
            self._sees_all = chunker.sees_everything(conn)
        return self._sees_all

    def _run_conn(self) -> Conn:
        """The run's own connection (an embedding batch holds it for the model's time)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = connect(self.url)
            worker.prepare(self._conn, self.url)
        return self._conn

    def counts(self) -> IndexCounts:
        """The index's counts, read from the server now (as this role sees the index)."""
        return self._counts()

    def _reading(self) -> AbstractContextManager[Conn]:
        """A connection of the archive's own (server errors come out coded)."""
        return raw_reading(self.archive)

    def _counts(self) -> IndexCounts:
        with self._reading() as conn:
            return index_counts(conn, tuple(self._models))

    def waiting_records(self, limit: int | None = None) -> int:
        """Records waiting to be chunked, and orphans (counting stops at ``limit``), of
        those this role may chunk."""
        with self._reading() as conn:
            return chunker.count_waiting(conn, limit, sees_all=self.sees_all(conn))

    # -- the run -------------------------------------------------------------------------------
    def _phase_start(self) -> tuple[Phase, int]:
        self._walk, self._chunked, self._vector_after = None, False, 0
        if not self.may_write():
            return "embedding", 0
        waiting = self.waiting_records()
        if waiting:
            return "chunking", waiting
        return "embedding", self._remaining("embedding")

    def _remaining(self, phase: Phase) -> int:
        if phase == "chunking":
            return self.waiting_records()
        return sum(self._counts().missing.values())

    def _step(self) -> tuple[Phase, int]:
        """One committed batch: records to chunk first (every one, batch after batch), then
        chunks to embed; 0 when neither is left that this role may take."""
        if not self.may_write():
            return "embedding", 0
        conn = self._run_conn()
        try:
            if not self._chunked:
                if self._walk is None:
                    shapes = chunker.archive_shapes(self.archive)
                    self._walk = chunker.ChunkWalk(shapes, sees_all=self.sees_all(conn))
                count = self._walk.step(conn)
                if count.handled:
                    self.changed.set()
                    return "chunking", count.handled
                self._chunked, self._walk = True, None
            done = self._embed_step(conn)
        except psycopg.Error as exc:
            raise translate(exc, self.url) from exc
        if done:
            self.changed.set()
        return "embedding", done

    def _embed_step(self, conn: Conn) -> int:
        """Embed one batch of chunks (from the start again once at the end); the vectors
        written, every model together (0: nothing left to take)."""
        tally = worker.Tally({model: 0 for model in self._models})
        while True:
            last = worker.take_batch(
                conn,
                self.url,
                self.embedders,
                self._models,
                self._vector_after,
                indexer_module.VECTOR_BATCH,
                tally,
                self._load,
            )
            if last is None:
                if self._vector_after == 0:
                    return 0
                self._vector_after = 0
                continue
            self._vector_after = last
            if tally.result().vectors:
                return tally.result().vectors

    def _persist(self, progress: Progress) -> None:
        if not self.may_write():
            return
        value = json.dumps(
            {"state": progress.state, "done": progress.done, "total": progress.total}
        )
        with self._reading() as conn, conn.transaction():
            conn.execute(
                "INSERT INTO index_state(key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (PROGRESS_KEY, value),
            )

    def last_run(self) -> Progress | None:
        """The progress persisted by the last run on this archive (any process), if any."""
        with self._reading() as conn:
            row = conn.execute(
                "SELECT value FROM index_state WHERE key = %s", (PROGRESS_KEY,)
            ).fetchone()
        if row is None:
            return None
        data = json.loads(str(row[0]))
        return Progress(data["state"], int(data["done"]), int(data["total"]))

    def has_work(self) -> bool:
        """Whether anything waits that this role may do: a record to chunk, a text without
        a vector of one of the models (two short queries)."""
        if not self.may_write():
            return False
        if self.waiting_records(1):
            return True
        with self._reading() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM index_chunks c, unnest(%s::text[]) AS m(model) "
                "WHERE NOT EXISTS (SELECT 1 FROM index_vectors v "
                "WHERE v.content_hash = c.content_hash AND v.model = m.model))",
                (self._models,),
            ).fetchone()
        return bool(row and row[0])

    def close(self, timeout: float = 30.0) -> None:
        """Stop the thread (after the batch in flight) and close the run's connection."""
        super().close(timeout)
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class SharedIndex(IndexRunControl):
    """Search and indexing for one open shared archive (see the module).

    Args:
        archive: the open shared archive (its change listener wakes the indexer).
        embedder: the model or models (default: the ``index.model`` archive setting, else
            the default pair, as for a folder archive).
        isolate: run the models in a child process, as :class:`~app.core.index.Index` does.
        ann_above: vectors of a model from which its search builds an IVFFlat index
            (:class:`~app.core.index.postgres.engine.PgSearchEngine`).
    """

    indexer: SharedIndexer

    def __init__(
        self,
        archive: Archive,
        embedder: Embedder | Sequence[Embedder] | None = None,
        *,
        isolate: bool = False,
        ann_above: int | None = ann.ANN_ABOVE,
    ) -> None:
        if not archive.shared:
            raise ArchiveError(
                "archive.not_shared",
                "This archive is a folder: its index is the local one.",
                category="internal",
            )
        self.archive = archive
        self.embedders: Sequence[Embedder]
        self.worker: EmbedWorker | None
        self.embedders, self.worker = index_models(
            embedder, archive.meta(MODEL_SETTING), isolate=isolate
        )
        self.embedder = self.embedders[0]
        self.foreground = Foreground()
        """Held while a person waits on a search or a question: background indexing yields."""
        if self.worker is not None:
            self.foreground.add_listener(self.worker.set_waiting)
        self.engine: PgSearchEngine = open_search(
            archive.location, self.embedders, ann_above=ann_above
        )
        self._changed = threading.Event()
        self.indexer = SharedIndexer(
            archive, self.embedders, foreground=self.foreground, changed=self._changed
        )
        self._follow: threading.Thread | None = None
        self._closing = threading.Event()
        self._dirty = threading.Event()
        """Set when records may have changed here since a search last chunked them (at first,
        and on each change this process makes)."""
        self._dirty.set()
        archive.add_listener(self.indexer.notify)
        archive.add_listener(self._records_changed)

    # -- searching ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
        lang: str | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best chunks for ``query`` (one per record with ``group_by_record``),
        searched in the server; records changed since they were last chunked are chunked
        first, up to :data:`~app.core.index.service.SEARCH_SYNC_MAX` of them, as on SQLite.
        A person waits on it: background indexing yields meanwhile."""
        with self.person_waiting():
            self._chunk_changed()
            self._forget_if_changed()
            return self.engine.search(
                query, k=k, mode=mode, filter=filter, group_by_record=group_by_record, lang=lang
            )

    def person_waiting(self) -> AbstractContextManager[None]:
        """Hold "a person is waiting" for a ``with`` block (see :class:`Index`)."""
        return self.foreground.hold()

    def _records_changed(self, keys: list[RecordKey] | None = None) -> None:
        """An archive listener: this process changed records (the next search chunks them)."""
        self._dirty.set()

    def _chunk_changed(self) -> None:
        """Chunk what changed before a search, unless too much did or a batch would wait
        for rows an embedding batch holds (the search then answers from what is chunked).

        Only after a change made here (or at the first search): looking for changes costs a
        scan of the records, and records changed on other workstations are chunked there,
        by a worker, or by this index's background run (:data:`FOLLOW_S`)."""
        if not self._dirty.is_set() or not self.indexer.may_write():
            return
        self._dirty.clear()
        try:
            with self.engine.pool.connection() as conn:
                handled = chunker.sync(
                    conn,
                    self.archive,
                    at_most=SEARCH_SYNC_MAX,
                    lock_timeout=chunker.SEARCH_LOCK_TIMEOUT,
                    sees_all=self.indexer.sees_all(conn),
                )
        except psycopg.errors.LockNotAvailable:
            self._dirty.set()  # the next search tries again
            handled = 1  # some batches may have committed
        if handled:
            self._changed.set()

    def _forget_if_changed(self) -> None:
        """Have the engine read the models' vectors and the corpus size again after the
        index changed (its next search)."""
        if self._changed.is_set():
            self._changed.clear()
            self.engine.forget_models()

    # -- indexing ----------------------------------------------------------------------------
    def start(self) -> None:
        """Index in the background now, after every record change made here, and when work
        left by other workstations is found (every :data:`FOLLOW_S` seconds)."""
        self.indexer.start()
        if self._follow is None:
            self._follow = threading.Thread(
                target=self._follow_loop, name="arxiu-index-follow", daemon=True
            )
            self._follow.start()

    def _follow_loop(self) -> None:
        while not self._closing.wait(FOLLOW_S):
            if self.indexer.paused or not self.indexer.wait_idle(0):
                continue
            try:
                if self.indexer.has_work():
                    self.indexer.notify()
            except Exception:  # a lost server: the next search or run says so
                log.debug("looking for index work failed", exc_info=True)

    def index_now(self) -> Progress:
        """Chunk what changed and embed what waits, on the calling thread."""
        final = self.indexer.run()
        self._forget_if_changed()
        return final

    def pending(self) -> int:
        """Work items left: records to chunk plus texts to embed, for every model."""
        return self.indexer.pending()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until background indexing has nothing left to do; ``False`` on timeout."""
        return self.indexer.wait_idle(timeout)

    def rebuild(self) -> None:
        """Forget every chunk and chunked version (every record waits to be chunked again;
        the vectors of unchanged texts are reused)."""
        self.indexer.cancel()
        try:
            with self.engine.pool.connection() as conn:
                chunker.forget_all(conn)
        except psycopg.Error as exc:
            raise translate(exc, self.archive.location) from exc
        self.engine.forget_models()

    def stats(self) -> IndexStats:
        """Counts for status displays, read from the server (as this role sees the index)."""
        models = tuple(e.model_id for e in self.embedders)
        return index_stats(self.indexer.counts(), models)

    def sync_lexical(self) -> int:
        """Chunk every changed record now, without embedding (the lexical search is then
        current); how many records were handled (0 for a role that may not write)."""
        if not self.indexer.may_write():
            return 0
        with self.engine.pool.connection() as conn:
            handled = chunker.sync(conn, self.archive, sees_all=self.indexer.sees_all(conn))
        if handled:
            self.engine.forget_models()
        return handled

    def close(self) -> None:
        """Stop the indexer and the embedding process, if any, close the connections, and
        detach from the archive (the archive stays open)."""
        self._closing.set()
        self.archive.remove_listener(self.indexer.notify)
        self.archive.remove_listener(self._records_changed)
        if self.worker is not None:
            self.indexer.cancel()
            self.worker.close()
        self.indexer.close()
        if self._follow is not None:
            self._follow.join(5)
            self._follow = None
        self.engine.close()
