"""Chunk writes at import scale: the work listed once, bulk FTS5 rebuild, no work done twice."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive import Archive, RecordKey
from app.core.index import indexer, lexical, storage
from app.core.index.indexer import chunk_batch, sync_chunks

from .conftest import text


def fts_ids(archive: Archive, word: str) -> set[int]:
    with archive.db.reading() as conn:
        rows = conn.execute(  # the word's lexemes: the table holds them, stemmed
            "SELECT rowid FROM index_fts WHERE index_fts MATCH ?", (lexical.any_lexeme(word),)
        )
        return {int(r[0]) for r in rows.fetchall()}


def chunk_ids(archive: Archive, word: str) -> set[int]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT id FROM index_chunks WHERE lower(label || ' ' || text) LIKE ?",
            (f"%{word}%",),
        )
        return {int(r[0]) for r in rows.fetchall()}


def insert_triggers(archive: Archive) -> list[str]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'index_chunks' "
            "ORDER BY name"
        ).fetchall()
    return [str(r[0]) for r in rows]


@pytest.mark.sqlite_only("the SQLite sync's listing of pending records and FTS5")
def test_a_sync_lists_the_pending_records_once(
    oral_archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(600):
        oral_archive.create_record("oh1", {"oh2": text(f"Record number {i} about topic{i}")})
    scans: list[int] = []
    original = storage.pending_records

    def counted(conn: object, limit: int | None = None) -> list[tuple[RecordKey, int]]:
        found = original(conn, limit)  # type: ignore[arg-type]
        scans.append(len(found))
        return found

    monkeypatch.setattr(storage, "pending_records", counted)
    assert sync_chunks(oral_archive) == 604
    assert scans == [604, 0]  # one scan lists all the work, one confirms nothing is left
    assert fts_ids(oral_archive, "topic599") == chunk_ids(oral_archive, "topic599") != set()


@pytest.mark.sqlite_only("the SQLite bulk write: FTS5 rebuild and its triggers")
def test_a_bulk_sync_rebuilds_full_text_once_and_keeps_the_triggers(
    oral_archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    triggers = insert_triggers(oral_archive)
    monkeypatch.setattr(indexer, "BULK_MIN", 1)
    rebuilt: list[int] = []
    original = storage.bulk_write_records

    def spy(conn: object, work: list[storage.RecordWork]) -> storage.WriteResult:
        rebuilt.append(len(work))
        return original(conn, work)  # type: ignore[arg-type]

    monkeypatch.setattr(storage, "bulk_write_records", spy)
    assert sync_chunks(oral_archive) == 4
    assert rebuilt == [4]  # a first sync: every record in one bulk write
    assert insert_triggers(oral_archive) == triggers
    assert fts_ids(oral_archive, "reservoir") == chunk_ids(oral_archive, "reservoir")
    assert len(fts_ids(oral_archive, "reservoir")) == 3
    key = RecordKey("oh1", 1)
    oral_archive.update_record(key, {"oh2": text("Orchards by the canal")})
    assert sync_chunks(oral_archive) == 1
    assert rebuilt == [4]  # one changed record among four: the triggers index it
    assert fts_ids(oral_archive, "orchards") == chunk_ids(oral_archive, "orchards") != set()
    assert fts_ids(oral_archive, "valley") == set()  # the old label is gone from FTS5 too


@pytest.mark.sqlite_only("the SQLite chunk_batch's write result (ids of the in-memory matrices)")
def test_a_record_chunked_at_its_version_is_not_chunked_again(oral_archive: Archive) -> None:
    sync_chunks(oral_archive)
    key = RecordKey("oh1", 1)
    before = chunk_ids(oral_archive, "leave our houses")
    assert len(before) == 1
    result = chunk_batch(oral_archive, [key, key], [])
    assert result.added == result.removed == []
    assert chunk_ids(oral_archive, "leave our houses") == before
    oral_archive.update_record(key, {"oh4": text("A summary about the reservoir")})
    result = chunk_batch(oral_archive, [key, key], [])
    assert result.added and result.removed == sorted(before)  # its old chunk, once
    with oral_archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT count(*), count(DISTINCT position) FROM index_chunks "
            "WHERE section_tipo = 'oh1' AND section_id = 1"
        ).fetchone()
    assert rows[0] == rows[1] == len(result.added) == 2


@pytest.mark.sqlite_only("the SQLite indexer's hash-ordered vector batches")
def test_missing_vectors_are_read_on_from_the_last_hash(oral_archive: Archive) -> None:
    sync_chunks(oral_archive)
    with oral_archive.db.reading() as conn:
        everything = storage.missing_vectors(conn, "m", 100)
        first = storage.missing_vectors(conn, "m", 2)
        rest = storage.missing_vectors(conn, "m", 100, first[-1][0])
    hashes = [h for h, _ in everything]
    assert hashes == sorted(hashes) and len(hashes) == len(set(hashes)) > 3
    assert [h for h, _ in first + rest] == hashes


def fts_vocabulary(archive: Archive) -> list[tuple[object, ...]]:
    """Every term FTS5 holds, with its documents and hits (the index itself, not a query)."""
    with archive.db.reading() as conn:
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms "
            "USING fts5vocab(main, index_fts, row)"
        )
        return [tuple(r) for r in conn.execute("SELECT * FROM temp.fts_terms ORDER BY term")]


@pytest.mark.sqlite_only("the SQLite chunk write: FTS5 filled in one statement, its trigger")
def test_chunks_written_with_full_text_at_once_index_as_the_trigger_does(
    oral_archive: Archive, tmp_path: Path
) -> None:
    triggers = insert_triggers(oral_archive)
    work = indexer.chunk_work(oral_archive, [RecordKey("oh1", 1), RecordKey("oh1", 2)])
    oral_archive.db.write(lambda conn: storage.write_records(conn, work, []))
    by_trigger = fts_vocabulary(oral_archive)
    assert by_trigger and fts_ids(oral_archive, "reservoir") == chunk_ids(oral_archive, "reservoir")
    oral_archive.db.write(lambda conn: storage.clear(conn, vectors=False))
    assert fts_vocabulary(oral_archive) == []

    def at_once(conn: sqlite3.Connection) -> storage.WriteResult:
        result = storage.write_records(conn, work, [], fts_at_once=True)
        assert insert_triggers(oral_archive) == triggers  # back before the commit
        return result

    result = oral_archive.db.write(at_once)
    assert len(result.added) == sum(len(w.chunks) for w in work) > 2
    assert fts_vocabulary(oral_archive) == by_trigger
    assert fts_ids(oral_archive, "reservoir") == chunk_ids(oral_archive, "reservoir") != set()
    assert insert_triggers(oral_archive) == triggers

    def failing(conn: sqlite3.Connection) -> None:
        storage.write_records(conn, work, [], fts_at_once=True)
        raise RuntimeError("the batch fails after its chunks")

    with pytest.raises(RuntimeError):
        oral_archive.db.write(failing)
    assert insert_triggers(oral_archive) == triggers  # rolled back: the trigger kept
    assert fts_vocabulary(oral_archive) == by_trigger
