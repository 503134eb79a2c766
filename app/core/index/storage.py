"""The index tables of ``archive.db``: chunks, vectors by content hash and model, progress.

``index_records`` remembers which version of each record was chunked, so the work left is
always "records whose version differs" plus "chunks without a vector for the current model";
both survive a kill, which makes indexing resumable without a separate journal.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from app.core.archive import lexical_table
from app.core.archive.model import Record, RecordKey
from app.core.archive.records import row_to_record
from app.core.index.chunking import Chunk

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ChunkRow:
    """A stored chunk as read back for hits and snippets."""

    id: int
    key: RecordKey
    field_tipo: str
    lang: str
    label: str
    text: str
    timecode: str | None
    page: str | None


@dataclass(frozen=True)
class RecordWork:
    """One record to (re)chunk: its chunks and the version they were cut from."""

    key: RecordKey
    version: int
    restricted: bool | None
    chunks: list[Chunk]


@dataclass(frozen=True)
class WriteResult:
    """Which chunk ids a write removed and added (to update the in-memory matrices).

    ``model`` names the one model whose vectors were added (``None``: chunks changed, every
    model's matrix is concerned).
    """

    removed: list[int]
    added: list[int]
    model: str | None = None


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as a little-endian float32 blob."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> Vectors:
    """A float32 blob back as a vector."""
    return np.frombuffer(blob, dtype="<f4")


def pending_records(
    conn: sqlite3.Connection, limit: int | None = None
) -> list[tuple[RecordKey, int]]:
    """Records never chunked or changed since (key and current version); all of them when
    ``limit`` is ``None``.

    Each call scans the whole ``records`` table (its rows hold the records' JSON), so callers
    take the whole list once and work through it in batches: asking again for every batch
    made chunking the 72,736 Tate records quadratic.
    """
    rows = conn.execute(
        "SELECT r.section_tipo, r.section_id, r.version FROM records r "
        "LEFT JOIN index_records i ON i.section_tipo = r.section_tipo "
        "AND i.section_id = r.section_id WHERE i.version IS NULL OR i.version != r.version "
        "ORDER BY r.section_tipo, r.section_id LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    return [(RecordKey(r[0], r[1]), int(r[2])) for r in rows]


def count_pending_records(conn: sqlite3.Connection) -> int:
    """How many records wait to be chunked."""
    return int(
        conn.execute(
            "SELECT count(*) FROM records r LEFT JOIN index_records i "
            "ON i.section_tipo = r.section_tipo AND i.section_id = r.section_id "
            "WHERE i.version IS NULL OR i.version != r.version"
        ).fetchone()[0]
    )


def orphan_records(conn: sqlite3.Connection, limit: int | None = None) -> list[RecordKey]:
    """Indexed records that no longer exist (all of them when ``limit`` is ``None``)."""
    rows = conn.execute(
        "SELECT i.section_tipo, i.section_id FROM index_records i WHERE NOT EXISTS "
        "(SELECT 1 FROM records r WHERE r.section_tipo = i.section_tipo "
        "AND r.section_id = i.section_id) LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    return [RecordKey(r[0], r[1]) for r in rows]


def read_records(conn: sqlite3.Connection, keys: list[RecordKey]) -> dict[RecordKey, Record]:
    """The records of ``keys`` that exist and are not chunked at their current version
    (one query per 500 keys, instead of one per record)."""
    out: dict[RecordKey, Record] = {}
    for tipo, part, marks in _key_batches(keys):
        rows = conn.execute(
            "SELECT r.* FROM records r LEFT JOIN index_records i "
            "ON i.section_tipo = r.section_tipo AND i.section_id = r.section_id "
            f"WHERE r.section_tipo = ? AND r.section_id IN ({marks}) "
            "AND (i.version IS NULL OR i.version != r.version)",
            (tipo, *part),
        ).fetchall()
        for row in rows:
            record = row_to_record(row)
            out[record.key] = record
    return out


def _key_batches(keys: list[RecordKey], size: int = 500) -> Iterator[tuple[str, list[int], str]]:
    """``(section_tipo, section ids, "?,?,…")`` for ``keys``, at most ``size`` ids a batch."""
    by_section: dict[str, list[int]] = {}
    for key in keys:
        by_section.setdefault(key.section_tipo, []).append(key.section_id)
    for tipo, ids in by_section.items():
        for start in range(0, len(ids), size):
            part = ids[start : start + size]
            yield tipo, part, ",".join("?" * len(part))


def missing_vectors(
    conn: sqlite3.Connection, model: str, limit: int, after: str = ""
) -> list[tuple[str, str]]:
    """``(content_hash, embed_text)`` of stored chunks without a vector for ``model``, in hash
    order from just after ``after`` (a caller that passes the last hash it got reads each
    stored chunk once per run, instead of skipping every finished one again each batch)."""
    rows = conn.execute(
        "SELECT c.content_hash, c.label, c.text FROM index_chunks c "
        "WHERE c.content_hash > ? AND NOT EXISTS (SELECT 1 FROM index_vectors v "
        "WHERE v.content_hash = c.content_hash AND v.model = ?) "
        "GROUP BY c.content_hash ORDER BY c.content_hash LIMIT ?",
        (after, model, limit),
    ).fetchall()
    out = []
    for content_hash, label, text in rows:
        chunk = Chunk(RecordKey("", 0), "", "", 0, text, label)
        out.append((content_hash, chunk.embed_text))
    return out


def count_missing_vectors(conn: sqlite3.Connection, model: str) -> int:
    """How many distinct chunk texts lack a vector for ``model``."""
    return count_missing(conn, model)[0]


def count_missing(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """How many distinct chunk texts, and how many chunks, lack a vector for ``model`` (one
    scan of the chunks)."""
    row = conn.execute(
        "SELECT count(DISTINCT c.content_hash), count(*) FROM index_chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM index_vectors v WHERE v.content_hash = c.content_hash "
        "AND v.model = ?)",
        (model,),
    ).fetchone()
    return int(row[0]), int(row[1])


def count_hashes(conn: sqlite3.Connection) -> int:
    """How many distinct chunk texts the index holds."""
    return int(conn.execute("SELECT count(DISTINCT content_hash) FROM index_chunks").fetchone()[0])


def chunks_with_hashes(conn: sqlite3.Connection, hashes: list[str]) -> list[int]:
    """The ids of the chunks whose text has one of ``hashes``."""
    ids: list[int] = []
    for start in range(0, len(hashes), 500):
        part = hashes[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT id FROM index_chunks WHERE content_hash IN ({marks})", part
        ).fetchall()
        ids.extend(int(r[0]) for r in rows)
    return ids


def known_hashes(conn: sqlite3.Connection, hashes: Iterable[str], model: str) -> set[str]:
    """Which of ``hashes`` already have a vector for ``model``."""
    wanted = list(set(hashes))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT content_hash FROM index_vectors WHERE model = ? AND content_hash IN ({marks})",
            (model, *part),
        ).fetchall()
        found.update(r[0] for r in rows)
    return found


def write_vectors(conn: sqlite3.Connection, model: str, vectors: dict[str, Vectors]) -> None:
    """Store vectors by content hash (existing ones are kept)."""
    conn.executemany(
        "INSERT OR IGNORE INTO index_vectors(content_hash, model, dim, vector) VALUES (?, ?, ?, ?)",
        [(h, model, int(v.shape[0]), to_blob(v)) for h, v in vectors.items()],
    )


def write_records(
    conn: sqlite3.Connection,
    work: list[RecordWork],
    deleted: list[RecordKey],
    *,
    fts_at_once: bool = False,
) -> WriteResult:
    """Replace the chunks of ``work`` records, drop those of ``deleted``; mark them done.

    Rows get explicit ids (the next free ones: the caller's transaction holds the write lock)
    and go in with a few multi-row ``INSERT`` statements (:func:`insert_chunks`), so a batch
    costs a few statements, not one per chunk; the FTS5 triggers index every chunk. With
    ``fts_at_once`` (a batch of thousands of records: an import's) the insert trigger is set
    aside and the new chunks' lexemes enter FTS5 in one ``INSERT ... SELECT`` instead
    (:func:`~app.core.archive.lexical_table.fill`), in the same transaction: the same index.
    """
    removed = _chunk_ids(conn, [w.key for w in work] + deleted)
    for start in range(0, len(removed), 500):
        part = removed[start : start + 500]
        conn.execute(f"DELETE FROM index_chunks WHERE id IN ({','.join('?' * len(part))})", part)
    conn.executemany(
        "DELETE FROM index_records WHERE section_tipo = ? AND section_id = ?",
        [(key.section_tipo, key.section_id) for key in deleted],
    )
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM index_chunks").fetchone()[0])
    rows = [(cid, *_chunk_row(c, item.restricted)) for cid, item, c in _numbered(first, work)]
    if fts_at_once and rows:
        with triggers_aside(conn, "INSERT"):
            insert_chunks(conn, rows)
            lexical_table.fill(conn, after_id=first - 1)
    else:
        insert_chunks(conn, rows)
    conn.executemany(
        "INSERT INTO index_records(section_tipo, section_id, version) VALUES (?, ?, ?) "
        "ON CONFLICT(section_tipo, section_id) DO UPDATE SET version = excluded.version",
        [(w.key.section_tipo, w.key.section_id, w.version) for w in work],
    )
    return WriteResult(removed, list(range(first, first + len(rows))))


CHUNK_COLUMNS = (
    "id, section_tipo, section_id, field_tipo, lang, position, timecode, page, label, text, "
    "content_hash, restricted"
)
ROWS_PER_INSERT = 256
"""Chunk rows per ``INSERT`` statement (fewer where SQLite allows fewer parameters)."""


def insert_chunks(conn: sqlite3.Connection, rows: list[tuple[object, ...]]) -> None:
    """Insert ``index_chunks`` rows (``CHUNK_COLUMNS``), many to a statement.

    One row a statement (``executemany``) made the FTS5 insert trigger cost twice the rest of
    the insert: each statement runs in a statement savepoint, and FTS5 writes out what it has
    pending at every one. Measured on the EAD sets' 28,178 chunks: 1.1-1.2 s CPU one row a
    statement, 0.5-0.6 s with the trigger set aside and FTS5 filled in one ``executemany``,
    the same with rows 256 to a statement and the trigger kept (which this does).
    """
    width = CHUNK_COLUMNS.count(",") + 1
    size = max(
        1, min(ROWS_PER_INSERT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
    )
    marks = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), size):
        part = rows[start : start + size]
        conn.execute(
            f"INSERT INTO index_chunks({CHUNK_COLUMNS}) VALUES {', '.join([marks] * len(part))}",
            [value for row in part for value in row],
        )


def _numbered(first: int, work: list[RecordWork]) -> Iterator[tuple[int, RecordWork, Chunk]]:
    """Every chunk of ``work`` with its record and its id, numbered from ``first``."""
    number = first
    for item in work:
        for chunk in item.chunks:
            yield number, item, chunk
            number += 1


def bulk_write_records(conn: sqlite3.Connection, work: list[RecordWork]) -> WriteResult:
    """:func:`write_records` for a large batch: the FTS5 insert triggers are set aside and the
    new chunks' lexemes go to the full-text table in one statement at the end, all in the
    caller's one transaction.

    Measured on the 146,711 Tate chunks (when the table was rebuilt whole): the insert with
    the triggers took 69 s, without them 16 s plus 9 s for the rebuild.
    """
    return write_records(conn, work, [], fts_at_once=True)


@contextlib.contextmanager
def triggers_aside(conn: sqlite3.Connection, event: Literal["INSERT", "DELETE"]) -> Iterator[None]:
    """Inside the ``with``, ``index_chunks`` has no ``AFTER`` ``event`` trigger (the caller
    keeps FTS5 in step itself); it is created again on the way out, in the caller's
    transaction, so that the schema is the same once the transaction ends (or is rolled
    back)."""
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'index_chunks' "
        "AND upper(sql) LIKE ?",
        (f"%AFTER {event}%",),
    ).fetchall()
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')
    try:
        yield
    finally:
        for _, sql in triggers:
            conn.execute(sql)


def count_indexed_records(conn: sqlite3.Connection) -> int:
    """How many records have been chunked (at some version)."""
    return int(conn.execute("SELECT count(*) FROM index_records").fetchone()[0])


def _chunk_ids(conn: sqlite3.Connection, keys: list[RecordKey]) -> list[int]:
    """The ids of the stored chunks of ``keys``."""
    ids: list[int] = []
    for tipo, part, marks in _key_batches(keys):
        rows = conn.execute(
            f"SELECT id FROM index_chunks WHERE section_tipo = ? AND section_id IN ({marks})",
            (tipo, *part),
        ).fetchall()
        ids.extend(int(r[0]) for r in rows)
    return ids


def _chunk_row(c: Chunk, restricted: bool | None) -> tuple[object, ...]:
    return (
        c.key.section_tipo,
        c.key.section_id,
        c.field_tipo,
        c.lang,
        c.position,
        c.timecode,
        c.page,
        c.label,
        c.text,
        c.content_hash,
        None if restricted is None else int(restricted),
    )


def clear(conn: sqlite3.Connection, *, vectors: bool) -> None:
    """Forget every chunk (and, with ``vectors``, every stored vector)."""
    lexical_table.empty(conn)
    with triggers_aside(conn, "DELETE"):  # the table is empty already: no lexemes to take out
        conn.execute("DELETE FROM index_chunks")
    conn.execute("DELETE FROM index_records")
    if vectors:
        conn.execute("DELETE FROM index_vectors")


def read_chunks(conn: sqlite3.Connection, ids: list[int]) -> dict[int, ChunkRow]:
    """Stored chunks by id."""
    out: dict[int, ChunkRow] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            "SELECT id, section_tipo, section_id, field_tipo, lang, label, text, timecode, page "
            f"FROM index_chunks WHERE id IN ({marks})",
            part,
        ).fetchall()
        for r in rows:
            out[r[0]] = ChunkRow(r[0], RecordKey(r[1], r[2]), r[3], r[4], r[5], r[6], r[7], r[8])
    return out


def get_state(conn: sqlite3.Connection, key: str) -> str | None:
    """A persisted index setting or progress value."""
    row = conn.execute("SELECT value FROM index_state WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_state(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Persist an index setting or progress value."""
    conn.execute(
        "INSERT INTO index_state(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
