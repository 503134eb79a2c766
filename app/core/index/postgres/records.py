"""Search results by record on a PostgreSQL archive, and the ids the evaluation needs.

:func:`record_hits` is the list of :func:`app.core.index.record_hits.search_records` for a
search engine opened on a URL alone (what it reads of the server:
:class:`~app.core.index.postgres.record_reads.PgRecordReads`).
"""

from __future__ import annotations

from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn
from app.core.archive.store import open_archive
from app.core.index.hits import SearchFilter, SearchMode
from app.core.index.postgres.engine import PgSearchEngine
from app.core.index.postgres.values import as_int, as_str
from app.core.index.record_hits import RecordHit, search_records


def meta(conn: Conn, key: str) -> str | None:
    """An archive setting from ``meta`` (``index.model``…)."""
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
    return None if row is None else as_str(row[0])


def external_ids(conn: Conn, source: str) -> dict[RecordKey, str]:
    """Every record imported under ``source`` that still exists: key → external id."""
    rows = conn.execute(
        "SELECT e.section_tipo, e.section_id, e.external_id FROM external_ids e "
        "JOIN records r ON r.section_tipo = e.section_tipo AND r.section_id = e.section_id "
        "WHERE e.source = %s",
        (source,),
    ).fetchall()
    return {RecordKey(as_str(r[0]), as_int(r[1])): as_str(r[2]) for r in rows}


def record_hits(
    engine: PgSearchEngine,
    query: str,
    *,
    k: int = 30,
    mode: SearchMode = "hybrid",
    filter: SearchFilter | None = None,
    lang: str = "lg-eng",
) -> list[RecordHit]:
    """The ``k`` best records for ``query``, each once, searched with ``engine``:
    :func:`~app.core.index.record_hits.search_records` over the archive at the engine's URL
    (opened for the call; a caller that has the archive open calls ``search_records``)."""
    archive = open_archive(engine.url)
    try:
        return search_records(engine, archive, query, k=k, mode=mode, filter=filter, lang=lang)
    finally:
        archive.close()
