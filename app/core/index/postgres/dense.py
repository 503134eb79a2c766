"""Dense search with pgvector: each chunk's vector (by its text's hash) against the query's.

Exact without an ANN index (a scan and a top-k sort, :data:`app.core.index.postgres.ann.
ANN_ABOVE`), else through the model's IVFFlat (or HNSW) index with pgvector 0.8's iterative
index scan (``relaxed_order``): when the section, record or egress filter leaves fewer than
``k`` chunks in the lists probed first, the scan goes on into more lists (IVFFlat, up to all of
them) or further through the graph (HNSW) until it has ``k``, so a filter never returns fewer
hits than exist. The scores are inner products of unit vectors (cosines), as on SQLite.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from psycopg import sql

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn
from app.core.index.dense import Vectors
from app.core.index.hits import SearchFilter
from app.core.index.postgres.ann import EF_SEARCH, AnnIndex
from app.core.index.postgres.filters import clause
from app.core.index.postgres.values import as_float, as_int, as_vector

MAX_SCAN_TUPLES = 200_000
"""HNSW's iterative scan stops after this many tuples (pgvector's default is 20,000)."""


def model_dim(conn: Conn, model: str) -> int | None:
    """The dimension of ``model``'s vectors (``None``: the model has none)."""
    row = conn.execute(
        "SELECT dim FROM index_vectors WHERE model = %s LIMIT 1", (model,)
    ).fetchone()
    return None if row is None else as_int(row[0])


def count(conn: Conn, model: str) -> int:
    """How many vectors ``model`` has."""
    row = conn.execute("SELECT count(*) FROM index_vectors WHERE model = %s", (model,)).fetchone()
    return as_int(row[0]) if row else 0


def tune(conn: Conn, ann: AnnIndex | None) -> None:
    """Set the index scan's parameters for the caller's transaction (``ann``: ``None`` for
    exact search)."""
    if ann is None:
        return
    if ann.kind == "ivfflat":
        # enable_seqscan off: with many probes the planner otherwise prices the index scan
        # above a parallel exact scan (Tate, 64 of 134 lists: 330 ms exact against 69 ms)
        conn.execute(
            "SELECT set_config('ivfflat.probes', %s, true), "
            "set_config('ivfflat.iterative_scan', 'relaxed_order', true), "
            "set_config('ivfflat.max_probes', %s, true), "
            "set_config('enable_seqscan', 'off', true)",
            (str(ann.probes), str(max(ann.lists, 1))),
        )
    else:
        conn.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', %s, true)",
            (str(EF_SEARCH), str(MAX_SCAN_TUPLES)),
        )


def search(
    conn: Conn,
    model: str,
    dim: int,
    query: Vectors,
    k: int,
    filter: SearchFilter | None = None,
    ann: AnnIndex | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk_id, cosine)`` of ``model`` for ``query`` under ``filter``,
    best first (in the caller's transaction: the scan parameters are set for it)."""
    tune(conn, ann)
    where, args = clause(filter)
    distance = sql.SQL("(v.vector::vector({dim}) <#> %s::vector({dim}))").format(
        dim=sql.Literal(dim)
    )
    statement = sql.SQL(
        "SELECT c.id, {distance} AS distance FROM index_vectors v "
        "JOIN index_chunks c ON c.content_hash = v.content_hash "
        "WHERE v.model = {model}{where} ORDER BY {distance} LIMIT %s"
    ).format(distance=distance, model=sql.Literal(model), where=sql.SQL(where))
    vector = np.asarray(query, np.float32).reshape(dim)
    rows = conn.execute(statement, [vector, *args, vector, k]).fetchall()
    found = [(as_int(r[0]), -as_float(r[1])) for r in rows]
    found.sort(key=lambda item: -item[1])  # relaxed_order: nearly sorted
    return found


def centroid(conn: Conn, model: str, keys: Sequence[RecordKey]) -> Vectors | None:
    """The unit mean of every ``model`` vector of the chunks of ``keys`` (``None``: none), as
    :func:`app.core.index.feedback.centroid` on SQLite."""
    if not keys:
        return None
    rows = conn.execute(
        "SELECT v.vector FROM index_chunks c JOIN index_vectors v "
        "ON v.content_hash = c.content_hash AND v.model = %s "
        "WHERE (c.section_tipo, c.section_id) IN (SELECT * FROM unnest(%s::text[], %s::bigint[]))",
        (model, [k.section_tipo for k in keys], [k.section_id for k in keys]),
    ).fetchall()
    if not rows:
        return None
    mean = np.mean(np.stack([as_vector(r[0]) for r in rows]), axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm > 0 else None
