"""The index of one archive, as the rest of Arxiu uses it.

::

    index = Index(archive)              # bundled MiniLM; Index(archive, HashingEmbedder()) in tests
    index.start()                       # background indexing, then incremental on every change
    await index.indexer.wait_idle_async()
    hits = index.search("quan ens van fer marxar", k=5,
                        filter=SearchFilter(exclude_restricted=True))
    index.close()

``Index`` implements :class:`~app.core.index.hits.Searcher`. Searching while indexing is fine:
the in-memory matrices (one per model) are updated after every committed batch, and a search
answers at once from what is indexed so far (:meth:`Index.stats` says how complete each model's
vectors are).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np

from app.core.archive.store import Archive
from app.core.index import changes, storage, vector_cache
from app.core.index.dense import DenseMatrix, Vectors
from app.core.index.embed_worker import EmbedWorker, index_models
from app.core.index.embedders import Embedder
from app.core.index.foreground import Foreground
from app.core.index.hits import Searcher, SearchFilter, SearchHit, SearchMode
from app.core.index.indexer import (
    Indexer,
    Progress,
    sync_chunks,
)
from app.core.index.progress import IndexProgress, index_progress
from app.core.index.run_control import IndexRunControl
from app.core.index.search import SearchEngine
from app.core.index.storage import WriteResult

SEARCH_SYNC_MAX = 5000
"""Records left to chunk up to which a search chunks them first (the demo's 192 records on a
first start: 0.2 s); with more, it answers from what is chunked and the indexer carries on."""
COMPRESS_ABOVE = 500_000
"""Chunk count above which the matrix is kept compressed (sign bits + int8) by default."""

MODEL_SETTING = "index.model"


@dataclass(frozen=True)
class IndexStats:
    """What the index holds: its models, chunks, vectors, work items pending.

    ``model`` and ``vectors`` are those of the first model; ``coverage`` gives, for every
    model, the share of distinct chunk texts that have its vector (1.0: complete);
    ``progress`` every model's chunks embedded of all (the figure the status bar shows too,
    :mod:`~app.core.index.progress`).
    """

    model: str
    chunks: int
    vectors: int
    pending: int
    coverage: tuple[tuple[str, float], ...] = ()
    progress: tuple[IndexProgress, ...] = field(default=(), compare=False)

    @property
    def dense_complete(self) -> float:
        """The least complete model's share of embedded texts (1.0 when all are done)."""
        return min((share for _, share in self.coverage), default=1.0)


def index_stats(counts: changes.IndexCounts, models: tuple[str, ...]) -> IndexStats:
    """The :class:`IndexStats` of ``counts`` for ``models`` (the first is the index's main
    model), whichever engine counted them."""
    coverage = tuple(
        (model, 1.0 - counts.missing[model] / counts.texts if counts.texts else 1.0)
        for model in models
    )
    model = models[0]
    return IndexStats(
        model,
        counts.chunks,
        counts.vectors[model],
        counts.pending(),
        coverage,
        index_progress(counts, models),
    )


class Index(IndexRunControl):
    """Search and indexing for one open archive (a folder: SQLite; a shared archive's index is
    :class:`~app.core.index.postgres.service.SharedIndex`, and
    :func:`~app.core.index.opening.open_index` gives the one an archive needs).

    Args:
        archive: the open archive (its change listener is wired to the indexer).
        embedder: the model or models (default: the ``index.model`` archive setting, else
            ``ARXIU_EMBEDDING_MODEL``, else the bundled all-MiniLM-L6-v2 *and* USE
            multilingual, see :func:`~app.core.index.embedders.default_embedders`).
        compressed: keep the vectors compressed in memory (default: above 500k chunks).
        isolate: run the models in a child process (:mod:`~app.core.index.embed_worker`),
            for indexing and for query vectors alike, so this process never imports torch
            nor runs model code (the desktop app: its GUI thread stays responsive);
            default: in this process (CLI, scripts, tests).
    """

    def __init__(
        self,
        archive: Archive,
        embedder: Embedder | Sequence[Embedder] | None = None,
        *,
        compressed: bool | None = None,
        isolate: bool = False,
    ) -> None:
        self.archive = archive
        self.embedders: Sequence[Embedder]
        self.worker: EmbedWorker | None
        self.embedders, self.worker = index_models(
            embedder, archive.meta(MODEL_SETTING), isolate=isolate
        )
        self.embedder = self.embedders[0]
        self.compressed = compressed
        self._matrices: dict[str, DenseMatrix] = {}
        self._lock = threading.RLock()
        changes.install(archive)
        self.foreground = Foreground()
        """Held while a person waits on a search or a question: background indexing yields."""
        if self.worker is not None:
            self.foreground.add_listener(self.worker.set_waiting)
        self.indexer = Indexer(
            archive, self.embedders, on_written=self._on_written, foreground=self.foreground
        )
        self.engine: Searcher = SearchEngine(archive.sqlite, self.embedders, self.matrix_of)
        archive.add_listener(self.indexer.notify)

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
        """The ``k`` best chunks for ``query`` (one per record with ``group_by_record``).

        ``lang`` is the query's language (``lg-cat``…, default: guessed from the query;
        ``lg-nolan``: no language preference); see :mod:`app.core.index.ranking`.

        Records changed since they were last chunked (on a first start, the whole demo, before
        the background indexer reaches them) are chunked first, up to :data:`SEARCH_SYNC_MAX`
        of them, so the words of every record are found even before any vector exists.

        A person waits on it: background indexing yields meanwhile (:meth:`person_waiting`).
        """
        with self.person_waiting():
            self._chunk_changed()
            return self.engine.search(
                query, k=k, mode=mode, filter=filter, group_by_record=group_by_record, lang=lang
            )

    def person_waiting(self) -> AbstractContextManager[None]:
        """Hold "a person is waiting" for a ``with`` block (a search, a streaming turn): the
        indexer starts no new batch and the embedding process no new slice of one until every
        holder has left (:mod:`~app.core.index.foreground`)."""
        return self.foreground.hold()

    def _chunk_changed(self) -> None:
        """Chunk what changed before a search (two key lookups when nothing did)."""
        if self.archive.sqlite.read_only:
            return
        with self.archive.sqlite.reading() as conn:
            unchanged, _ = changes.pending_unchanged(conn)
        if not unchanged:
            sync_chunks(self.archive, at_most=SEARCH_SYNC_MAX)

    def matrix(self) -> DenseMatrix:
        """The in-memory vectors of the first model (loaded on first use)."""
        return self.matrix_of(self.embedder)

    def matrix_of(self, embedder: Embedder) -> DenseMatrix:
        """The in-memory vectors of ``embedder``'s model (loaded on first use)."""
        with self._lock:
            found = self._matrices.get(embedder.model_id)
            if found is None:
                found = self._matrices[embedder.model_id] = self._load(embedder)
            return found

    def _load(self, embedder: Embedder) -> DenseMatrix:
        model = embedder.model_id
        with self.archive.sqlite.reading() as conn:
            count = int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])
            dims = conn.execute(
                "SELECT dim FROM index_vectors WHERE model = ? LIMIT 1", (model,)
            ).fetchone()
            kept = count >= vector_cache.CACHE_ABOVE and not self.archive.sqlite.read_only
            stamp = vector_cache.current(conn, model) if kept else None
            generation = changes.generation(conn, "index") if kept else None
        dim = int(dims[0]) if dims else embedder.dim
        compressed = self.compressed if self.compressed is not None else count > COMPRESS_ABOVE
        matrix = DenseMatrix(dim, compressed=compressed)
        matrix.exact_lookup = lambda ids: self._exact(model, ids)
        folder = self.archive.folder
        cached = None if stamp is None else vector_cache.load(folder, model, dim, stamp)
        if cached is not None:
            matrix.add(cached.ids, cached.vectors, cached.sections, cached.flags)
            return matrix
        with self.archive.sqlite.reading() as conn:
            cursor = conn.execute(
                "SELECT c.id, c.section_tipo, c.restricted, v.vector FROM index_chunks c "
                "JOIN index_vectors v ON v.content_hash = c.content_hash AND v.model = ?",
                (model,),
            )
            rows = _add_rows(matrix, iter(lambda: cursor.fetchmany(50_000), []), count)
        if generation is not None and rows is not None:
            read_at = generation
            claimed = self.archive.sqlite.write(
                lambda conn: vector_cache.claim(conn, model, read_at)
            )
            if claimed is not None:
                vector_cache.save(folder, model, claimed, rows)
        return matrix

    def _exact(self, model: str, ids: list[int]) -> dict[int, Vectors]:
        marks = ",".join("?" * len(ids))
        with self.archive.sqlite.reading() as conn:
            rows = conn.execute(
                "SELECT c.id, v.vector FROM index_chunks c JOIN index_vectors v "
                f"ON v.content_hash = c.content_hash AND v.model = ? WHERE c.id IN ({marks})",
                (model, *ids),
            ).fetchall()
        return {int(r[0]): storage.from_blob(r[1]) for r in rows}

    def _on_written(self, result: WriteResult) -> None:
        with self._lock:
            for model, matrix in self._matrices.items():
                if result.model in (None, model):
                    self._update(model, matrix, result)

    def _update(self, model: str, matrix: DenseMatrix, result: WriteResult) -> None:
        matrix.remove(result.removed + result.added)
        for start in range(0, len(result.added), 500):
            part = result.added[start : start + 500]
            marks = ",".join("?" * len(part))
            with self.archive.sqlite.reading() as conn:
                rows = conn.execute(
                    "SELECT c.id, c.section_tipo, c.restricted, v.vector FROM index_chunks c "
                    "JOIN index_vectors v ON v.content_hash = c.content_hash AND v.model = ? "
                    f"WHERE c.id IN ({marks})",
                    (model, *part),
                ).fetchall()
            _add_rows(matrix, [rows], len(rows))

    # -- indexing ----------------------------------------------------------------------------
    def start(self) -> None:
        """Index in the background now and after every record change."""
        self.indexer.start()

    def index_now(self) -> Progress:
        """Index everything pending on the calling thread (CLI, scripts, tests)."""
        return self.indexer.run()

    def pending(self) -> int:
        """Work items left: records to chunk plus texts to embed, for every model."""
        return self.indexer.pending()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until background indexing has nothing left to do; ``False`` on timeout."""
        return self.indexer.wait_idle(timeout)

    def rebuild(self) -> None:
        """Forget every chunk and re-chunk the archive (vectors of unchanged text are reused)."""
        self.indexer.cancel()
        self.archive.sqlite.write(lambda conn: storage.clear(conn, vectors=False))
        with self._lock:
            self._matrices.clear()

    def stats(self) -> IndexStats:
        """Counts for status displays: chunks, vectors, work pending, completeness per model
        (no scan when nothing changed since they were last taken, see :mod:`.changes`)."""
        models = tuple(e.model_id for e in self.embedders)
        return index_stats(changes.counts(self.archive, models), models)

    def sync_lexical(self) -> int:
        """Chunk every changed record now, without embedding (the lexical index is then
        current); returns how many records were handled."""
        return sync_chunks(self.archive)

    def close(self) -> None:
        """Stop the indexer and the embedding process, if any, and detach from the archive
        (the archive stays open). A batch in flight in the embedding process is abandoned
        (nothing of it was stored)."""
        self.archive.remove_listener(self.indexer.notify)
        if self.worker is not None:
            self.indexer.cancel()
            self.worker.close()
        self.indexer.close()


VectorRow = tuple[int, str, int | None, bytes]
"""A chunk's ``(id, section_tipo, restricted, vector blob)``, as :meth:`Index._load` reads it."""


def _add_rows(
    matrix: DenseMatrix, batches: Iterable[list[VectorRow]], most: int
) -> vector_cache.CachedRows | None:
    """Give ``matrix`` the rows of ``batches`` (about ``most`` of them) as one block: each
    batch's vectors are copied once, into their place in the block, and the matrix takes the
    block as it is (at Tate's 146,711 chunks a model's vectors are 225-300 MB, and each copy
    of them was a tenth of a second or more of a cold search). Returns what it added (``None``:
    no rows)."""
    block = np.empty((most, matrix.dim), np.float32)
    ids: list[int] = []
    sections: list[str] = []
    flags: list[bool | None] = []
    for rows in batches:
        start = len(ids)
        if start + len(rows) > len(block):  # chunks written since they were counted
            block = np.concatenate([block[:start], np.empty((len(rows), matrix.dim), np.float32)])
        raw = np.frombuffer(b"".join([r[3] for r in rows]), dtype="<f4")
        block[start : start + len(rows)] = raw.reshape(len(rows), matrix.dim)
        ids += [int(r[0]) for r in rows]
        sections += [str(r[1]) for r in rows]
        flags += [None if r[2] is None else bool(r[2]) for r in rows]
    if not ids:
        return None
    whole = block if len(ids) == len(block) else block[: len(ids)].copy()
    matrix.add(ids, whole, sections, flags)
    return vector_cache.CachedRows(ids, sections, flags, whole)
