"""A :class:`~app.core.index.hits.SearchFilter` as SQL over ``index_chunks c`` (psycopg
placeholders), shared by the lexical and the dense search so both keep the same chunks."""

from __future__ import annotations

from app.core.index.hits import SearchFilter

RESTRICTED_SQL = (
    "COALESCE(c.restricted, (SELECT s.restricted FROM sections s "
    "WHERE s.tipo = c.section_tipo), true)"
)
"""Whether a chunk may not leave the machine: its record's flag, else its section's; a chunk
of a section that is gone counts as restricted (as on SQLite)."""


def clause(filter: SearchFilter | None) -> tuple[str, list[object]]:
    """The ``AND ...`` SQL restricting ``c`` to ``filter``, and its arguments."""
    if filter is None:
        return "", []
    sql, args = "", list[object]()
    if filter.sections:
        sql += " AND c.section_tipo = ANY(%s)"
        args.append(list(filter.sections))
    if filter.records:
        sql += (
            " AND (c.section_tipo, c.section_id) IN "
            "(SELECT * FROM unnest(%s::text[], %s::bigint[]))"
        )
        args.append([key.section_tipo for key in filter.records])
        args.append([key.section_id for key in filter.records])
    if filter.exclude_restricted:
        sql += f" AND NOT {RESTRICTED_SQL}"
    return sql, args
