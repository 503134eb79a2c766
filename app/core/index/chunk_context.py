"""The records a hierarchy record is part of, as its chunks carry them.

A file of a finding aid is often titled only "Ephemera" or "Boeing proposal": what makes it
findable is the fonds and series above it ("Clara Fraser papers › Consulting Job Records"). A
record of a hierarchy section (:func:`~app.core.archive.hierarchy.hierarchy_of`) gets that
*trail*, the titles of the records above it from the top down, as the first value of its
metadata chunk (``chunk_record(context=...)``), so the lexical search and the embeddings both
see it; the hit's label stays the record's own.

* The walk up from an open record stops at a restricted one: neither its title nor anything
  above it is copied into the open record's chunks (they may reach an external model); a
  restricted record's trail goes on (its chunks are restricted as well); a record without a
  flag of its own is as restricted as its section. The walk stops as well at a record this
  connection cannot read, at a record already passed (a cycle in "part of") and after
  :data:`~app.core.archive.hierarchy.MAX_DEPTH` levels.
* A title repeated one level down (EAD's ``archdesc`` and its one ``c01``) appears once; each
  title is cut at :data:`TITLE_WORDS` words, and a trail of more than :data:`TRAIL_WORDS`
  words keeps its top and the levels nearest the record, "…" between.
* The chunks of a record depend on the titles above it, so when a record's chunks change, every
  record under it is marked to chunk again (:func:`mark_changed`, in the same transaction); a
  chunk whose text is unchanged keeps its vectors (they are stored by text). Marking only on a
  change ends on a cycle: a record chunked again with the same chunks marks nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from app.core.archive.hierarchy import MAX_DEPTH
from app.core.archive.hierarchy_shape import Hierarchy
from app.core.archive.model import Record, RecordKey
from app.core.archive.records import locators
from app.core.archive.store import Archive
from app.core.index.chunking import Chunk, Context, chunk_record
from app.core.index.section_shapes import SectionShape, SectionShapes
from app.core.index.storage import RecordWork

TITLE_WORDS = 16
"""Words kept of each title in a trail."""
TRAIL_WORDS = 40
"""Words a trail holds at most (its top and the nearest levels are kept)."""
SEPARATOR = " › "
ELIDED = "…"


@dataclass(frozen=True)
class Ancestor:
    """What the walk up needs of one record: its title, its parent, its restricted flag
    (``None``: its section's)."""

    title: str
    parent: RecordKey | None
    restricted: bool | None


Values = Mapping[str, object]
Read = Callable[[Hierarchy, list[int]], dict[int, Ancestor]]
"""Reads the records ``ids`` of a hierarchy's section (those it finds) as :class:`Ancestor`."""


def _text(items: object) -> str:
    """The first non-empty text among a field's value items, its words one space apart."""
    if not isinstance(items, list):
        return ""
    for item in items:
        value = item.get("value") if isinstance(item, dict) else None
        if isinstance(value, str) and (words := value.split()):
            cut = len(words) > TITLE_WORDS
            return " ".join(words[:TITLE_WORDS]) + (f" {ELIDED}" if cut else "")
    return ""


def ancestor_of(shape: Hierarchy, key: RecordKey, values: Values, restricted: object) -> Ancestor:
    """A record of ``shape``'s section as the walk up reads it."""
    items = values.get(shape.parent_field)
    parents = [k for k in locators(items if isinstance(items, list) else []) if k != key]
    parent = next((k for k in parents if k.section_tipo == shape.section), None)
    title = _text(values.get(shape.label_field)) if shape.label_field else ""
    return Ancestor(title, parent, None if restricted is None else bool(restricted))


def _values(data: object) -> Values:
    """A ``records.data`` cell (JSON text, or a dict from ``jsonb``) as values."""
    decoded = json.loads(data) if isinstance(data, str | bytes) else data
    return decoded if isinstance(decoded, dict) else {}


def records_reader(conn: object, placeholder: str = "?") -> Read:
    """:data:`Read` on a connection whose ``execute`` returns a cursor, with its driver's
    parameter mark: a folder archive's (``?``, inside the transaction that writes the chunks)
    or a shared archive's chunker's (``%s``: what its role may read)."""

    def read(shape: Hierarchy, ids: list[int]) -> dict[int, Ancestor]:
        found: dict[int, Ancestor] = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = conn.execute(  # type: ignore[attr-defined]
                f"SELECT section_id, data, restricted FROM records WHERE section_tipo = "
                f"{placeholder} AND section_id IN ({', '.join([placeholder] * len(part))})",
                (shape.section, *part),
            ).fetchall()
            for row in rows:
                key = RecordKey(shape.section, int(row[0]))
                found[key.section_id] = ancestor_of(shape, key, _values(row[1]), row[2])
        return found

    return read


@dataclass
class Trails:
    """The trails of the records of one batch or pass.

    Args:
        shapes: the sections' hierarchies (``None``: not a hierarchy) and restrictions (a
            record without a flag of its own is as restricted as its section).
        read: reads records not met yet (one query per level up of each new parent).
    """

    shapes: SectionShapes
    read: Read
    _known: dict[RecordKey, Ancestor | None] = field(default_factory=dict)
    _trails: dict[tuple[RecordKey, bool], tuple[tuple[str, ...], frozenset[RecordKey]]] = field(
        default_factory=dict
    )

    def shape(self, tipo: str) -> Hierarchy | None:
        """The hierarchy of section ``tipo``."""
        return self.shapes.hierarchy(tipo)

    def remember(self, key: RecordKey, values: Values, restricted: object) -> None:
        """Take ``key`` as written (a record of the batch: its parent may be read from it)."""
        shape = self.shape(key.section_tipo)
        if shape is not None:
            self._known[key] = ancestor_of(shape, key, values, restricted)

    def context(self, key: RecordKey, values: Values, restricted: object) -> Context | None:
        """The trail of the record ``key`` with ``values`` (``None``: a top record, not part
        of a hierarchy, or nothing readable above it); an open record's trail stops at a
        restricted record, a ``restricted`` one's goes on (its chunks are restricted too)."""
        shape = self.shape(key.section_tipo)
        if shape is None:
            return None
        parent = ancestor_of(shape, key, values, None).parent
        if parent is None:
            return None
        default = self.shapes.closed(key.section_tipo)
        hidden = default if restricted is None else bool(restricted)
        titles = self._above(shape, parent, hidden, default, key)
        own = _text(values.get(shape.label_field)) if shape.label_field else ""
        if titles and titles[0] == own:  # a c01 titled as its archdesc: no news in the trail
            titles = titles[1:]
        if not titles:
            return None
        return Context(trail_text(list(titles[::-1])), shape.parent_field)

    def _above(
        self, shape: Hierarchy, parent: RecordKey, hidden: bool, default: bool, key: RecordKey
    ) -> tuple[str, ...]:
        """The titles from ``parent`` up, nearest first (kept per parent: siblings share
        them), for a record ``hidden`` (restricted) or not."""
        cached = self._trails.get((parent, hidden))
        if cached is not None and key not in cached[1]:
            return cached[0]
        titles: list[str] = []
        seen = {key}
        current: RecordKey | None = parent
        while current is not None and current not in seen and len(seen) <= MAX_DEPTH:
            seen.add(current)
            above = self._ancestor(shape, current)
            closed = default if above is None or above.restricted is None else above.restricted
            if above is None or (closed and not hidden):
                break
            if above.title and (not titles or titles[-1] != above.title):
                titles.append(above.title)
            current = above.parent
        found = tuple(titles)
        if current != key:  # a walk that met the record itself (a cycle) is the record's own
            self._trails[(parent, hidden)] = (found, frozenset(seen - {key}))
        return found

    def _ancestor(self, shape: Hierarchy, key: RecordKey) -> Ancestor | None:
        if key not in self._known:
            found = self.read(shape, [key.section_id])
            self._known[key] = found.get(key.section_id)
        return self._known[key]


def trail_text(titles: list[str]) -> str:
    """Titles from the top down as one trail of at most :data:`TRAIL_WORDS` words: the top
    and as many of the nearest levels as fit, "…" where levels were left out."""
    if sum(len(t.split()) for t in titles) <= TRAIL_WORDS or len(titles) < 2:
        return SEPARATOR.join(titles)
    kept: list[str] = []
    budget = TRAIL_WORDS - len(titles[0].split())
    for title in reversed(titles[1:]):
        words = len(title.split())
        if kept and words > budget:
            break
        kept.append(title)
        budget -= words
    rest = kept[::-1]
    gap = [ELIDED] if len(rest) < len(titles) - 1 else []
    return SEPARATOR.join([titles[0], *gap, *rest])


_MARK_SQL = """
WITH RECURSIVE tree(id, depth) AS (
    SELECT l.from_id, 1 FROM links l
    WHERE l.to_section = {p} AND l.from_section = {p} AND l.field_tipo = {p}
    AND l.to_id IN ({ids}) AND l.from_id != l.to_id
    UNION
    SELECT l.from_id, t.depth + 1 FROM links l JOIN tree t ON l.to_id = t.id
    WHERE l.to_section = {p} AND l.from_section = {p} AND l.field_tipo = {p} AND t.depth < {p}
)
UPDATE index_records SET version = -1
WHERE section_tipo = {p} AND version != -1 AND section_id IN (SELECT id FROM tree)
"""
"""Every record under the records ``ids`` (to :data:`MAX_DEPTH` levels) that was chunked at
some version, marked to chunk again (version -1 is no record's version)."""

_PARENTS_SQL = (
    "SELECT DISTINCT to_id FROM links WHERE to_section = {p} AND from_section = {p} "
    "AND field_tipo = {p} AND to_id IN ({ids}) AND from_id != to_id"
)
_CHUNKS_SQL = (
    "SELECT section_id, label, text, restricted FROM index_chunks "
    "WHERE section_tipo = {p} AND section_id IN ({ids})"
)

Signature = frozenset[tuple[str, str, bool]]
"""What the chunks of the records under a record depend on, read from its own chunks: their
labels, texts and restricted flags."""


@dataclass(frozen=True)
class DbSql:
    """The statements :func:`mark_below` runs, on the transaction writing the chunks: a
    connection whose ``execute`` returns a cursor (``sqlite3``, ``psycopg``) and its driver's
    parameter mark (``?`` or ``%s``)."""

    conn: object
    placeholder: str = "?"

    def rows(self, sql: str, params: list[object]) -> list[Sequence[object]]:
        """The rows of a query."""
        return list(self.conn.execute(sql, params).fetchall())  # type: ignore[attr-defined]

    def run(self, sql: str, params: list[object]) -> None:
        """Run a statement."""
        self.conn.execute(sql, params)  # type: ignore[attr-defined]


def signature(chunks: Iterable[Chunk], restricted: object) -> Signature:
    """A record's :data:`Signature` from the chunks it is about to get."""
    return frozenset((c.label, c.text, bool(restricted)) for c in chunks)


def mark_below(sql: DbSql, shape: Hierarchy, new: Mapping[int, Signature]) -> None:
    """Before the records ``new`` of ``shape``'s section get their chunks (``new``: each one's
    :func:`signature`), mark to chunk again everything under those of them that have contents
    and whose chunks change."""
    p, tipo, parent = sql.placeholder, shape.section, shape.parent_field
    ids = sorted(new)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ", ".join([p] * len(part))
        rows = sql.rows(_PARENTS_SQL.format(p=p, ids=marks), [tipo, tipo, parent, *part])
        parents = sorted(int(str(row[0])) for row in rows)
        if not parents:
            continue
        old: dict[int, set[tuple[str, str, bool]]] = {}
        marks = ", ".join([p] * len(parents))
        for row in sql.rows(_CHUNKS_SQL.format(p=p, ids=marks), [tipo, *parents]):
            old.setdefault(int(str(row[0])), set()).add((str(row[1]), str(row[2]), bool(row[3])))
        moved = [i for i in parents if frozenset(old.get(i, ())) != new[i]]
        if moved:
            marks = ", ".join([p] * len(moved))
            sql.run(
                _MARK_SQL.format(p=p, ids=marks),
                [tipo, tipo, parent, *moved, tipo, tipo, parent, MAX_DEPTH, tipo],
            )


def chunk_with_trails(
    records: list[Record], shapes: Callable[[str], SectionShape], trails: Trails
) -> list[list[Chunk]]:
    """The chunks of each of ``records``, each record of a hierarchy led by its trail (the
    records of the list read first, so a parent among them is read from it)."""
    for record in records:
        trails.remember(record.key, record.values, record.restricted)
    out: list[list[Chunk]] = []
    for record in records:
        fields, label_field, code_field = shapes(record.key.section_tipo)
        context = trails.context(record.key, record.values, record.restricted)
        out.append(chunk_record(record, fields, label_field, code_field, context=context))
    return out


def mark_changed(
    sql: DbSql, hierarchies: Callable[[str], Hierarchy | None], work: Iterable[RecordWork]
) -> None:
    """Before ``work`` is written on ``sql``'s transaction: mark to chunk again what is under
    each of its records whose chunks change (:func:`mark_below`)."""
    by_section: dict[str, dict[int, Signature]] = {}
    for item in work:
        tipo = item.key.section_tipo
        if hierarchies(tipo) is not None:
            new = by_section.setdefault(tipo, {})
            new[item.key.section_id] = signature(item.chunks, item.restricted)
    for tipo, new in by_section.items():
        shape = hierarchies(tipo)
        assert shape is not None
        mark_below(sql, shape, new)


def archive_reader(archive: Archive) -> Read:
    """:data:`Read` through ``archive``'s own reading connection (either engine), one read
    at a time."""

    def read(shape: Hierarchy, ids: list[int]) -> dict[int, Ancestor]:
        with archive.db.reading() as conn:
            return records_reader(conn)(shape, ids)

    return read


def archive_trails(shapes: SectionShapes, read: Read | None = None) -> Trails:
    """:class:`Trails` of ``shapes``' archive (``read``: through its own reading connection
    unless given)."""
    return Trails(shapes, read or archive_reader(shapes.opened()))
