"""Records that say nothing but their title rank below the records that describe something.

An import makes a record for each name and subject its records give as access points (an EAD
finding aid's ``controlaccess``, an OHMS interview's subjects:
:mod:`app.core.archive.importers.authorities`). Such a record holds its heading and codes
(``subject``, ``person · FILE.xml``). Its chunks are a few words long, so the lexical length
norm and a title-sized vector put it above the descriptions that treat the subject at length:
"interviews about chemistry education" over the six OHMS interviews gave ten subject headings
("Chemistry curricula", "Physical chemistry"…) and no interview; "correspondencia sindical de
Oregón" over the UW labor archives gave eight headings and two names, not one of the 7,668
units (the Oregon State Labor Council's correspondence files among them).

:func:`lowered` multiplies the chunk scores of such records by :data:`HEADING_WEIGHT`, so a
description that matches well comes first and a heading still shows where nothing else
matches. A record counts as a heading (:func:`says_only_title`) when every chunk it has is its
label again or codes (:func:`app.core.index.hit_passages.is_identifiers`, the rule that keeps
such text out of a result row's passages). The records whose title is the query itself still
come first in the results (:mod:`app.core.index.exact_names`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from app.core.archive.model import RecordKey
from app.core.index.hit_passages import is_identifiers
from app.core.index.names import fold
from app.core.index.storage import ChunkRow

HEADING_WEIGHT = 0.5
"""What a heading's chunk scores are multiplied by (see the module's figures)."""
MAX_CHUNKS = 3
"""A record with more chunks is not read as a possible heading."""
MAX_TEXT = 300
"""Nor one with a longer chunk text (characters)."""


def says_only_title(chunks: Iterable[tuple[str, str, str]]) -> bool:
    """Whether a record's chunks, each ``(label, text, lang)``, hold its title and codes only."""
    for label, text, lang in chunks:
        folded = fold(text)
        if folded and folded != fold(label) and not is_identifiers(text, lang):
            return False
    return True


def headings_among(
    chunks: Iterable[tuple[RecordKey, str, str, str]],
) -> set[RecordKey]:
    """The records whose chunks (``(key, label, text, lang)``, every chunk of each record)
    say nothing but their title."""
    by_record: dict[RecordKey, list[tuple[str, str, str]]] = {}
    for key, label, text, lang in chunks:
        by_record.setdefault(key, []).append((label, text, lang))
    return {key for key, found in by_record.items() if says_only_title(found)}


def lowered(
    ranked: list[tuple[int, float]], rows: dict[int, ChunkRow], headings: set[RecordKey]
) -> list[tuple[int, float]]:
    """``ranked`` (chunk id, score) with the chunks of the ``headings`` (title-only records)
    scored :data:`HEADING_WEIGHT` times lower, sorted again (ties keep their order)."""
    if not headings:
        return ranked
    scored = [
        (cid, score * HEADING_WEIGHT if cid in rows and rows[cid].key in headings else score)
        for cid, score in ranked
    ]
    return sorted(scored, key=lambda item: -item[1])


def small_records_sql(placeholder: str, in_keys: str) -> str:
    """The ``(section_tipo, section_id, label, text, lang)`` of every chunk of the records
    among ``in_keys`` (an SQL condition on ``section_tipo, section_id``) that have at most
    :data:`MAX_CHUNKS` chunks of at most :data:`MAX_TEXT` characters (the only ones that
    can be headings); ``placeholder`` is the driver's parameter mark, given twice."""
    return (
        "SELECT section_tipo, section_id, label, text, lang FROM index_chunks "
        "WHERE (section_tipo, section_id) IN (SELECT section_tipo, section_id FROM index_chunks "
        f"WHERE {in_keys} GROUP BY section_tipo, section_id "
        f"HAVING count(*) <= {placeholder} AND max(length(text)) <= {placeholder})"
    )


def title_only_sqlite(conn: sqlite3.Connection, keys: set[RecordKey]) -> set[RecordKey]:
    """Which of ``keys`` say nothing but their title, read from a folder archive's chunks."""
    found: set[RecordKey] = set()
    ordered = sorted(keys)
    for start in range(0, len(ordered), 400):
        part = ordered[start : start + 400]
        marks = ", ".join(["(?, ?)"] * len(part))
        rows = conn.execute(
            small_records_sql("?", f"(section_tipo, section_id) IN (VALUES {marks})"),
            [*(v for key in part for v in (key.section_tipo, key.section_id)), MAX_CHUNKS,
             MAX_TEXT],
        ).fetchall()  # fmt: skip
        found |= headings_among(
            (RecordKey(str(r[0]), int(r[1])), str(r[2]), str(r[3]), str(r[4])) for r in rows
        )
    return found
