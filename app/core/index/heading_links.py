"""A heading that matches a query brings the records that link to it.

Some records say nothing but their title (:mod:`app.core.index.headings`): the subjects and
names an import makes for its access points, and a finding aid's series with no note of its
own. Records link to them: the OHMS interviews to the subject "Chemical warfare" they talk
about, a UW finding aid to the subjects it is indexed under, the units of a series that says
only its title to the series ("part of"). An archivist who asks about the subject wants those
records; the heading only says that they exist. When the models see the heading and not the
descriptions (a Catalan or Spanish question over English records: "Quines entrevistes parlen
de Chemical Warfare?" gave eight subject headings as its first eight records, no interview),
:func:`carried` gives each record that links to one of the best headings a score of
:data:`LINK_WEIGHT` times the heading's own over the square root of how many records link to
it (a heading of half the archive, "Labor Unions" in a labor archive, says little about
each); a record already ranked keeps the better of its two scores. The records brought in
are read through the same filters as the rest (sections, records, restricted ones left out
of an egress-filtered search): :func:`app.core.index.search._carried`.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from app.core.archive.model import RecordKey
from app.core.index.storage import ChunkRow

LINK_WEIGHT = 0.5
"""A linked record's score as a share of the heading's own score before it is lowered
(:data:`app.core.index.headings.HEADING_WEIGHT`: a heading's only record ranks with it)."""
HEADINGS_FOLLOWED = 5
"""How many of the best-ranked headings bring their records."""
LINKS_PER_HEADING = 20
"""At most this many records per heading (those already ranked first, then by key)."""


class Linked(NamedTuple):
    """A record that links to a heading: its key, its first chunk's id and the field of the
    link (an interview's "Subjects", a unit's "part of")."""

    key: RecordKey
    chunk: int
    field_tipo: str


@dataclass(frozen=True)
class Carried:
    """Scores for records linked to the best headings.

    ``scores`` is the score each linked record is raised to; ``chunks`` is the chunk that
    stands for each of them (one already ranked where there is one, else its first chunk);
    ``via`` names, for each record the heading's share ranks above its own best chunk, the
    heading and the field that links to it (why the record is in the results).
    """

    scores: dict[RecordKey, float]
    chunks: dict[RecordKey, int]
    via: dict[RecordKey, tuple[RecordKey, str]]


def best_headings(
    ranked: Sequence[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    headings: set[RecordKey],
) -> dict[RecordKey, float]:
    """The first :data:`HEADINGS_FOLLOWED` headings of ``ranked`` (chunk id, score, best
    first) with their best chunk's score."""
    found: dict[RecordKey, float] = {}
    for cid, score in ranked:
        row = rows.get(cid)
        if row is None or row.key not in headings or row.key in found:
            continue
        found[row.key] = score
        if len(found) == HEADINGS_FOLLOWED:
            break
    return found


def carried(
    ranked: Sequence[tuple[int, float]],
    rows: Mapping[int, ChunkRow],
    best: Mapping[RecordKey, float],
    links: Mapping[RecordKey, list[Linked]],
    headings: set[RecordKey],
    counts: Mapping[RecordKey, int] | None = None,
) -> Carried:
    """What the ``best`` headings (with their scores) give the records ``links`` names for
    them: :data:`LINK_WEIGHT` of the score over the square root of how many records link to
    the heading (``counts``, else the links given), so a heading that half the archive links
    to says little about each; headings linked to headings give nothing."""
    first_chunk: dict[RecordKey, int] = {}
    own: dict[RecordKey, float] = {}
    for cid, score in ranked:
        row = rows.get(cid)
        if row is not None:
            first_chunk.setdefault(row.key, cid)
            own[row.key] = max(own.get(row.key, score), score)
    scores: dict[RecordKey, float] = {}
    chunks: dict[RecordKey, int] = {}
    via: dict[RecordKey, tuple[RecordKey, str]] = {}
    for heading, score in best.items():
        linked = sorted(
            (link for link in links.get(heading, []) if link.key not in headings),
            key=lambda link: (link.key not in first_chunk, link.key),
        )
        many = (counts or {}).get(heading, len(links.get(heading, [])))
        given = score * LINK_WEIGHT / math.sqrt(max(many, 1))
        for key, chunk, field_tipo in linked[:LINKS_PER_HEADING]:
            if given > scores.get(key, 0.0):
                scores[key] = given
                chunks[key] = first_chunk.get(key, chunk)
                if given > own.get(key, 0.0):
                    via[key] = (heading, field_tipo)
    return Carried(scores, chunks, via)


def raised(
    ranked: list[tuple[int, float]], rows: Mapping[int, ChunkRow], carry: Carried
) -> list[tuple[int, float]]:
    """``ranked`` with each carried record's chunk at its carried score when that is better
    (added when the record was not ranked), sorted again (ties keep their order)."""
    if not carry.scores:
        return ranked
    by_chunk = {
        carry.chunks[key]: score for key, score in carry.scores.items() if carry.chunks[key] in rows
    }
    out = [(cid, max(score, by_chunk.pop(cid, score))) for cid, score in ranked]
    out.extend(by_chunk.items())
    return sorted(out, key=lambda item: -item[1])


def linked_sqlite(conn: sqlite3.Connection, keys: set[RecordKey]) -> dict[RecordKey, list[Linked]]:
    """The indexed records that link to each of ``keys``, with their first chunk's
    id and the field of the link, read from a folder archive."""
    if not keys:
        return {}
    ordered = sorted(keys)
    marks = ", ".join(["(?, ?)"] * len(ordered))
    args = [v for key in ordered for v in (key.section_tipo, key.section_id)]
    rows = conn.execute(f"WITH h(t, i) AS (VALUES {marks}) {LINKED_SQL}", args).fetchall()
    return by_heading(
        (RecordKey(str(r[0]), int(r[1])), RecordKey(str(r[2]), int(r[3])), r[4], str(r[5]))
        for r in rows
    )


LINKED_SQL = (
    "SELECT h.t, h.i, l.from_section, l.from_id, (SELECT min(c.id) FROM index_chunks c "
    "WHERE c.section_tipo = l.from_section AND c.section_id = l.from_id), l.field_tipo "
    "FROM h JOIN links l ON l.to_section = h.t AND l.to_id = h.i"
)
"""The records that link to the headings of a table ``h(t, i)``, each with its first chunk's
id (NULL when it has none) and the field of the link, on either engine."""


def by_heading(
    rows: Iterable[tuple[RecordKey, RecordKey, object, str]],
) -> dict[RecordKey, list[Linked]]:
    """``(heading, linked record, first chunk id, field)`` rows grouped by heading (records
    with no chunk, and a heading linked to itself, left out; a record linked twice, by two
    fields, once)."""
    out: dict[RecordKey, list[Linked]] = {}
    seen: set[tuple[RecordKey, RecordKey]] = set()
    for heading, other, chunk, field_tipo in sorted(rows, key=lambda r: (r[0], r[1], r[3])):
        if isinstance(chunk, int) and other != heading and (heading, other) not in seen:
            seen.add((heading, other))
            out.setdefault(heading, []).append(Linked(other, chunk, field_tipo))
    return out
