"""The approximate-nearest-neighbour index of one model's vectors: when to build one, which.

``index_vectors`` holds every model's vectors in one column of no fixed dimension, so an ANN
index is a partial expression index per model, ``((vector::vector(D))) WHERE model = '…'``,
with the inner-product operator class (the vectors are unit length: inner product is cosine).
Below :data:`ANN_ABOVE` vectors the search is exact (a sequential scan and a top-k sort);
above it IVFFlat with ``lists`` from :func:`lists_for`. HNSW is built where the server's
pgvector can (:data:`KINDS`; on this project's test machines pgvector's HNSW build dies with
SIGILL, so IVFFlat is the default). Figures: ``benchmarks/bench_shared.py`` and
``docs/shared-archive.md``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Literal

from psycopg import sql

from app.core.archive.postgres.connect import Conn
from app.core.index.postgres.values import as_int, as_str

AnnKind = Literal["ivfflat", "hnsw"]
KINDS: tuple[AnnKind, ...] = ("ivfflat", "hnsw")
ANN_ABOVE = 50_000
"""Vectors of a model from which its search uses an IVFFlat index. Measured (384-d,
``bench_shared.py``, a loaded 2-core machine): exact p50 60–62 ms at 20k vectors, where
IVFFlat needs all 20 lists for recall 1.0 and is no faster (57–82 ms); 232–242 ms at 100k,
where IVFFlat at 20 probes takes 58–67 ms."""
PROBE_SHARE = 0.5
"""Share of the lists probed first (then more, by pgvector's iterative scan, while a filter
leaves fewer than k rows): ``max(MIN_PROBES, min(MAX_PROBES, PROBE_SHARE · lists))``. On the
Tate import's real vectors in the server (134,896 a model, 134 lists, its 46 queries) recall@10
against exact was 0.907 / 0.848–0.907 (USE / MiniLM) with 27 probes (the 0.2 share of before),
0.952 / 0.904–0.937 with 40 and 0.985 / 0.970 with 64, at 30 / 14, 42 / 21 and 69 / 33 ms
(``docs/shared-archive.md``); the benchmark's clustered rows flatter a partition (at 100k,
100 lists: 20 probes 0.887–0.955, 40 probes 0.955–0.985). From about 50 probes of 134 the
planner took a parallel exact scan (330–410 ms) unless sequential scans are discouraged
(:func:`app.core.index.postgres.dense.tune`)."""
MIN_PROBES = 10
MAX_PROBES = 64
"""At most this many lists probed first: at 1M vectors (1,000 lists) 20% would be 200 probes,
271 ms p50, where 40 probes took 56 ms and kept the exact top 10 (recall@10 1.000 on the
benchmark's clustered vectors, which flatter a partition; ``bench_shared.py --million``); 64
took 46 ms there (1.000), and on Tate's real vectors (134 lists) 33–69 ms for 0.970–0.985."""
EF_SEARCH = 100
"""HNSW's candidate list (``hnsw.ef_search``), for indexes built where HNSW runs."""


@dataclass(frozen=True)
class AnnIndex:
    """An ANN index of one model: its name, kind and (IVFFlat) number of lists."""

    name: str
    kind: AnnKind
    lists: int = 0
    first_probes: int | None = None
    """Lists probed first, when not the default share (benchmarks)."""

    @property
    def probes(self) -> int:
        """IVFFlat lists probed first."""
        share = min(MAX_PROBES, round(PROBE_SHARE * self.lists))
        wanted = self.first_probes or max(MIN_PROBES, share)
        return max(1, min(self.lists, wanted))


def index_name(model: str, kind: AnnKind) -> str:
    """The index's name: the kind and a digest of the model id (any characters, any length)."""
    return f"index_vectors_{kind}_{hashlib.sha1(model.encode()).hexdigest()[:12]}"


def lists_for(rows: int) -> int:
    """IVFFlat lists for ``rows`` vectors: ``rows / 1000`` up to 1M rows, ``√rows`` above
    (pgvector's advice), at least 1."""
    return max(1, rows // 1000 if rows <= 1_000_000 else round(math.sqrt(rows)))


def find(conn: Conn, model: str) -> AnnIndex | None:
    """The model's ANN index, if one is built (HNSW before IVFFlat)."""
    for kind in ("hnsw", "ivfflat"):
        name = index_name(model, kind)
        row = conn.execute(
            "SELECT coalesce(array_to_string(c.reloptions, ','), '') FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relname = %s",
            (name,),
        ).fetchone()
        if row is not None:
            options = dict(o.split("=", 1) for o in as_str(row[0]).split(",") if "=" in o)
            return AnnIndex(name, kind, int(options.get("lists", "0")))
    return None


def build(
    conn: Conn, model: str, dim: int, kind: AnnKind = "ivfflat", *, lists: int | None = None
) -> AnnIndex:
    """Build the model's ANN index (in the caller's transaction; the table's owner may).

    IVFFlat's ``lists`` (default :func:`lists_for` the rows) are trained on the rows present:
    build it once the vectors are in."""
    name = index_name(model, kind)
    if kind == "ivfflat" and lists is None:
        row = conn.execute(
            "SELECT count(*) FROM index_vectors WHERE model = %s", (model,)
        ).fetchone()
        lists = lists_for(as_int(row[0]) if row else 0)
    lists = lists if kind == "ivfflat" and lists else 0
    options = sql.SQL("WITH (lists = {})").format(sql.Literal(lists)) if lists else sql.SQL("")
    conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
    conn.execute(
        sql.SQL(
            "CREATE INDEX {} ON index_vectors USING {} ((vector::vector({})) vector_ip_ops) "
            "{} WHERE model = {}"
        ).format(
            sql.Identifier(name),
            sql.SQL(kind),
            sql.Literal(dim),
            options,
            sql.Literal(model),
        )
    )
    return AnnIndex(name, kind, lists)


def drop(conn: Conn, model: str) -> None:
    """Drop the model's ANN indexes (the search becomes exact)."""
    for kind in KINDS:
        conn.execute(
            sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(index_name(model, kind)))
        )
