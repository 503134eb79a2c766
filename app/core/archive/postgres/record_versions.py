"""Record versions against lost updates on a shared PostgreSQL archive.

``records.version`` (as on SQLite) starts at 1 and grows by one with every change. A person
edits the version they read; :func:`update_record_if_version` writes only if the record is
still at that version, else raises ``archive.version_conflict`` (the SQLite
``Archive.update_record``'s code), so of two people who read version 3 and save, the second is
told to read again instead of silently overwriting the first.

The check and the write are one step: the row is locked (``SELECT ... FOR UPDATE``) before its
version is compared, so a concurrent update of the same record waits for this transaction and
then sees the new version. The values are checked and normalised as on SQLite
(:func:`app.core.archive.records.normalize_values`), the relation fields' links are rewritten
as SQLite's ``store_values`` does, and an audit row is appended when ``audit`` is given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import cast

from app.core.archive.model import AuditInfo, Record, RecordKey
from app.core.archive.postgres.connect import Conn
from app.core.archive.records import Values, link_rows, normalize_values
from app.core.errors import ArchiveError
from app.core.phrases import Phrase


def update_record_if_version(
    conn: Conn,
    key: RecordKey,
    values: Mapping[str, object],
    expected_version: int,
    *,
    audit: AuditInfo | None = None,
) -> Record:
    """Replace the given fields' items of ``key`` (``{field tipo: [{lang?, value}, ...]}``; an
    empty list clears the field) if the record is at ``expected_version``; the record after
    (its version one more). Runs in the caller's transaction when one is open (a savepoint),
    else in its own, committed.

    Raises:
        ArchiveError: ``archive.version_conflict`` when the record is at another version,
            ``archive.record_not_found`` (also for a record hidden by row-level security),
            ``archive.field_unknown``, ``archive.value_invalid``.
    """
    with conn.transaction():
        before = _locked(conn, key, expected_version)
        kinds = _field_kinds(conn, key.section_tipo)
        after = _merged(before, values, kinds)
        stored = conn.execute(
            "UPDATE records SET data = %s, version = version + 1, updated_at = now() "
            "WHERE section_tipo = %s AND section_id = %s "
            "RETURNING data, version, restricted, created_at, updated_at",
            (json.dumps(after.values, ensure_ascii=False), key.section_tipo, key.section_id),
        ).fetchone()
        assert stored is not None  # the row is locked by this transaction
        relations = [f for f, kind in kinds.items() if kind == "relation"]
        if any(f in values for f in relations):
            _rewrite_links(conn, after, relations)
        if audit is not None:
            _audit(
                conn,
                key,
                {f: before.values.get(f) for f in values},
                {f: after.values.get(f) for f in values},
                audit,
            )
    return _record(key, stored)


def _locked(conn: Conn, key: RecordKey, expected_version: int) -> Record:
    """``key`` as stored, its row locked by this transaction, if it is at
    ``expected_version``."""
    row = conn.execute(
        "SELECT data, version, restricted, created_at, updated_at FROM records "
        "WHERE section_tipo = %s AND section_id = %s FOR UPDATE",
        (key.section_tipo, key.section_id),
    ).fetchone()
    if row is None:
        raise ArchiveError(
            "archive.record_not_found",
            Phrase.of("Record {key} does not exist.", key=str(key)),
            category="input",
        )
    record = _record(key, row)
    if record.version != expected_version:
        raise ArchiveError(
            "archive.version_conflict",
            Phrase.of(
                "Record {key} changed since it was read (version {version}, expected {expected}).",
                key=str(key),
                version=record.version,
                expected=expected_version,
            ),
            hint="Read the record again and redo the change.",
            category="conflict",
            details={"version": record.version, "expected_version": expected_version},
        )
    return record


def _merged(record: Record, values: Mapping[str, object], kinds: dict[str, str]) -> Record:
    """``record`` with the given fields' items replaced (checked and normalised)."""
    data = dict(record.values)
    for field_tipo, items in values.items():
        if field_tipo not in kinds:
            raise ArchiveError(
                "archive.field_unknown",
                Phrase.of(
                    "Section {section} has no field {field!r}.",
                    section=record.section_tipo,
                    field=field_tipo,
                ),
                hint="Describe the section to see its fields.",
                category="input",
            )
        cleaned = normalize_values({field_tipo: items}).get(field_tipo)
        if cleaned:
            data[field_tipo] = cleaned
        else:
            data.pop(field_tipo, None)
    return replace(record, values=data)


def _record(key: RecordKey, row: tuple[object, ...]) -> Record:
    """A ``records`` row (``data, version, restricted, created_at, updated_at``) as a Record."""
    decoded = json.loads(row[0]) if isinstance(row[0], str | bytes) else row[0]
    if not isinstance(decoded, dict):
        raise ArchiveError(
            "archive.corrupt", "A record's data is not a JSON object.", category="internal"
        )
    restricted = row[2]
    return Record(
        section_tipo=key.section_tipo,
        section_id=key.section_id,
        values=cast(Values, decoded),
        version=_int(row[1]),
        restricted=None if restricted is None else bool(restricted),
        created_at=_stamp(row[3]),
        updated_at=_stamp(row[4]),
    )


def _field_kinds(conn: Conn, section_tipo: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT tipo, kind FROM fields WHERE section_tipo = %s", (section_tipo,)
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def _rewrite_links(conn: Conn, record: Record, relations: list[str]) -> None:
    """The record's outgoing links as its relation values now hold them."""
    key = record.key
    conn.execute(
        "DELETE FROM links WHERE from_section = %s AND from_id = %s",
        (key.section_tipo, key.section_id),
    )
    rows = link_rows(key, record.values, relations)
    if rows:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO links VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", rows
            )


def _audit(conn: Conn, key: RecordKey, before: object, after: object, info: AuditInfo) -> None:
    conn.execute(
        "INSERT INTO audit(at, action, section_tipo, section_id, plan_hash, op_id, before, "
        "after, model, egress, actor, plan_id) "
        "VALUES (now(), 'update', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            key.section_tipo,
            key.section_id,
            info.get("plan_hash"),
            info.get("op_id"),
            json.dumps(before, ensure_ascii=False),
            json.dumps(after, ensure_ascii=False),
            info.get("model"),
            info.get("egress"),
            info.get("actor"),
            info.get("plan_id"),
        ),
    )


def _int(value: object) -> int:
    if isinstance(value, int):
        return value
    raise ArchiveError(
        "archive.corrupt",
        Phrase.of("Not an integer: {value}.", value=repr(value)),
        category="internal",
    )


def _stamp(value: object) -> str:
    """A ``timestamptz`` as ISO 8601 in seconds (as SQLite keeps it)."""
    return value.isoformat(timespec="seconds") if isinstance(value, datetime) else str(value)
