"""Finding records by exact field values, and find-or-create in one transaction.

``dedalo_find_or_create`` must never create twice: its lookup and its create run in the same
``BEGIN IMMEDIATE`` transaction, so concurrent applies (threads or processes) are serialised
and the second one finds the record the first one made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core.archive.model import RecordKey
from app.core.archive.records import insert_record, next_id, normalize_values, write_audit
from app.core.tools.query import Compiled, Filter, compile_filters, matching_ids, run_search

if TYPE_CHECKING:
    import sqlite3

    from app.core.archive.store import Archive

MAX_MATCHES = 10


def _match_filters(archive: Archive, section_tipo: str, match: dict[str, Any]) -> Compiled:
    filters: list[Filter] = [
        {"field": tipo, "op": "equals", "value": v} for tipo, v in match.items()
    ]
    return compile_filters(archive, section_tipo, filters, exclude_restricted=False)


def find_matches(archive: Archive, section_tipo: str, match: dict[str, Any]) -> list[RecordKey]:
    """Records of ``section_tipo`` whose fields equal every ``match`` value (case/accents aside)."""
    compiled = _match_filters(archive, section_tipo, match)
    _, records = run_search(archive, compiled, limit=MAX_MATCHES, offset=0)
    return [r.key for r in records]


def find_or_create(
    archive: Archive,
    section_tipo: str,
    match: dict[str, Any],
    values: dict[str, Any],
    audit: dict[str, Any] | None = None,
) -> tuple[RecordKey, bool, int]:
    """The first record matching ``match``, or a new one holding ``values``, atomically.

    The lookup and the create run in one ``BEGIN IMMEDIATE`` transaction, which serialises
    writers (threads and processes alike), so two concurrent calls create one record.

    Returns:
        The record's key, whether it was created, and how many records matched.
    """
    compiled = _match_filters(archive, section_tipo, match)
    clean = normalize_values(values)

    def run(conn: sqlite3.Connection) -> tuple[RecordKey, bool, int]:
        found = matching_ids(conn, compiled, MAX_MATCHES)
        if found:
            return RecordKey(section_tipo, found[0]), False, len(found)
        key = RecordKey(section_tipo, next_id(conn, section_tipo))
        insert_record(conn, key, clean, None)
        if audit is not None:
            write_audit(conn, "create", key, None, clean, audit)
        return key, True, 0

    key, created, matched = archive.db.write(run)
    if created:
        archive.notify_changed([key])
    return key, created, matched
