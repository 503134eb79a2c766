"""Archival hierarchies: a record's parent, its children in order, and its "part of" trail.

A section is hierarchical when one of its relation fields targets the section itself (EAD's
``ead1`` "part of", a table imported with a ``parent`` column). :func:`hierarchy_of` finds
that field, the section's order field (a number field labelled "order", EAD's position among
siblings) and the fields that hold a reference code and a level, from the field definitions
and from the column roles a table import saved, never from strings the caller passes in.

:func:`children_of` reads a record's children with one query for the links and one for the
records (chunked for very large parents), sorted by the order field, then by id.
:func:`breadcrumbs` walks up from a record to its top ("Fonds › Series › File").
:func:`subtree` gives a record and every record under it, to any depth (what "search within
this description" searches); :func:`top_records` the records part of nothing (each fonds: what
the window lists of a hierarchy by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.hierarchy_shape import TABLE_LAYOUTS, Hierarchy, layout_roles, shape_of
from app.core.archive.model import Record, RecordKey
from app.core.archive.records import locators, row_to_record

if TYPE_CHECKING:
    from app.core.archive.store import Archive

MAX_DEPTH = 64
"""The deepest trail followed upwards (a cycle in "part of" stops there)."""
SQL_CHUNK = 900
"""Keys per ``IN (...)`` query (below SQLite's variable limit)."""

_SUBTREE_SQL = """
WITH RECURSIVE tree(id, depth) AS (
    SELECT CAST(? AS BIGINT), 0
    UNION
    SELECT l.from_id, t.depth + 1 FROM links l JOIN tree t ON l.to_id = t.id
    WHERE l.to_section = ? AND l.from_section = ? AND l.field_tipo = ? AND t.depth < ?
)
SELECT DISTINCT t.id FROM tree t
JOIN records r ON r.section_tipo = ? AND r.section_id = t.id
ORDER BY t.id
"""
"""The ids of a record and of every record "part of" it to :data:`MAX_DEPTH` levels, that exist
(both engines: a cycle in "part of" ends at the depth bound, each record listed once)."""

_TOPS_WHERE = """r.section_tipo = ? AND NOT EXISTS (
    SELECT 1 FROM links l WHERE l.from_section = r.section_tipo AND l.from_id = r.section_id
    AND l.field_tipo = ? AND l.to_section = r.section_tipo AND l.to_id != r.section_id)"""
"""The records of a hierarchy part of nothing (its fonds: AtoM's "top-level descriptions")."""


@dataclass(frozen=True)
class Node:
    """One record of a hierarchy as a view shows it."""

    key: RecordKey
    label: str
    reference: str = ""
    level: str = ""
    order: float | None = None
    dates: str = ""
    container: str = ""
    """The box or folder it is in, as the finding aid says (``Box-folder 11/10``)."""


def saved_layouts(archive: Archive) -> list[str]:
    """The column mappings table imports saved (JSON texts, every section's)."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT value FROM meta WHERE substr(key, 1, ?) = ?",  # any collation
            (len(TABLE_LAYOUTS), TABLE_LAYOUTS),
        ).fetchall()
    return [str(row[0]) for row in rows]


def _table_roles(archive: Archive, section: str) -> dict[str, str]:
    """``role → field tipo`` from the mappings table imports saved for ``section``."""
    return layout_roles(saved_layouts(archive), section)


def hierarchy_of(archive: Archive, section: str) -> Hierarchy | None:
    """The hierarchy fields of ``section``, or ``None`` when it is not a hierarchy."""
    if not archive.has_section(section):
        return None
    return shape_of(
        archive.section(section), archive.fields(section), _table_roles(archive, section)
    )


def node_of(archive: Archive, record: Record, shape: Hierarchy, lang: str = "lg-eng") -> Node:
    """``record`` as a :class:`Node` of ``shape``, labelled in ``lang``."""

    def text(tipo: str | None) -> str:
        return (record.text(tipo, lang) or "") if tipo else ""

    order: float | None = None
    if shape.order_field:
        try:
            order = float(text(shape.order_field))
        except ValueError:
            order = None
    return Node(
        record.key,
        text(shape.label_field) or str(record.key),
        text(shape.reference_field),
        text(shape.level_field),
        order,
        text(shape.date_field),
        text(shape.container_field),
    )


def parent_of(archive: Archive, key: RecordKey, shape: Hierarchy | None = None) -> RecordKey | None:
    """The record ``key`` is part of, or ``None`` (a top record, or not a hierarchy)."""
    shape = shape or hierarchy_of(archive, key.section_tipo)
    record = archive.find_record(key)
    if shape is None or record is None:
        return None
    parents = [k for k in locators(record.items(shape.parent_field)) if k != key]
    return parents[0] if parents else None


def _records(archive: Archive, section: str, ids: list[int]) -> list[Record]:
    found: list[Record] = []
    with archive.db.reading() as conn:
        for start in range(0, len(ids), SQL_CHUNK):
            chunk = ids[start : start + SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT * FROM records WHERE section_tipo = ? AND section_id IN ({marks})",
                (section, *chunk),
            ).fetchall()
            found.extend(row_to_record(row) for row in rows)
    return found


def children_of(
    archive: Archive, key: RecordKey, lang: str = "lg-eng", shape: Hierarchy | None = None
) -> list[Node]:
    """The records directly under ``key``, in their order (then by id)."""
    shape = shape or hierarchy_of(archive, key.section_tipo)
    if shape is None:
        return []
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT from_id FROM links WHERE to_section = ? AND to_id = ? "
            "AND from_section = ? AND field_tipo = ?",
            (key.section_tipo, key.section_id, shape.section, shape.parent_field),
        ).fetchall()
    ids = sorted({int(row[0]) for row in rows} - {key.section_id})
    nodes = [node_of(archive, r, shape, lang) for r in _records(archive, shape.section, ids)]
    return sorted(nodes, key=lambda n: (n.order is None, n.order or 0.0, n.key.section_id))


def has_contents(archive: Archive, key: RecordKey, shape: Hierarchy | None = None) -> bool:
    """Whether some record is directly under ``key`` (one indexed lookup)."""
    shape = shape or hierarchy_of(archive, key.section_tipo)
    if shape is None:
        return False
    with archive.db.reading() as conn:
        row = conn.execute(
            "SELECT 1 FROM links WHERE to_section = ? AND to_id = ? AND from_section = ? "
            "AND field_tipo = ? AND from_id != ? LIMIT 1",
            (key.section_tipo, key.section_id, shape.section, shape.parent_field, key.section_id),
        ).fetchone()
    return row is not None


def child_keys(archive: Archive, key: RecordKey) -> list[RecordKey]:
    """The keys of :func:`children_of` (an exporter's ``ChildrenFn``)."""
    return [node.key for node in children_of(archive, key)]


def breadcrumbs(
    archive: Archive, key: RecordKey, lang: str = "lg-eng", shape: Hierarchy | None = None
) -> list[Node]:
    """The records above ``key``, from the top down (empty for a top record)."""
    shape = shape or hierarchy_of(archive, key.section_tipo)
    if shape is None:
        return []
    trail: list[Node] = []
    seen = {key}
    current = parent_of(archive, key, shape)
    while current is not None and current not in seen and len(trail) < MAX_DEPTH:
        seen.add(current)
        record = archive.find_record(current)
        if record is None:
            break
        trail.append(node_of(archive, record, shape, lang))
        parents = [k for k in locators(record.items(shape.parent_field)) if k != current]
        current = parents[0] if parents else None
    trail.reverse()
    return trail


def top_records(
    archive: Archive, shape: Hierarchy, *, offset: int = 0, limit: int = 100
) -> list[Record]:
    """A page of the records of ``shape``'s section that are part of nothing (the top-level
    descriptions: each fonds), ordered by id as :meth:`Archive.list_records` orders a
    section."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            f"SELECT r.* FROM records r WHERE {_TOPS_WHERE} ORDER BY r.section_id LIMIT ? OFFSET ?",
            (shape.section, shape.parent_field, limit, offset),
        ).fetchall()
    return [row_to_record(row) for row in rows]


def count_tops(archive: Archive, shape: Hierarchy) -> int:
    """How many records of ``shape``'s section are part of nothing."""
    with archive.db.reading() as conn:
        row = conn.execute(
            f"SELECT count(*) FROM records r WHERE {_TOPS_WHERE}",
            (shape.section, shape.parent_field),
        ).fetchone()
    return int(row[0])


def subtree(
    archive: Archive, key: RecordKey, shape: Hierarchy | None = None
) -> tuple[RecordKey, ...]:
    """``key`` and every record under it, to any depth, in id order (``key`` alone when its
    section is not a hierarchy; empty when ``key`` does not exist)."""
    shape = shape or hierarchy_of(archive, key.section_tipo)
    if shape is None:
        return (key,) if archive.find_record(key) is not None else ()
    section = key.section_tipo
    with archive.db.reading() as conn:
        rows = conn.execute(
            _SUBTREE_SQL,
            (key.section_id, section, section, shape.parent_field, MAX_DEPTH, section),
        ).fetchall()
    return tuple(RecordKey(section, int(row[0])) for row in rows)


__all__ = [
    "Hierarchy",
    "Node",
    "breadcrumbs",
    "child_keys",
    "children_of",
    "count_tops",
    "has_contents",
    "hierarchy_of",
    "node_of",
    "parent_of",
    "subtree",
    "top_records",
]
