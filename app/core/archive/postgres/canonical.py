"""Values between the engines: SQLite's form, PostgreSQL's, and one canonical text for both.

A value read from either engine is first brought to its *neutral* Python form (``int``,
``float``, ``str``, ``bool``, parsed JSON, an aware UTC ``datetime``, ``bytes``; a vector as
its float32 little-endian bytes); the canonical text and both engines' forms are made from
that. The canonical text of a row is the compact JSON list of its values' canonical forms, so
SQLite and PostgreSQL give the same line for the same row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
from pgvector import Vector

from app.core.archive.postgres.tables import Column, Table
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

Neutral = object
"""A value in its neutral form: None, int, float, str, bool, parsed JSON, an aware UTC datetime
or bytes (a vector as its float32 little-endian bytes)."""


def _bad(table: Table, column: Column, value: object, why: Phrase) -> ArchiveError:
    return ArchiveError(
        "archive.copy_bad_value",
        Phrase.of(
            "{table}.{column} holds {value!r}, which {why}.",
            table=table.name,
            column=column.name,
            value=str(value)[:80],
            why=why,
        ),
        hint="Fix that row in the source archive, then run the copy again (it resumes).",
        category="input",
        details={"table": table.name, "column": column.name},
    )


def parse_stamp(text: str) -> datetime:
    """An ISO 8601 or ``YYYY-MM-DD HH:MM:SS`` text as an aware UTC time (naive: UTC)."""
    stamp = datetime.fromisoformat(text)
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def stamp_text(stamp: datetime, *, sql: bool = False) -> str:
    """A time as SQLite's archive writes it: ISO 8601 in UTC (seconds, or microseconds when it
    has them), or with ``sql`` as ``datetime('now')`` does (``YYYY-MM-DD HH:MM:SS``)."""
    utc = stamp.astimezone(UTC)
    spec = "microseconds" if utc.microsecond else "seconds"
    if sql:
        return utc.replace(tzinfo=None).isoformat(sep=" ", timespec=spec)
    return utc.isoformat(timespec=spec)


def from_sqlite(table: Table, column: Column, value: object) -> Neutral:
    """A SQLite value of ``column`` in its neutral form.

    Raises:
        ArchiveError: ``archive.copy_bad_value`` for a value its kind cannot hold.
    """
    if value is None:
        return None
    kind = column.kind
    try:
        if kind == "bool":
            return bool(value)
        if kind == "int":
            return int(str(value)) if not isinstance(value, int) else value
        if kind == "real":
            return float(value)  # type: ignore[arg-type]
        if kind == "json":
            return json.loads(str(value))
        if kind == "ts":
            return parse_stamp(str(value))
        if kind in ("blob", "vector"):
            return bytes(value) if isinstance(value, bytes | memoryview) else str(value).encode()
    except (TypeError, ValueError) as exc:
        raise _bad(
            table, column, value, Phrase.of("is not a valid {kind} value", kind=kind)
        ) from exc
    return value if isinstance(value, str) else str(value)


def from_postgres(column: Column, value: object) -> Neutral:
    """A PostgreSQL value of ``column`` (as psycopg and the pgvector adapter return it) in its
    neutral form."""
    if value is None:
        return None
    if column.kind == "vector":
        array = value.to_numpy() if isinstance(value, Vector) else value
        return np.asarray(array, dtype="<f4").tobytes()
    if column.kind == "blob":
        return bytes(value)  # type: ignore[call-overload]
    return value


def to_sqlite(column: Column, value: Neutral) -> object:
    """A neutral value as SQLite's archive stores it."""
    if value is None:
        return None
    kind = column.kind
    if kind == "bool":
        return int(bool(value))
    if kind == "json":
        return json.dumps(value, ensure_ascii=False)
    if kind == "ts" and isinstance(value, datetime):
        return stamp_text(value, sql=column.sql_stamp)
    return value


def to_postgres(column: Column, value: Neutral) -> object:
    """A neutral value as a COPY row value for PostgreSQL (JSON as text, a vector as a
    float32 array)."""
    if value is None:
        return None
    if column.kind == "json":
        return json.dumps(value, ensure_ascii=False)
    if column.kind == "vector" and isinstance(value, bytes):
        return np.frombuffer(value, dtype="<f4")
    return value


def canonical(column: Column, value: Neutral) -> object:
    """A neutral value as it appears in the canonical row (a JSON-ready value)."""
    if value is None:
        return None
    kind = column.kind
    if kind == "bool":
        return int(bool(value))
    if kind == "real":
        return repr(float(value))  # type: ignore[arg-type]
    if kind == "json":
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if kind == "ts" and isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, bytes):
        return value.hex()
    return value


def canonical_row(table: Table, values: Sequence[Neutral]) -> str:
    """One row's canonical line (compact JSON, without the newline)."""
    out = [canonical(c, v) for c, v in zip(table.columns, values, strict=True)]
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
