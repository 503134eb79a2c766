"""Finding records by exact field values, and find-or-create in one transaction.

``dedalo_find_or_create`` must never create twice: its lookup and its create run in the same
write transaction, and the engine serialises write transactions (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: the write lock every write transaction takes), so concurrent applies (threads,
processes or workstations) are serialised and the second one finds the record the first one
made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from app.core.archive.model import AuditInfo, RecordKey
from app.core.archive.records import insert_record, next_id, normalize_values, write_audit
from app.core.errors import ToolError
from app.core.phrases import Phrase
from app.core.tools.query import Compiled, Filter, compile_filters, matching_ids, run_search

if TYPE_CHECKING:
    from app.core.archive.engine import Connection
    from app.core.archive.store import Archive

MAX_MATCHES = 10


def _match_filters(archive: Archive, section_tipo: str, match: Mapping[str, object]) -> Compiled:
    filters: list[Filter] = [
        {"field": tipo, "op": "equals", "value": v} for tipo, v in match.items()
    ]
    return compile_filters(archive, section_tipo, filters, exclude_restricted=False)


def find_matches(
    archive: Archive, section_tipo: str, match: Mapping[str, object]
) -> list[RecordKey]:
    """Records of ``section_tipo`` whose fields equal every ``match`` value (case/accents aside)."""
    compiled = _match_filters(archive, section_tipo, match)
    _, records = run_search(archive, compiled, limit=MAX_MATCHES, offset=0)
    return [r.key for r in records]


def ambiguous(
    archive: Archive, section_tipo: str, found: list[RecordKey], lang: str = "lg-eng"
) -> ToolError:
    """The refusal of a match that fits several records, listing them (label and key).

    A restricted candidate is listed by its key only: the refusal may reach a model.
    """
    candidates = []
    for key in found:
        label = "" if archive.is_restricted(key) else archive.record_label(key, lang)
        candidates.append({"label": label, **key.to_locator()})
    names = ", ".join(f"{c['label'] or '…'} ({section_tipo}/{c['section_id']})" for c in candidates)
    return ToolError(
        "mcp.match_ambiguous",
        Phrase.of(
            "{n} records of {section} match: {names}.",
            n=len(found),
            section=section_tipo,
            names=names,
        ),
        hint="Match on more fields, or name the record to use by its id.",
        category="conflict",
        details={"section_tipo": section_tipo, "candidates": candidates},
    )


def find_or_create(
    archive: Archive,
    section_tipo: str,
    match: Mapping[str, object],
    values: Mapping[str, object],
    audit: AuditInfo | None = None,
    lang: str = "lg-eng",
) -> tuple[RecordKey, bool, int]:
    """The one record matching ``match``, or a new one holding ``values``, atomically.

    The lookup and the create run in one write transaction, serialised with every other (see
    the module), so two concurrent calls create one record. Finding a record changes nothing,
    so it writes no audit row (a resumed plan simply finds it again).

    Returns:
        The record's key, whether it was created, and how many records matched (0 or 1).

    Raises:
        ToolError: ``mcp.match_ambiguous`` when several records match (nothing is written).
    """
    compiled = _match_filters(archive, section_tipo, match)
    clean = normalize_values(values)

    def run(conn: Connection) -> tuple[RecordKey, bool, list[int]]:
        found = matching_ids(archive.db, conn, compiled, MAX_MATCHES)
        if len(found) > 1:
            return RecordKey(section_tipo, found[0]), False, found
        if found:
            return RecordKey(section_tipo, found[0]), False, found
        key = RecordKey(section_tipo, next_id(conn, section_tipo))
        insert_record(conn, key, clean, None)
        if audit is not None:
            write_audit(conn, "create", key, None, clean, audit)
        return key, True, []

    key, created, found = archive.db.write(run)
    if len(found) > 1:
        keys = [RecordKey(section_tipo, sid) for sid in found]
        raise ambiguous(archive, section_tipo, keys, lang)
    if created:
        archive.notify_changed([key])
    return key, created, len(found)
