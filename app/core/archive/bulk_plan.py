"""The fast path of a bulk upsert: a whole batch planned in memory, then written in a few
statements.

Upserting record by record costs two lookups and two or three statements per record (its
external id, its current row, the insert or update, its links, its external id again).
:func:`upsert_batch` reads every external id of the batch and every record they (or the
records' own ids) name in a few ``IN (...)`` queries, walks the batch in order against that
snapshot plus what the batch itself has planned so far (so a record listed twice, or an id
given to one record and named by a later one, comes out as it would record by record), and
writes the outcome with one ``executemany`` per table.

What is stored is what the record-by-record path stores: the same rows in ``records`` (values,
version, restriction), ``links`` and ``external_ids``, and the same created / updated /
unchanged outcome for each record. A batch the plan cannot reproduce exactly (a fresh id that
clashes with an id the batch gave explicitly) raises :class:`Replan`, and any error about one
record's data reaches the caller (:mod:`.bulk` then writes the batch record by record, which
reports each failing record as before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.archive.engine import Connection

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.archive.model import RecordKey
from app.core.archive.records import (
    EXTERNAL_ID_UPSERT,
    InsertRow,
    LinkRow,
    UpdateRow,
    Values,
    insert_many,
    link_rows,
    next_id,
    normalize_values,
    now,
    relation_fields,
    relink_many,
    require_section,
    to_json,
    update_many,
)


class RecordToUpsert(Protocol):
    """What the plan reads of a record to upsert (:class:`app.core.archive.bulk.NewRecord`)."""

    @property
    def section_tipo(self) -> str: ...
    @property
    def values(self) -> Values: ...
    @property
    def external_id(self) -> str | None: ...
    @property
    def section_id(self) -> int | None: ...
    @property
    def restricted(self) -> bool | None: ...


IN_CHUNK = 500
"""Values per ``IN (...)`` query."""


class NormalItems(list[dict[str, Any]]):
    """A field's items built in their normal form, each ``{"id": its position, "lang": a
    non-empty code, "value": ...}`` (or that plus ``"lang_guessed": True``), only ever appended
    to: :func:`normal_values` takes it as it is, checking the field once instead of every item
    (:mod:`.importers.items` builds them). It is a list to everything else (JSON, equality)."""


def normal_values(values: Values) -> Values:
    """:func:`~app.core.archive.records.normalize_values`, equal, without copying the fields
    whose items are already normal: each exactly ``{"id": its position, "lang": a code,
    "value": ...}``, as the importers of :mod:`.importers.items` build them (a
    :class:`NormalItems` field is not even walked). Copying every item of every record was a
    tenth of an import of the EAD sets."""
    out: Values = {}
    for field_tipo, items in values.items():
        if type(items) is NormalItems and items:
            out[field_tipo] = items
            continue
        if type(items) is list and items:
            for number, item in enumerate(items, start=1):  # inline: runs for every field
                if type(item) is not dict or len(item) != 3 or "value" not in item:
                    break
                ident, lang = item.get("id"), item.get("lang")
                if type(ident) is not int or ident != number or type(lang) is not str or not lang:
                    break
            else:
                out[field_tipo] = items
                continue
        found = normalize_values({field_tipo: items}).get(field_tipo)  # checks and raises
        if found:
            out[field_tipo] = found
    return out


class Replan(Exception):
    """The batch cannot be planned in memory: write it record by record."""


@dataclass(frozen=True)
class Written:
    """A record as a batch left it, for what is kept in step with the records in the same
    transaction (the lexical index: :meth:`~app.core.archive.bulk.BulkWriter.batch_hook`),
    so that nothing reads it back."""

    key: RecordKey
    version: int
    values: Values
    """The normalised values, as stored (a read would give them back equal)."""
    restricted: bool | None
    """The ``restricted`` column as stored."""


@dataclass
class _Planned:
    """The state a record is left in by the batch so far."""

    key: RecordKey
    links: list[LinkRow]
    """The ``links`` rows its values hold."""
    clean: Values
    """The normalised values (``data`` is their JSON)."""
    data: str
    version: int
    restricted: bool | None
    created: bool
    """Not in the archive before this batch (written with an INSERT)."""
    relinked: bool
    """Its values were rewritten by an update (its old links go first)."""
    read_back: Values | None = None

    def values(self) -> Values:
        """The values as a read of the stored row would give them (the JSON round trip)."""
        if self.read_back is None:
            self.read_back = json.loads(self.data)
        return self.read_back


@dataclass(frozen=True)
class Outcome:
    """What the batch did, record by record."""

    outcomes: list[str]
    """``created``, ``updated`` or ``unchanged``, in the batch's order."""
    keys: list[RecordKey]
    written: list[Written]
    """Each record created or changed, once, in its final state."""


def upsert_batch(conn: Connection, source: str, records: Sequence[RecordToUpsert]) -> Outcome:
    """Upsert ``records`` under ``source`` as the record-by-record path would, in a few
    statements (see the module's docstring).

    Raises:
        Replan: the batch must be written record by record.
        ArxiuError, ValueError...: a record's data cannot be stored.
    """
    plan = _Plan(conn, source, records)
    outcomes, keys = [], []
    for item in records:
        outcome, key = plan.upsert(item, normal_values(item.values))
        outcomes.append(outcome)
        keys.append(key)
    return Outcome(outcomes, keys, plan.write())


class _Plan:
    """The batch's snapshot of the archive and the rows it will write."""

    def __init__(self, conn: Connection, source: str, records: Sequence[RecordToUpsert]) -> None:
        self.conn = conn
        self.source = source
        wanted = [item.external_id for item in records if item.external_id is not None]
        self.ext = external_keys(conn, source, wanted)
        named = set(self.ext.values())
        named.update(
            RecordKey(item.section_tipo, item.section_id)
            for item in records
            if item.section_id is not None
        )
        self.stored = stored_rows(conn, named)
        self.rows: dict[RecordKey, _Planned] = {}
        self.ext_rows: list[tuple[str, str, str, int]] = []
        self._next: dict[str, int] = {}
        self._relations: dict[str, list[str]] = {}

    def upsert(self, item: RecordToUpsert, clean: Values) -> tuple[str, RecordKey]:
        """Plan one record; ``("created" | "updated" | "unchanged", key)``."""
        key = self.ext.get(item.external_id) if item.external_id is not None else None
        if key is None and item.section_id is not None:
            key = RecordKey(item.section_tipo, item.section_id)
        before = self._current(key) if key is not None else None
        if before is None:
            key = key or self._new_key(item.section_tipo)
            data = to_json(clean)
            links = self._link_rows(key, clean)
            self.rows[key] = _Planned(key, links, clean, data, 1, item.restricted, True, False)
            outcome = "created"
        elif before[0] == clean and before[1] == _kept(item.restricted, before[1]):
            outcome = "unchanged"
        else:
            assert key is not None
            planned = self.rows.get(key)
            created = planned is not None and planned.created
            data = to_json(clean)
            links = self._link_rows(key, clean)
            restricted = _kept(item.restricted, before[1])
            version = before[2] + 1
            self.rows[key] = _Planned(key, links, clean, data, version, restricted, created, True)
            outcome = "updated"
        assert key is not None
        if item.external_id is not None:
            self.ext[item.external_id] = key
            self.ext_rows.append((self.source, item.external_id, key.section_tipo, key.section_id))
        return outcome, key

    def _current(self, key: RecordKey) -> tuple[Values, bool | None, int] | None:
        """``(values, restricted, version)`` of ``key`` as the batch has left it, or None."""
        planned = self.rows.get(key)
        if planned is not None:
            restricted = None if planned.restricted is None else bool(planned.restricted)
            return planned.values(), restricted, planned.version
        row = self.stored.get(key)
        if row is None:
            return None
        data, version, restricted_column = row
        restricted = None if restricted_column is None else bool(restricted_column)
        return json.loads(data), restricted, version

    def _new_key(self, tipo: str) -> RecordKey:
        """A fresh id, as the record-by-record path hands it out (above the batch's own)."""
        if tipo not in self._next:
            require_section(self.conn, tipo)
            created = [
                k.section_id for k, p in self.rows.items() if p.created and k.section_tipo == tipo
            ]
            self._next[tipo] = max(next_id(self.conn, tipo), max(created, default=0) + 1)
        key = RecordKey(tipo, self._next[tipo])
        self._next[tipo] += 1
        if key in self.rows:
            raise Replan(f"{key} was given explicitly earlier in the batch")
        return key

    def write(self) -> list[Written]:
        """Write the planned rows, their links and the external ids; what was written."""
        stamp = now()
        inserts: list[InsertRow] = []
        updates: list[UpdateRow] = []
        written: list[Written] = []
        for planned in self.rows.values():
            key, restricted = planned.key, planned.restricted
            if planned.created:
                column = None if restricted is None else bool(restricted)
                inserts.append(
                    (
                        key.section_tipo,
                        key.section_id,
                        planned.data,
                        planned.version,
                        column,
                        stamp,
                        stamp,
                    )
                )
            else:
                column = None if restricted is None else bool(restricted)
                updates.append(
                    (planned.data, planned.version, stamp, column, key.section_tipo, key.section_id)
                )
            written.append(Written(key, planned.version, planned.clean, column))
        insert_many(self.conn, inserts)
        update_many(self.conn, updates)
        cleared = [p.key for p in self.rows.values() if p.relinked]
        relink_many(self.conn, cleared, [row for p in self.rows.values() for row in p.links])
        self.conn.executemany(EXTERNAL_ID_UPSERT, self.ext_rows)
        return written

    def _link_rows(self, key: RecordKey, clean: Values) -> list[LinkRow]:
        """The ``links`` rows of ``key``'s values (its section's relation fields read once)."""
        relations = self._relations.get(key.section_tipo)
        if relations is None:
            relations = self._relations[key.section_tipo] = relation_fields(
                self.conn, key.section_tipo
            )
        return link_rows(key, clean, relations) if relations else []


def external_keys(conn: Connection, source: str, ids: list[str]) -> dict[str, RecordKey]:
    """The keys ``ids`` are mapped to under ``source`` (those that are), in a few queries."""
    found: dict[str, RecordKey] = {}
    wanted = list(dict.fromkeys(ids))
    rows = rows_in(
        conn,
        "SELECT external_id, section_tipo, section_id FROM external_ids WHERE source = ? "
        "AND external_id IN ({})",
        source,
        wanted,
    )
    found.update((str(r[0]), RecordKey(str(r[1]), int(r[2]))) for r in rows)
    return found


def stored_rows(
    conn: Connection, keys: set[RecordKey]
) -> dict[RecordKey, tuple[str, int, int | None]]:
    """``(data, version, restricted)`` of the stored records among ``keys``, in a few queries."""
    by_section: dict[str, list[int]] = {}
    for key in keys:
        by_section.setdefault(key.section_tipo, []).append(key.section_id)
    found: dict[RecordKey, tuple[str, int, int | None]] = {}
    for tipo, ids in by_section.items():
        ids.sort()
        rows = rows_in(
            conn,
            "SELECT section_id, data, version, restricted FROM records WHERE section_tipo = ? "
            "AND section_id IN ({})",
            tipo,
            ids,
        )
        for r in rows:
            found[RecordKey(tipo, int(r[0]))] = (str(r[1]), int(r[2]), r[3])
    return found


def rows_in(conn: Connection, sql: str, first: object, values: Sequence[object]) -> Iterator[Any]:
    """The rows of ``sql`` (its one parameter ``first``, then ``IN ({})``) for every value of
    ``values``, asked ``IN_CHUNK`` values at a time."""
    for start in range(0, len(values), IN_CHUNK):
        part = values[start : start + IN_CHUNK]
        yield from conn.execute(sql.format(",".join("?" * len(part))), (first, *part)).fetchall()


def _kept(restricted: bool | None, before: bool | None) -> bool | None:
    """The flag a re-imported record gets: the source's when it says one, else the record's
    own (a restriction a person set is never lifted by an import that says nothing of it)."""
    return before if restricted is None else restricted
