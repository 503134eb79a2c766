"""Change generations: whether anything changed since the index last looked, without a scan.

Two counters in ``index_generations``, bumped by triggers on every row written:

* ``records`` — a record inserted, updated or deleted, or a chunked version forgotten (a
  rebuild) or rewritten: what can leave records to chunk;
* ``index`` — a chunk, a vector or a chunked version written or removed (what the counts of
  :class:`IndexCounts` depend on).

:func:`pending_unchanged` answers "is there anything to chunk?" with two primary-key lookups
when no record changed since the last scan that found nothing (``sync.records_gen`` in
``index_state``), and :func:`counts` returns the counts cached with the generations they were
taken at, so a search on an unchanged archive (a CLI search: a fresh process each time) does no
scan of the chunks or the records: on the Tate import, 146,711 chunks, those scans made a lexical
search take 2.4–5 s. After a change the counts are taken again in full, once.

The table and triggers are created when an :class:`~app.core.index.service.Index` opens an
archive (not by a migration: an archive of an earlier version gets them on its first open). If
any trigger was missing, the stored marks are dropped with it, since a change made meanwhile
would not have been counted; a read-only archive has no marks and always scans.

A trigger costs one primary-key update per row written: on chunk inserts that is small beside
the FTS5 insert each chunk already triggers. The chunk counter is a ``BEFORE INSERT`` trigger,
so :func:`~app.core.index.storage.bulk_write_records`, which sets the ``AFTER INSERT`` ones
aside, keeps it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass, field

from app.core.archive.store import Archive
from app.core.index import storage

SYNCED = "sync.records_gen"
COUNTS = "counts.cache"

_WATCHED: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("records", ("AFTER INSERT", "AFTER UPDATE", "AFTER DELETE"), ("records",)),
    ("index_chunks", ("BEFORE INSERT", "AFTER DELETE"), ("index",)),
    ("index_vectors", ("AFTER INSERT", "AFTER DELETE"), ("index",)),
    ("index_records", ("AFTER INSERT",), ("index",)),
    # a chunked version forgotten (a rebuild, a deleted record) or rewritten is work again
    ("index_records", ("AFTER UPDATE", "AFTER DELETE"), ("index", "records")),
)
"""Each watched table, the events, and the counters they bump."""


def _triggers() -> dict[str, str]:
    """Every trigger's name and its ``CREATE`` statement."""
    out: dict[str, str] = {}
    for table, events, counters in _WATCHED:
        names = ", ".join(f"'{c}'" for c in counters)
        for event in events:
            name = f"gen_{table}_{event.replace(' ', '_').lower()}"
            out[name] = (
                f"CREATE TRIGGER IF NOT EXISTS {name} {event} ON {table} BEGIN "
                f"UPDATE index_generations SET value = value + 1 WHERE name IN ({names}); END"
            )
    return out


TRIGGERS = _triggers()
VERSION = hashlib.sha256("\n".join(TRIGGERS.values()).encode()).hexdigest()[:16]
"""The triggers' definition, stored as ``changes.version``: a changed definition is reinstalled."""
VERSION_KEY = "changes.version"


@dataclass(frozen=True)
class IndexCounts:
    """What the index holds, counted in full at the generations ``gens``.

    ``vectors`` and ``missing`` give, per model, its stored vectors and the distinct chunk
    texts that lack one; ``missing_chunks`` the chunks whose text lacks one.
    """

    chunks: int
    texts: int
    pending_records: int
    vectors: dict[str, int]
    missing: dict[str, int]
    missing_chunks: dict[str, int] = field(default_factory=dict)

    def pending(self) -> int:
        """Work items left: records to chunk plus texts to embed, for every model."""
        return self.pending_records + sum(self.missing.values())


def install(archive: Archive) -> None:
    """Create the counters and their triggers where any is missing or was defined otherwise
    (dropping the marks)."""
    if archive.sqlite.read_only:
        return
    with archive.sqlite.reading() as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
        current = storage.get_state(conn, VERSION_KEY) == VERSION
    if current and set(TRIGGERS) <= {str(r[0]) for r in rows}:
        return
    archive.sqlite.write(_install)


def _install(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS index_generations "
        "(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID"
    )
    conn.executemany(
        "INSERT OR IGNORE INTO index_generations(name, value) VALUES (?, 0)",
        [("records",), ("index",)],
    )
    for name, sql in TRIGGERS.items():
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute(sql)
    conn.execute("DELETE FROM index_state WHERE key IN (?, ?)", (SYNCED, COUNTS))
    storage.set_state(conn, VERSION_KEY, VERSION)


def generation(conn: sqlite3.Connection, name: str) -> int | None:
    """The counter ``name`` (``None`` where the counters were never installed)."""
    try:
        row = conn.execute("SELECT value FROM index_generations WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:  # no such table: an archive no Index has written to
        return None
    return None if row is None else int(row[0])


def pending_unchanged(conn: sqlite3.Connection) -> tuple[bool, int | None]:
    """``(True, gen)`` when no record changed since a scan found nothing to chunk; else
    ``(False, gen)``: the caller scans, and marks ``gen`` (:func:`mark_synced`) if it finds
    nothing. ``gen`` is read before the scan, so a change committed meanwhile is not lost."""
    gen = generation(conn, "records")
    if gen is None:
        return False, None
    return storage.get_state(conn, SYNCED) == str(gen), gen


def mark_synced(archive: Archive, gen: int | None) -> None:
    """Remember that nothing was left to chunk at records generation ``gen``."""
    if gen is None or archive.sqlite.read_only:
        return
    archive.sqlite.write(lambda conn: storage.set_state(conn, SYNCED, str(gen)))


def counts(archive: Archive, models: tuple[str, ...]) -> IndexCounts:
    """The index's counts for ``models``: cached if nothing changed since they were taken,
    else counted in full (and cached for the next caller, in this process or another)."""
    with archive.sqlite.reading() as conn:
        gens = (generation(conn, "records"), generation(conn, "index"))
        cached = _cached(conn, gens, models)
        if cached is not None:
            return cached
        fresh = _count(conn, models)
    if gens[0] is not None and gens[1] is not None and not archive.sqlite.read_only:
        value = json.dumps({"gens": list(gens), "models": list(models), "counts": asdict(fresh)})
        archive.sqlite.write(lambda conn: storage.set_state(conn, COUNTS, value))
    return fresh


def _cached(
    conn: sqlite3.Connection, gens: tuple[int | None, int | None], models: tuple[str, ...]
) -> IndexCounts | None:
    if gens[0] is None or gens[1] is None:
        return None
    text = storage.get_state(conn, COUNTS)
    if text is None:
        return None
    data = json.loads(text)
    if data.get("gens") != list(gens) or data.get("models") != list(models):
        return None
    if "missing_chunks" not in data["counts"]:  # cached by a version that did not count them
        return None
    return IndexCounts(**data["counts"])


def _count(conn: sqlite3.Connection, models: tuple[str, ...]) -> IndexCounts:
    """Every count in full (one scan of the records, several of the chunks)."""
    chunks = int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])
    sql = "SELECT count(*) FROM index_vectors WHERE model = ?"
    vectors = {model: int(conn.execute(sql, (model,)).fetchone()[0]) for model in models}
    missing = {model: storage.count_missing(conn, model) for model in models}
    return IndexCounts(
        chunks=chunks,
        texts=storage.count_hashes(conn),
        pending_records=storage.count_pending_records(conn),
        vectors=vectors,
        missing={model: texts for model, (texts, _) in missing.items()},
        missing_chunks={model: lacking for model, (_, lacking) in missing.items()},
    )
