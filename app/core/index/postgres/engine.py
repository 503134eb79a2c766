"""Hybrid search over a PostgreSQL archive's index, ranked as on SQLite.

:class:`PgSearchEngine` is a :class:`~app.core.index.search.HybridSearch`: the fusion, the
language preference, the record grouping and the feedback are the SQLite engine's own code;
only the reading differs. The candidate lists come from the server (:mod:`.lexical`:
``tsvector``; :mod:`.dense`: pgvector, exact or through an ANN index), filtered there, and the
final hits are checked once more against the live ``records`` and ``sections``. Row-level
security applies: a role without the restricted right finds no restricted chunk at all.

::

    engine = open_search("postgresql://ana@db.example.org/arxiu", default_embedders())
    hits = engine.search("famílies que van marxar", k=10, group_by_record=True)
    engine.close()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg_pool import ConnectionPool

from app.core.archive.model import RecordKey
from app.core.archive.postgres import schema
from app.core.archive.postgres.connect import Conn, open_pool, translate
from app.core.errors import ArchiveError
from app.core.index import feedback
from app.core.index.embedders import Embedder
from app.core.index.heading_links import Linked
from app.core.index.hits import SearchFilter, SearchMode
from app.core.index.postgres import ann, chunks, dense, lexical
from app.core.index.search import ChunkReads, DenseLists, HybridSearch
from app.core.index.storage import ChunkRow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelIndex:
    """One model's vectors on the server: their dimension and ANN index (``None``: exact)."""

    dim: int
    ann: ann.AnnIndex | None


class PgSearchEngine(HybridSearch):
    """Search over the index of the PostgreSQL archive that ``pool`` connects to.

    Args:
        pool: connections to the archive (:func:`app.core.archive.postgres.connect.open_pool`).
        embedders: the query's models (the ones the archive was indexed with).
        ann_above: vectors of a model from which an IVFFlat index is built on first use, when
            this role owns the table (else the search stays exact);
            ``None``: never build one.
        url: the archive's URL, for error messages.
    """

    def __init__(
        self,
        pool: ConnectionPool[Conn],
        embedders: Sequence[Embedder],
        *,
        ann_above: int | None = ann.ANN_ABOVE,
        url: str = "",
    ) -> None:
        super().__init__(embedders)
        self.pool = pool
        self.ann_above = ann_above
        self.url = url
        self._models: dict[str, ModelIndex | None] = {}
        self._models_lock = threading.Lock()
        self._lexical_ready = False
        self._size: lexical.Corpus | None = None

    def close(self) -> None:
        """Close the pool."""
        self.pool.close()

    def model_index(self, embedder: Embedder) -> ModelIndex | None:
        """The server side of ``embedder``'s vectors (``None``: it has none), an ANN index
        built first when the model has :attr:`ann_above` vectors and none yet."""
        model = embedder.model_id
        with self._models_lock:
            if model in self._models:
                return self._models[model]
            with self.pool.connection() as conn:
                found = self._look_up(conn, model)
            self._models[model] = found
            return found

    def forget_models(self) -> None:
        """Read the models' dimensions and ANN indexes, and the lexical corpus size, again on
        the next search (after the index changed)."""
        with self._models_lock:
            self._models.clear()
            self._size = None

    def _look_up(self, conn: Conn, model: str) -> ModelIndex | None:
        dim = dense.model_dim(conn, model)
        if dim is None:
            return None
        index = ann.find(conn, model)
        if (
            index is None
            and self.ann_above is not None
            and dense.count(conn, model) >= self.ann_above
        ):
            try:
                with conn.transaction():
                    index = ann.build(conn, model, dim)
                log.info("built %s for %s", index.name, model)
            except psycopg.errors.InsufficientPrivilege:
                index = None  # not the owner: exact search
        return ModelIndex(dim, index)

    def _corpus(self, conn: Conn) -> lexical.Corpus:
        """The index's chunk count and mean length for BM25 (measured on first use, again
        after :meth:`forget_models`)."""
        with self._models_lock:
            if self._size is None:
                self._size = lexical.corpus(conn)
            return self._size

    def _ensure_lexical(self, conn: Conn) -> None:
        """Add the chunks' lexical column to an archive copied before it existed (its owner
        may; another role gets ``archive.pg_no_lexical``); its owner also makes the slower
        column of an earlier version again (the others search it as it is: the same
        lexemes)."""
        if self._lexical_ready:
            return
        step = schema.lexical_step(conn)
        searchable_as_it_is = step == schema.SLOWER_LEXICAL_NAME and not schema.owns_archive(conn)
        if step != schema.LEXICAL_NAME and not searchable_as_it_is:
            try:
                with conn.transaction():
                    for statement in schema.lexical_sql():
                        conn.execute(statement.encode())
            except psycopg.errors.InsufficientPrivilege as exc:
                raise ArchiveError(
                    "archive.pg_no_lexical",
                    "This archive's chunks have no full-text column yet.",
                    hint="Search it once as the archive's owner: the column is then added.",
                ) from exc
        self._lexical_ready = True

    def _retrieve(
        self,
        query: str,
        depth: int,
        mode: SearchMode,
        filter: SearchFilter,
        query_lang: str | None,
    ) -> tuple[DenseLists, list[tuple[int, float]]]:
        found: DenseLists = []
        lex: list[tuple[int, float]] = []
        try:
            if mode != "lexical":
                for embedder in self.embedders:
                    side = self.model_index(embedder)
                    if side is None:
                        continue
                    vector = self.query_vector(embedder, query)
                    with self.pool.connection() as conn:
                        hits = dense.search(
                            conn, embedder.model_id, side.dim, vector, depth, filter, side.ann
                        )
                    found.append((embedder, hits))
            if mode != "dense":
                with self.pool.connection() as conn:
                    self._ensure_lexical(conn)
                    lex = lexical.search(conn, query, depth, filter, query_lang, self._corpus(conn))
        except psycopg.Error as exc:
            raise translate(exc, self.url) from exc
        return found, lex

    def _feedback(
        self,
        query: str,
        dense_lists: DenseLists,
        top: list[RecordKey],
        depth: int,
        filter: SearchFilter,
    ) -> DenseLists:
        again: DenseLists = []
        for embedder, ranked in dense_lists:
            side = self.model_index(embedder)
            with self.pool.connection() as conn:
                center = dense.centroid(conn, embedder.model_id, top)
                if center is None or side is None:
                    again.append((embedder, ranked))
                    continue
                vector = feedback.expand(self.query_vector(embedder, query), center)
                hits = dense.search(
                    conn, embedder.model_id, side.dim, vector, depth, filter, side.ann
                )
            again.append((embedder, hits))
        return again

    @contextmanager
    def _chunk_reads(self) -> Iterator[ChunkReads]:
        with self.pool.connection() as conn:
            yield _PgChunkReads(conn)


class _PgChunkReads:
    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def chunks(self, ids: set[int]) -> dict[int, ChunkRow]:
        return chunks.read_chunks(self.conn, ids)

    def restricted(self, keys: set[RecordKey]) -> set[RecordKey]:
        return chunks.restricted(self.conn, keys)

    def languages(self, keys: set[RecordKey]) -> dict[RecordKey, frozenset[str]]:
        return chunks.record_languages(self.conn, keys)

    def labels(self, keys: set[RecordKey], lang: str | None) -> dict[RecordKey, str]:
        return chunks.labels(self.conn, keys, lang)

    def title_only(self, keys: set[RecordKey]) -> set[RecordKey]:
        return chunks.title_only(self.conn, keys)

    def linked(self, keys: set[RecordKey]) -> dict[RecordKey, list[Linked]]:
        return chunks.linked(self.conn, keys)


def open_search(
    url: str,
    embedders: Sequence[Embedder],
    *,
    ann_above: int | None = ann.ANN_ABOVE,
    max_size: int = 4,
) -> PgSearchEngine:
    """A search engine over the archive at ``url`` (its own pool; :meth:`~PgSearchEngine.
    close` it).

    Raises:
        ArchiveError: the coded connection errors of
            :func:`app.core.archive.postgres.connect.connect`.
    """
    return PgSearchEngine(
        open_pool(url, max_size=max_size), embedders, ann_above=ann_above, url=url
    )
