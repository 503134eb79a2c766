"""Pseudo-relevance feedback: a second dense pass that starts from the best records of the first.

A record-level search (``group_by_record=True``) first ranks records as usual; then, for every
model, the query vector is moved towards the centroid of every chunk of the first
:data:`FEEDBACK_RECORDS` records (Rocchio: ``q' = q/|q| + FEEDBACK_WEIGHT · c/|c|``) and the
dense lists are searched again with it. The centroid holds all of a record's chunks — title,
summary, keywords and transcription, in every language the record is written or catalogued in —
so the second pass finds records *like the best ones*, whatever their language: a Catalan
question whose first answers are Catalan interviews with English summaries finds the English
interviews on the same subject too. Nothing in it names a query, a record or a field.

Measured on the demo archive (15 queries of ``resources/demo/queries.json``, displacement
interviews of any language in the top 9; the figures are in ``docs/search.md``): without
feedback 102 of 135, 8 queries reaching 7 of 9; with the first 4 records and weight 1, 112 of
135 and 12 queries.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np

from app.core.archive.model import RecordKey
from app.core.index import ranking
from app.core.index.dense import Vectors
from app.core.index.storage import ChunkRow, from_blob

FEEDBACK_RECORDS = 4
"""How many of the first pass's best records feed the second pass (0: no feedback)."""
FEEDBACK_WEIGHT = 1.0
"""Weight of the records' centroid beside the (unit) query vector."""


def wanted(query_lang: str | None, embedders: Sequence[object]) -> bool:
    """Whether a query gets the second pass: only where the index has a multilingual model and
    some model does not read the query's language (a Catalan or Spanish query beside the
    English MiniLM). There the dense lists rest on the multilingual model alone, whose
    query-to-passage cosines are low (0.1–0.3 on the demo interviews) and whose first answers
    are mostly in the query's language. An English query keeps its first pass: on
    DBpedia-Entity (English) feedback for every query lowered hybrid nDCG@10 from 0.5077 to
    0.4420.

    """
    if FEEDBACK_RECORDS <= 0 or not ranking.multilingual(embedders):
        return False
    return not all(ranking.reads(e, query_lang) for e in embedders)


def corroborated(
    top: Sequence[RecordKey], lexical: Sequence[tuple[int, float]], rows: Mapping[int, ChunkRow]
) -> bool:
    """Whether BM25 found any of the first pass's ``top`` records (a hybrid search feeds back
    only then).

    Feedback trusts the first records; where BM25 matched none of them they rest on the
    multilingual model alone, and the second pass only moves further along its own guess
    (Tate subjects in Catalan, "un castell", "una tempesta": BM25 finds no English title,
    and feedback lowered hybrid nDCG@10 from 0.1950 to 0.1869), while on IGCH, where BM25
    finds the mint's hoards, it lifted Spanish from 0.298 to 0.317 (``docs/search.md``).
    """
    wanted = set(top)
    return any(rows[cid].key in wanted for cid, _ in lexical if cid in rows)


def keep_first(
    ranked: list[tuple[int, float]], first: Sequence[RecordKey], rows: Mapping[int, ChunkRow]
) -> list[tuple[int, float]]:
    """The second pass's records, with the first pass's best record kept first (scored as the
    second pass's best): feedback is there to find the records *like* the best one, and the
    record that matched the query itself best is not displaced by its own neighbours."""
    at = next((i for i, (cid, _) in enumerate(ranked) if rows[cid].key in first), None)
    if not at:
        return ranked
    cid, _ = ranked.pop(at)
    return [(cid, ranked[0][1]), *ranked]


def centroid(conn: sqlite3.Connection, model: str, keys: Sequence[RecordKey]) -> Vectors | None:
    """The unit mean of every ``model`` vector of the chunks of ``keys`` (``None``: none)."""
    vectors: list[Vectors] = []
    for key in keys:
        rows = conn.execute(
            "SELECT v.vector FROM index_chunks c JOIN index_vectors v "
            "ON v.content_hash = c.content_hash AND v.model = ? "
            "WHERE c.section_tipo = ? AND c.section_id = ?",
            (model, key.section_tipo, key.section_id),
        ).fetchall()
        vectors.extend(from_blob(r[0]) for r in rows)
    if not vectors:
        return None
    mean = np.mean(np.stack(vectors), axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm > 0 else None


def expand(query: Vectors, center: Vectors, weight: float = FEEDBACK_WEIGHT) -> Vectors:
    """``query`` moved towards ``center``: the unit vector of ``query/|query| + weight·center``."""
    q = np.asarray(query, np.float32)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    moved = q + weight * np.asarray(center, np.float32)
    return (moved / (float(np.linalg.norm(moved)) or 1.0)).astype(np.float32)
