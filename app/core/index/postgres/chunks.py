"""What the ranking reads about chunks and records on PostgreSQL: the chunks' rows, the
records restricted now, the records' languages and labels (the SQL of
:mod:`app.core.index.search`, :mod:`app.core.index.storage` and :mod:`app.core.index.ranking`
on SQLite)."""

from __future__ import annotations

from collections.abc import Iterable

from app.core.archive.language import NEUTRAL
from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import Conn
from app.core.index.heading_links import LINKED_SQL, Linked, by_heading
from app.core.index.headings import MAX_CHUNKS, MAX_TEXT, headings_among, small_records_sql
from app.core.index.postgres.values import as_int, as_str
from app.core.index.ranking import MAIN_SHARE
from app.core.index.storage import ChunkRow

_KEYS = "(SELECT * FROM unnest(%s::text[], %s::bigint[]))"


def _key_args(keys: Iterable[RecordKey]) -> tuple[list[str], list[int]]:
    ordered = sorted(set(keys))
    return [k.section_tipo for k in ordered], [k.section_id for k in ordered]


def read_chunks(conn: Conn, ids: Iterable[int]) -> dict[int, ChunkRow]:
    """Stored chunks by id."""
    rows = conn.execute(
        "SELECT id, section_tipo, section_id, field_tipo, lang, label, text, timecode, page "
        "FROM index_chunks WHERE id = ANY(%s)",
        (sorted(set(ids)),),
    ).fetchall()
    return {as_int(r[0]): _chunk(r) for r in rows}


def _chunk(r: tuple[object, ...]) -> ChunkRow:
    timecode, page = (None if v is None else as_str(v) for v in r[7:9])
    key = RecordKey(as_str(r[1]), as_int(r[2]))
    return ChunkRow(
        as_int(r[0]), key, as_str(r[3]), as_str(r[4]), as_str(r[5]), as_str(r[6]), timecode, page
    )


def restricted(conn: Conn, keys: Iterable[RecordKey]) -> set[RecordKey]:
    """Which of ``keys`` may not leave the machine, read live (missing records count as such,
    and so do records this role may not read)."""
    wanted = set(keys)
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT r.section_tipo, r.section_id FROM records r "
        "LEFT JOIN sections s ON s.tipo = r.section_tipo "
        f"WHERE (r.section_tipo, r.section_id) IN {_KEYS} "
        "AND NOT COALESCE(r.restricted, s.restricted, true)",
        _key_args(wanted),
    ).fetchall()
    return wanted - {RecordKey(as_str(r[0]), as_int(r[1])) for r in rows}


def record_languages(conn: Conn, keys: Iterable[RecordKey]) -> dict[RecordKey, frozenset[str]]:
    """Each record's original languages, by the amount of indexed text in each (as
    :func:`app.core.index.ranking.record_languages`)."""
    wanted = set(keys)
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT section_tipo, section_id, lang, sum(length(text)) FROM index_chunks "
        f"WHERE (section_tipo, section_id) IN {_KEYS} GROUP BY section_tipo, section_id, lang",
        _key_args(wanted),
    ).fetchall()
    sizes: dict[RecordKey, dict[str, int]] = {}
    for tipo, sid, lang, size in rows:
        if lang != NEUTRAL:
            sizes.setdefault(RecordKey(as_str(tipo), as_int(sid)), {})[as_str(lang)] = as_int(size)
    return {key: _main(langs) for key, langs in sizes.items()}


def _main(sizes: dict[str, int]) -> frozenset[str]:
    top = max(sizes.values())
    return frozenset(lang for lang, size in sizes.items() if size >= MAIN_SHARE * top)


def labels(conn: Conn, keys: Iterable[RecordKey], lang: str | None) -> dict[RecordKey, str]:
    """A label for records whose hit chunk carries none: another chunk's, preferring
    ``lang``, then English (as on SQLite)."""
    wanted = set(keys)
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT ON (section_tipo, section_id) section_tipo, section_id, label "
        f"FROM index_chunks WHERE (section_tipo, section_id) IN {_KEYS} AND label != '' "
        "ORDER BY section_tipo, section_id, lang = %s DESC, lang = 'lg-eng' DESC, id",
        (*_key_args(wanted), lang or ""),
    ).fetchall()
    return {RecordKey(as_str(r[0]), as_int(r[1])): as_str(r[2]) for r in rows}


def title_only(conn: Conn, keys: Iterable[RecordKey]) -> set[RecordKey]:
    """Which of ``keys`` say nothing but their title (as
    :func:`app.core.index.headings.title_only_sqlite`)."""
    wanted = set(keys)
    if not wanted:
        return set()
    rows = conn.execute(
        small_records_sql("%s", f"(section_tipo, section_id) IN {_KEYS}"),
        (*_key_args(wanted), MAX_CHUNKS, MAX_TEXT),
    ).fetchall()
    return headings_among(
        (RecordKey(as_str(r[0]), as_int(r[1])), as_str(r[2]), as_str(r[3]), as_str(r[4]))
        for r in rows
    )


def linked(conn: Conn, keys: Iterable[RecordKey]) -> dict[RecordKey, list[Linked]]:
    """The indexed records that link to each of ``keys``, with their first chunk's id and the
    field of the link (as :func:`app.core.index.heading_links.linked_sqlite`)."""
    wanted = set(keys)
    if not wanted:
        return {}
    rows = conn.execute(f"WITH h(t, i) AS {_KEYS} {LINKED_SQL}", _key_args(wanted)).fetchall()
    return by_heading(
        (
            RecordKey(as_str(r[0]), as_int(r[1])),
            RecordKey(as_str(r[2]), as_int(r[3])),
            r[4],
            as_str(r[5]),
        )
        for r in rows
    )
