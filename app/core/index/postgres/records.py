"""Search results by record on a PostgreSQL archive, and the ids the evaluation needs.

:func:`record_hits` is :func:`app.core.index.record_hits.search_records` read from the server:
one :class:`~app.core.index.record_hits.RecordHit` per record, titled from ``records`` (its
section's label field) and ``sections``, with the passages that matched. What it leaves out
for now: the exact-title promotion and the record's date (both read the archive's fields
through :class:`~app.core.archive.store.Archive`, which opens SQLite only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.archive import language
from app.core.archive.model import Record, RecordKey, pick_label
from app.core.archive.postgres.connect import Conn
from app.core.index.hit_passages import HitPassage, choose, marks, query_words
from app.core.index.hits import Searcher, SearchFilter, SearchHit, SearchMode
from app.core.index.postgres.engine import PgSearchEngine
from app.core.index.postgres.values import as_int, as_str
from app.core.index.record_hits import CHUNK_DEPTH, PASSAGES, RecordHit

_KEYS = "(SELECT * FROM unnest(%s::text[], %s::bigint[]))"


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


def titles(conn: Conn, keys: Iterable[RecordKey], lang: str) -> dict[RecordKey, str]:
    """Each record's title in ``lang`` (its section's label field), the key where none."""
    wanted = sorted(set(keys))
    rows = conn.execute(
        "SELECT r.section_tipo, r.section_id, r.data, s.label_field FROM records r "
        "JOIN sections s ON s.tipo = r.section_tipo "
        f"WHERE (r.section_tipo, r.section_id) IN {_KEYS}",
        ([k.section_tipo for k in wanted], [k.section_id for k in wanted]),
    ).fetchall()
    found: dict[RecordKey, str] = {}
    for tipo, sid, data, label_field in rows:
        values: dict[str, list[dict[str, Any]]] = data if isinstance(data, dict) else {}
        record = Record(as_str(tipo), as_int(sid), values)
        text = record.text(as_str(label_field), lang) if label_field else None
        found[record.key] = text or str(record.key)
    return found


def section_labels(conn: Conn, lang: str) -> dict[str, str]:
    """Every section's label in ``lang``."""
    rows = conn.execute("SELECT tipo, labels FROM sections").fetchall()
    return {
        as_str(tipo): pick_label(labels if isinstance(labels, dict) else {}, lang) or as_str(tipo)
        for tipo, labels in rows
    }


def record_hits(
    engine: PgSearchEngine,
    query: str,
    *,
    k: int = 30,
    mode: SearchMode = "hybrid",
    filter: SearchFilter | None = None,
    lang: str = "lg-eng",
) -> list[RecordHit]:
    """The ``k`` best records for ``query``, each once, with their best passages."""
    searcher: Searcher = engine
    found = searcher.search(query, k=k, mode=mode, filter=filter, group_by_record=True)
    if not found:
        return []
    chunks = searcher.search(query, k=max(CHUNK_DEPTH, 5 * k), mode=mode, filter=filter)
    per_record: dict[RecordKey, list[SearchHit]] = {}
    for hit in (*found, *chunks):
        per_record.setdefault(hit.key, []).append(hit)
    guessed = language.detect(query)
    words = query_words(query, None if guessed == language.NEUTRAL else guessed)
    readers = tuple(c for c in dict.fromkeys((guessed, lang)) if c and c != language.NEUTRAL)
    with engine.pool.connection() as conn:
        named = titles(conn, [h.key for h in found], lang)
        sections = section_labels(conn, lang)
    hits = []
    for rank, best in enumerate(found, start=1):
        title = named.get(best.key, best.label)
        passages = [_passage(h, words) for h in per_record[best.key]]
        chosen = choose(passages, {title}, query, words, readers)
        hits.append(
            RecordHit(
                key=best.key, title=title, section_label=sections.get(best.key.section_tipo, ""),
                score=best.score, rank=rank, passages=tuple(chosen[:PASSAGES]),
                langs=best.record_langs, title_marks=marks(title, words),
            )
        )  # fmt: skip
    return hits


def _passage(hit: SearchHit, words: tuple[str, ...]) -> HitPassage:
    text = hit.snippet.strip()
    return HitPassage(
        text, hit.field_tipo, hit.lang, hit.score, hit.timecode, hit.page, marks(text, words)
    )
