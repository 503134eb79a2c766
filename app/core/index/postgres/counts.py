"""What a PostgreSQL archive's index holds, counted in the server: the figures
:class:`~app.core.index.changes.IndexCounts` gives on SQLite (chunks, texts, records waiting,
each model's vectors and the texts it lacks), as this role sees them (row-level security)."""

from __future__ import annotations

from app.core.archive.postgres.connect import Conn
from app.core.index.changes import IndexCounts
from app.core.index.postgres.values import as_int

_WAITING = (
    "SELECT count(*) FROM records r LEFT JOIN index_records i "
    "ON i.section_tipo = r.section_tipo AND i.section_id = r.section_id "
    "WHERE i.version IS NULL OR i.version <> r.version"
)
_MISSING = (
    "SELECT count(DISTINCT c.content_hash), count(*) FROM index_chunks c WHERE NOT EXISTS "
    "(SELECT 1 FROM index_vectors v WHERE v.content_hash = c.content_hash AND v.model = %s)"
)


def index_counts(conn: Conn, models: tuple[str, ...]) -> IndexCounts:
    """Every count in full (a scan of the records, several of the chunks)."""
    with conn.transaction():
        row = conn.execute(
            "SELECT count(*), count(DISTINCT content_hash) FROM index_chunks"
        ).fetchone()
        chunks, texts = (as_int(row[0]), as_int(row[1])) if row else (0, 0)
        waiting = conn.execute(_WAITING).fetchone()
        vectors: dict[str, int] = {}
        missing: dict[str, int] = {}
        lacking: dict[str, int] = {}
        for model in models:
            found = conn.execute(
                "SELECT count(*) FROM index_vectors WHERE model = %s", (model,)
            ).fetchone()
            vectors[model] = as_int(found[0]) if found else 0
            gaps = conn.execute(_MISSING, (model,)).fetchone()
            missing[model], lacking[model] = (as_int(gaps[0]), as_int(gaps[1])) if gaps else (0, 0)
    return IndexCounts(
        chunks=chunks,
        texts=texts,
        pending_records=as_int(waiting[0]) if waiting else 0,
        vectors=vectors,
        missing=missing,
        missing_chunks=lacking,
    )
