"""Answering a query: dense and lexical candidates, fusion, filters and the egress check.

Filters are applied inside both retrievers (a boolean mask over the matrix, SQL over FTS5), so a
restricted chunk never even enters the candidate lists of an egress-filtered search. The final
hits are checked once more against the live ``records`` and ``sections`` tables, which covers a
record made restricted a moment ago and not yet re-indexed.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

import numpy as np

from app.core.archive import language
from app.core.archive.database import Database
from app.core.archive.model import RecordKey
from app.core.errors import IndexError_
from app.core.index import (
    feedback,
    fusion,
    heading_links,
    headings,
    lexical,
    names,
    query_frame,
    ranking,
)
from app.core.index.dense import DenseMatrix, Mask, Vectors
from app.core.index.embedders import Embedder
from app.core.index.hits import SearchFilter, SearchHit, SearchMode, Via
from app.core.index.storage import ChunkRow, read_chunks
from app.core.phrases import Phrase

CANDIDATES = 100
"""Depth of each retriever's list before fusion."""

SNIPPET_CHARS = 280
MODES = ("hybrid", "dense", "lexical")
QUERY_CACHE = 256
"""Query vectors kept per model (a repeated or paged search embeds nothing)."""

DenseLists = list[tuple[Embedder, list[tuple[int, float]]]]


class HybridSearch:
    """The ranking of a hybrid search, whatever stores the index: dense and lexical candidate
    lists fused, language preference, record grouping and feedback (:meth:`search`).

    Subclasses read the index: :meth:`_retrieve` (the candidate lists), :meth:`_feedback`
    (the dense lists again, moved towards the first records), :meth:`_rows` (the candidates'
    chunks) and :meth:`_decorate` (labels and languages of the final hits).
    :class:`SearchEngine` reads SQLite and the in-memory matrices;
    :class:`app.core.index.postgres.engine.PgSearchEngine` reads PostgreSQL.

    Args:
        embedders: the index's models (every one gives a dense candidate list).
    """

    def __init__(self, embedders: Sequence[Embedder]) -> None:
        self.embedders = tuple(embedders)
        self.embedder = self.embedders[0]
        self._queries: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._cache_lock = threading.Lock()

    def query_vector(self, embedder: Embedder, query: str) -> Vectors:
        """``query`` embedded by ``embedder`` (cached)."""
        key = (embedder.model_id, query)
        with self._cache_lock:
            found = self._queries.get(key)
            if found is not None:
                self._queries.move_to_end(key)
                return found
        vector: Vectors = np.asarray(embedder.embed([query])[0], np.float32)
        with self._cache_lock:
            self._queries[key] = vector
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

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
        """The ``k`` best chunks (or records, with ``group_by_record``) for ``query``.

        ``lang`` is the query's language as a Dédalo code (``lg-cat``…); by default it is
        guessed from the query, and ``"lg-nolan"`` ranks without any language preference.
        """
        if mode not in MODES:
            raise IndexError_(
                "index.bad_mode",
                Phrase.of("Unknown search mode {mode!r}.", mode=mode),
                hint="Use hybrid, dense or lexical.",
                category="input",
            )
        if not query.strip() or k <= 0:
            return []
        filter = filter or SearchFilter()
        query_lang = language.detect(query) if lang is None else lang
        query_lang = None if query_lang == language.NEUTRAL else query_lang
        model_lang = query_lang or language.lean(query)
        query = query_frame.strip(query)  # "Quines entrevistes parlen de X?": only X is searched
        depth = max(CANDIDATES, k * (20 if group_by_record else 4))
        dense, lex = self._retrieve(query, depth, mode, filter, query_lang)
        prefer = query_lang if not ranking.multilingual(self.embedders) else None
        ranked, rows, originals, vias = self._rank(
            dense, lex, mode, model_lang, filter, prefer, query
        )
        if group_by_record:
            ranked = ranking.by_record(ranked, rows, ranking.AGREEMENT_WEIGHTS)
            top = [rows[cid].key for cid, _ in ranked[: feedback.FEEDBACK_RECORDS]]
            if (
                mode != "lexical"
                and dense
                and feedback.wanted(model_lang, self.embedders)
                and (mode == "dense" or feedback.corroborated(top, lex, rows))
            ):
                dense = self._feedback(query, dense, top, depth, filter)
                ranked, rows, originals, vias = self._rank(
                    dense, lex, mode, model_lang, filter, prefer, query
                )
                ranked = feedback.keep_first(
                    ranking.by_record(ranked, rows, ranking.AGREEMENT_WEIGHTS), top[:1], rows
                )
        chosen = [(rows[cid], score) for cid, score in ranked if cid in rows][:k]
        return self._hits(chosen, query, query_lang, originals, vias)

    def _hits(
        self,
        chosen: list[tuple[ChunkRow, float]],
        query: str,
        query_lang: str | None,
        originals: dict[RecordKey, frozenset[str]],
        vias: dict[RecordKey, Via],
    ) -> list[SearchHit]:
        """The hits of the ``chosen`` chunks (with their scores): a label from another chunk
        for those that carry none, the records' languages, the heading a record was found
        through."""
        unlabelled = {row.key for row, _ in chosen if not row.label}
        missing = {row.key for row, _ in chosen} - set(originals)
        labels, more = self._decorate(unlabelled, missing, query_lang)
        originals = {**originals, **more}
        return [
            _hit(
                row,
                score,
                query,
                labels.get(row.key),
                originals.get(row.key, frozenset()),
                vias.get(row.key),
            )
            for row, score in chosen
        ]

    def _rank(
        self,
        dense: DenseLists,
        lex: list[tuple[int, float]],
        mode: SearchMode,
        model_lang: str | None,
        filter: SearchFilter,
        prefer: str | None,
        query: str = "",
    ) -> tuple[
        list[tuple[int, float]],
        dict[int, ChunkRow],
        dict[RecordKey, frozenset[str]],
        dict[RecordKey, Via],
    ]:
        """The fused chunk ranking, with the chunks' rows (restricted ones dropped for an
        egress-filtered search), when a language is preferred the records' languages, and the
        records a heading brought with that heading
        (:mod:`app.core.index.heading_links`); a hybrid ranking also moves up chunks whose
        label resembles ``query`` (:func:`app.core.index.names.boost`)."""
        found = {cid for _, ranked in dense for cid, _ in ranked} | {cid for cid, _ in lex}
        rows, originals = self._rows(found, filter, prefer is not None)
        fused = self._fuse(dense, lex, mode, model_lang)
        if mode == "hybrid":
            fused = names.boost(fused, rows, query)
        ranked = ranking.prefer_language(fused, rows, originals, prefer)
        keys = {rows[cid].key for cid, _ in ranked if cid in rows}
        if not keys:
            return ranked, rows, originals, {}
        with self._chunk_reads() as reads:
            heads = reads.title_only(keys)
            if not heads:
                return ranked, rows, originals, {}
            best = heading_links.best_headings(ranked, rows, heads)
            ranked = headings.lowered(ranked, rows, heads)
            ranked, rows, vias = _carried(reads, ranked, rows, heads, best, filter)
        return ranked, rows, originals, vias

    def _fuse(
        self,
        dense: DenseLists,
        lex: list[tuple[int, float]],
        mode: SearchMode,
        query_lang: str | None,
    ) -> list[tuple[int, float]]:
        if mode == "lexical":
            return lex
        weighted = [
            (ranked, ranking.model_weight(query_lang, e, self.embedders)) for e, ranked in dense
        ]
        if mode == "dense":
            return fusion.combine_dense(weighted)
        understood = ranking.understood(query_lang, self.embedders)
        agreeing = all(ranking.reads(e, query_lang) for e, _ in dense)
        return fusion.hybrid(weighted, lex, understood, agreeing=agreeing)

    def _retrieve(
        self,
        query: str,
        depth: int,
        mode: SearchMode,
        filter: SearchFilter,
        query_lang: str | None,
    ) -> tuple[DenseLists, list[tuple[int, float]]]:
        """Each model's dense list (unless ``mode`` is lexical) and the lexical list (unless
        it is dense), ``depth`` deep, inside ``filter``."""
        raise NotImplementedError

    def _feedback(
        self,
        query: str,
        dense: DenseLists,
        top: list[RecordKey],
        depth: int,
        filter: SearchFilter,
    ) -> DenseLists:
        """Each model's dense list searched again with the query moved towards the chunks of
        the ``top`` records (:mod:`app.core.index.feedback`)."""
        raise NotImplementedError

    def _chunk_reads(self) -> AbstractContextManager[ChunkReads]:
        """One read of the engine's chunks (a connection held while it is open)."""
        raise NotImplementedError

    def _rows(
        self, found: set[int], filter: SearchFilter, languages: bool
    ) -> tuple[dict[int, ChunkRow], dict[RecordKey, frozenset[str]]]:
        """The chunks ``found`` (those of records restricted now dropped for an
        egress-filtered search) and, with ``languages``, their records' languages."""
        with self._chunk_reads() as reads:
            rows = reads.chunks(found)
            blocked = (
                reads.restricted({r.key for r in rows.values()})
                if filter.exclude_restricted
                else set()
            )
            rows = {cid: row for cid, row in rows.items() if row.key not in blocked}
            originals = reads.languages({r.key for r in rows.values()}) if languages else {}
        return rows, originals

    def _decorate(
        self, unlabelled: set[RecordKey], missing: set[RecordKey], lang: str | None
    ) -> tuple[dict[RecordKey, str], dict[RecordKey, frozenset[str]]]:
        """Labels for the ``unlabelled`` records (from another of their chunks, preferring
        ``lang``) and the languages of the ``missing`` ones."""
        with self._chunk_reads() as reads:
            return reads.labels(unlabelled, lang), reads.languages(missing)


class ChunkReads(Protocol):
    """What :class:`HybridSearch` reads of an engine's chunks, on one connection."""

    def chunks(self, ids: set[int]) -> dict[int, ChunkRow]:
        """The chunks ``ids`` by id (those gone are left out)."""
        ...

    def restricted(self, keys: set[RecordKey]) -> set[RecordKey]:
        """Which of ``keys`` may not leave the machine, read live."""
        ...

    def languages(self, keys: set[RecordKey]) -> dict[RecordKey, frozenset[str]]:
        """The languages of each record's own values."""
        ...

    def labels(self, keys: set[RecordKey], lang: str | None) -> dict[RecordKey, str]:
        """A label for each of ``keys`` from another of its chunks, preferring ``lang``."""
        ...

    def title_only(self, keys: set[RecordKey]) -> set[RecordKey]:
        """Which of ``keys`` say nothing but their title (:mod:`app.core.index.headings`)."""
        ...

    def linked(self, keys: set[RecordKey]) -> dict[RecordKey, list[heading_links.Linked]]:
        """The indexed records that link to each of ``keys``, with their first chunk's
        id and the field of the link (:mod:`app.core.index.heading_links`)."""
        ...


class _SqliteChunkReads:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def chunks(self, ids: set[int]) -> dict[int, ChunkRow]:
        return read_chunks(self.conn, list(ids))

    def restricted(self, keys: set[RecordKey]) -> set[RecordKey]:
        return _restricted(self.conn, keys)

    def languages(self, keys: set[RecordKey]) -> dict[RecordKey, frozenset[str]]:
        return ranking.record_languages(self.conn, keys)

    def labels(self, keys: set[RecordKey], lang: str | None) -> dict[RecordKey, str]:
        return _labels(self.conn, keys, lang)

    def title_only(self, keys: set[RecordKey]) -> set[RecordKey]:
        return headings.title_only_sqlite(self.conn, keys)

    def linked(self, keys: set[RecordKey]) -> dict[RecordKey, list[heading_links.Linked]]:
        return heading_links.linked_sqlite(self.conn, keys)


class SearchEngine(HybridSearch):
    """Hybrid search over one archive's SQLite index and in-memory matrices (use it through
    :class:`~app.core.index.Index`).

    Args:
        db: the archive's database.
        embedders: the index's models (every one gives a dense candidate list).
        matrix: the in-memory vectors of a model.
    """

    def __init__(
        self,
        db: Database,
        embedders: Sequence[Embedder],
        matrix: Callable[[Embedder], DenseMatrix],
    ) -> None:
        super().__init__(embedders)
        self.db = db
        self._matrix = matrix

    @contextmanager
    def _chunk_reads(self) -> Iterator[ChunkReads]:
        with self.db.reading() as conn:
            yield _SqliteChunkReads(conn)

    def _feedback(
        self,
        query: str,
        dense: DenseLists,
        top: list[RecordKey],
        depth: int,
        filter: SearchFilter,
    ) -> DenseLists:
        """Each model's dense list searched again with the query moved towards the chunks of
        the ``top`` records (:mod:`app.core.index.feedback`)."""
        again: DenseLists = []
        with self.db.reading() as conn:
            for embedder, ranked in dense:
                center = feedback.centroid(conn, embedder.model_id, top)
                if center is None:
                    again.append((embedder, ranked))
                    continue
                matrix = self._matrix(embedder)
                vector = feedback.expand(self.query_vector(embedder, query), center)
                with matrix.held():  # the mask and its search see the same rows
                    allowed = self._mask(conn, filter, matrix)
                    again.append((embedder, matrix.search(vector, depth, allowed)))
        return again

    def _retrieve(
        self,
        query: str,
        depth: int,
        mode: SearchMode,
        filter: SearchFilter,
        query_lang: str | None,
    ) -> tuple[DenseLists, list[tuple[int, float]]]:
        dense: DenseLists = []
        lex: list[tuple[int, float]] = []
        with self.db.reading() as conn:
            if mode != "lexical":
                for embedder in self.embedders:
                    matrix = self._matrix(embedder)
                    if not len(matrix):
                        continue
                    vector = self.query_vector(embedder, query)
                    with matrix.held():  # the mask and its search see the same rows
                        allowed = self._mask(conn, filter, matrix)
                        dense.append((embedder, matrix.search(vector, depth, allowed)))
            if mode != "dense":
                where = lexical.SqlFilter(
                    filter.sections,
                    tuple((r.section_tipo, r.section_id) for r in filter.records),
                    filter.exclude_restricted,
                )
                lex = lexical.search(conn, query, depth, where, query_lang)
        return dense, lex

    def _mask(
        self, conn: sqlite3.Connection, filter: SearchFilter, matrix: DenseMatrix
    ) -> Mask | None:
        if not (filter.sections or filter.records or filter.exclude_restricted):
            return None
        codes = matrix.section_codes()
        sections = {codes[s] for s in filter.sections if s in codes} if filter.sections else None
        restricted = None
        if filter.exclude_restricted:
            rows = conn.execute("SELECT tipo FROM sections WHERE restricted != 0").fetchall()
            restricted = {codes[r[0]] for r in rows if r[0] in codes}
        chunk_ids = _record_chunks(conn, filter.records) if filter.records else None
        return matrix.mask(sections=sections, restricted_sections=restricted, chunk_ids=chunk_ids)


def _carried(
    reads: ChunkReads,
    ranked: list[tuple[int, float]],
    rows: dict[int, ChunkRow],
    heads: set[RecordKey],
    best: dict[RecordKey, float],
    filter: SearchFilter,
) -> tuple[list[tuple[int, float]], dict[int, ChunkRow], dict[RecordKey, Via]]:
    """``ranked`` with the records linked to the ``best`` headings raised or added
    (:mod:`app.core.index.heading_links`), inside ``filter``, ``rows`` with their chunks, and
    the heading that brought each record it ranks above the record's own words."""
    if not best:
        return ranked, rows, {}
    every = reads.linked(set(best))
    links = {
        heading: [link for link in found if filter.lets_in(link.key)]
        for heading, found in every.items()
    }
    counts = {heading: len(found) for heading, found in every.items()}
    carry = heading_links.carried(ranked, rows, best, links, heads, counts)
    added = reads.chunks({cid for cid in carry.chunks.values() if cid not in rows})
    if filter.exclude_restricted and added:
        blocked = reads.restricted({row.key for row in added.values()})
        added = {cid: row for cid, row in added.items() if row.key not in blocked}
    rows = {**rows, **added}
    titles = {row.key: row.label or row.text for row in rows.values() if row.key in best}
    vias = {
        key: Via(heading, titles.get(heading, str(heading)), field_tipo)
        for key, (heading, field_tipo) in carry.via.items()
    }
    return heading_links.raised(ranked, rows, carry), rows, vias


def _record_chunks(conn: sqlite3.Connection, records: tuple[RecordKey, ...]) -> list[int]:
    """The chunk ids of ``records`` (one query per section)."""
    ids: list[int] = []
    by_section = lexical.ids_by_section((r.section_tipo, r.section_id) for r in records)
    for tipo, sids in by_section.items():
        rows = conn.execute(
            f"SELECT c.id FROM index_chunks c WHERE {lexical.RECORDS_OF_SECTION}",
            (tipo, json.dumps(sids)),
        ).fetchall()
        ids.extend(r[0] for r in rows)
    return ids


def _restricted(conn: sqlite3.Connection, keys: set[RecordKey]) -> set[RecordKey]:
    """Which of ``keys`` may not leave the machine, read live (missing records count as such)."""
    blocked = set()
    for key in keys:
        row = conn.execute(
            "SELECT COALESCE(r.restricted, s.restricted, 1) FROM records r "
            "LEFT JOIN sections s ON s.tipo = r.section_tipo "
            "WHERE r.section_tipo = ? AND r.section_id = ?",
            (key.section_tipo, key.section_id),
        ).fetchone()
        if row is None or row[0]:
            blocked.add(key)
    return blocked


def _labels(
    conn: sqlite3.Connection, keys: set[RecordKey], lang: str | None
) -> dict[RecordKey, str]:
    """A label for records whose hit chunk carries none (metadata chunks): another chunk's,
    preferring the query's language."""
    found: dict[RecordKey, str] = {}
    for key in keys:
        row = conn.execute(
            "SELECT label FROM index_chunks WHERE section_tipo = ? AND section_id = ? "
            "AND label != '' ORDER BY lang = ? DESC, lang = 'lg-eng' DESC, id LIMIT 1",
            (key.section_tipo, key.section_id, lang or ""),
        ).fetchone()
        if row is not None:
            found[key] = str(row[0])
    return found


def _hit(
    row: ChunkRow,
    score: float,
    query: str,
    label: str | None = None,
    langs: frozenset[str] = frozenset(),
    via: Via | None = None,
) -> SearchHit:
    return SearchHit(
        key=row.key,
        label=row.label or label or str(row.key),
        snippet=snippet(row.text, query),
        field_tipo=row.field_tipo,
        lang=row.lang,
        score=score,
        timecode=row.timecode,
        page=row.page,
        chunk_id=row.id,
        record_langs=tuple(sorted(langs)),
        via=via,
    )


def snippet(text: str, query: str, size: int = SNIPPET_CHARS) -> str:
    """About ``size`` characters of ``text``, starting near the first query word it contains."""
    if len(text) <= size:
        return text
    start = 0
    for word in lexical.terms(query):
        match = re.search(rf"\b{re.escape(word)}", text, re.IGNORECASE)
        if match:
            start = max(0, text.rfind(" ", 0, max(match.start() - 40, 0)) + 1)
            break
    start = min(start, max(len(text) - size, 0))
    piece = text[start : start + size].rsplit(" ", 1)[0]
    return ("…" if start else "") + piece + "…"
