"""Records whose title or name *is* the query: they rank first in the results by record.

An archivist who types ``Barcino`` means the mint of that name, not the mints whose
descriptions mention it nor a neighbour in embedding space (``Barya``). A record is an exact
match when one of its titles (its section's label field, in any language) or its reference
code equals the whole query, compared accent- and case-folded with punctuation as spaces
(:func:`app.core.index.names.fold`). Candidates are the ranked records and those whose chunk
labels hold every word of the query (FTS5 over the ``label`` column, so a title the ranking
missed is still found), under the search's own filter.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.archive.model import Record, RecordKey
from app.core.archive.store import Archive
from app.core.index import lexical
from app.core.index.hits import SearchFilter
from app.core.index.names import fold

LOOKUP_LIMIT = 200
"""Chunks read by the label lookup (a title shared by more records than this is no name)."""
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class ExactName:
    """A record whose title or code equals the query, and the value that did."""

    key: RecordKey
    name: str


def titles(archive: Archive, record: Record) -> list[str]:
    """Every title of ``record`` (its label field in each language) and its reference code."""
    section = archive.section(record.section_tipo)
    values: list[str] = []
    for tipo in (section.label_field, archive.code_field(record.section_tipo)):
        if tipo:
            items = record.items(tipo)
            values.extend(str(i["value"]) for i in items if isinstance(i.get("value"), str))
    return values


def matching_name(archive: Archive, record: Record, query: str) -> str | None:
    """The title or code of ``record`` that equals ``query`` (folded), else ``None``."""
    wanted = fold(query)
    if not wanted:
        return None
    label = archive.label_of(record)
    for value in (label, *titles(archive, record)):
        if fold(value) == wanted:
            return value
    return None


def label_candidates(conn: sqlite3.Connection, query: str, flt: SearchFilter) -> list[RecordKey]:
    """Records with a chunk label holding every word of ``query``, under ``flt``."""
    words = _WORD.findall(query.lower())
    if not words:
        return []
    quoted = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
    where = lexical.SqlFilter(
        flt.sections,
        tuple((r.section_tipo, r.section_id) for r in flt.records),
        flt.exclude_restricted,
    )
    clause, args = where.clause()
    rows = conn.execute(
        "SELECT DISTINCT c.section_tipo, c.section_id FROM index_fts "
        "JOIN index_chunks c ON c.id = index_fts.rowid "
        f"WHERE index_fts MATCH ?{clause} LIMIT ?",
        [f"label : ({quoted})", *args, LOOKUP_LIMIT],
    ).fetchall()
    return [RecordKey(str(r[0]), int(r[1])) for r in rows]


def exact_names(
    archive: Archive, query: str, candidates: Iterable[RecordKey], flt: SearchFilter
) -> list[ExactName]:
    """The records among ``candidates`` and the label lookup whose title equals ``query``,
    the ranked candidates first; a restricted record is left out of an egress-filtered
    search (read live, as the search itself does)."""
    with archive.sqlite.reading() as conn:
        found = label_candidates(conn, query, flt)
    keys = list(dict.fromkeys([*candidates, *found]))
    out: list[ExactName] = []
    for key in keys:
        record = archive.find_record(key)
        if record is None or (flt.exclude_restricted and archive.is_restricted(key)):
            continue
        name = matching_name(archive, record, query)
        if name is not None:
            out.append(ExactName(key, name))
    return out
