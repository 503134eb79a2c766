"""Change generations: exact counts across every kind of change, and no scan when none."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from app.core.archive import Archive, RecordKey, open_archive
from app.core.index import HashingEmbedder, Index, open_index, storage
from app.core.index.changes import TRIGGERS, generation
from app.core.index.service import IndexStats

from .conftest import text

MODELS = (HashingEmbedder(64), HashingEmbedder(32, salt="b"))


def full_stats(archive: Archive) -> IndexStats:
    """The counts as ``stats()`` took them before the generations: every one in full."""
    with archive.db.reading() as conn:
        chunks = int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])
        vectors = int(
            conn.execute(
                "SELECT count(*) FROM index_vectors WHERE model = ?", (MODELS[0].model_id,)
            ).fetchone()[0]
        )
        texts = storage.count_hashes(conn)
        missing = [storage.count_missing_vectors(conn, m.model_id) for m in MODELS]
        pending = storage.count_pending_records(conn) + sum(missing)
    coverage = tuple(
        (m.model_id, 1.0 - gone / texts if texts else 1.0)
        for m, gone in zip(MODELS, missing, strict=True)
    )
    return IndexStats(MODELS[0].model_id, chunks, vectors, pending, coverage)


@contextmanager
def counted_steps(archive: Archive) -> Iterator[list[int]]:
    """Count the SQLite VM steps this thread's read connection runs (rows scanned show up as
    steps: a full scan of the chunks costs several per chunk)."""
    conn = archive.db.conn()
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(tick, 1)
    try:
        yield steps
    finally:
        conn.set_progress_handler(None, 1)


def unchanged_call_steps(index: Index) -> int:
    """VM steps of a search's preamble (lexical sync, then stats) on an unchanged archive."""
    index.sync_lexical()
    index.stats()  # the first call after a change counts in full and caches
    with counted_steps(index.archive) as steps:
        assert index.sync_lexical() == 0
        index.stats()
    return steps[0]


def add_records(archive: Archive, count: int, word: str) -> list[RecordKey]:
    return [
        archive.create_record("oh1", {"oh2": text(f"{word} {i}"), "oh3": text(f"About {word} {i}")})
        for i in range(count)
    ]


def test_counts_stay_exact_across_import_change_delete_and_index(oral_archive: Archive) -> None:
    index = open_index(oral_archive, MODELS)
    other = open_archive(oral_archive.location)  # a second process's view
    try:
        steps: list[Callable[[], object]] = [
            lambda: None,
            index.sync_lexical,
            index.index_now,
            lambda: add_records(oral_archive, 5, "mill"),
            index.sync_lexical,
            lambda: oral_archive.update_record(
                RecordKey("oh1", 1), {"oh2": text("Leaving the valley again")}
            ),
            lambda: oral_archive.delete_record(RecordKey("oh1", 2)),
            index.sync_lexical,
            lambda: add_records(other, 3, "wool"),  # written through another connection
            index.index_now,
            lambda: oral_archive.delete_record(RecordKey("oh1", 3)),
            index.index_now,
            index.rebuild,  # every chunk forgotten: every record is work again
            index.sync_lexical,
            index.index_now,
        ]
        for number, step in enumerate(steps):
            step()
            assert index.stats() == full_stats(oral_archive), f"after step {number}"
            assert index.stats() == full_stats(oral_archive), f"cached, after step {number}"
            assert index.indexer.pending() == full_stats(oral_archive).pending
        assert index.stats().pending == 0 and index.stats().chunks > 0
        index.rebuild()
        assert index.sync_lexical() == oral_archive.count_records()
    finally:
        other.close()
        index.close()


@pytest.mark.sqlite_only(
    "counts SQLite VM steps: the no-scan path is the folder index's change generations"
)
def test_an_unchanged_archive_is_not_scanned(oral_archive: Archive) -> None:
    index = Index(oral_archive, MODELS)
    try:
        small = unchanged_call_steps(index)
        add_records(oral_archive, 300, "reservoir")
        with counted_steps(oral_archive) as changed:
            index.sync_lexical()
            index.stats()
        large = unchanged_call_steps(index)
    finally:
        index.close()
    assert large == small  # the same work whatever the archive's size
    assert small < 200 < changed[0] / 10  # and far less than one scan of 300 records


@pytest.mark.sqlite_only("SQLite query plans of the change generations")
def test_the_no_change_lookups_use_primary_keys(oral_archive: Archive) -> None:
    Index(oral_archive, MODELS).close()
    with oral_archive.db.reading() as conn:
        for sql in (
            "SELECT value FROM index_generations WHERE name = 'records'",
            "SELECT value FROM index_state WHERE key = 'sync.records_gen'",
        ):
            plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert plan.startswith("SEARCH") and "SCAN" not in plan, plan


@pytest.mark.sqlite_only("the change generations' SQLite triggers")
def test_a_missing_trigger_drops_the_marks(oral_archive: Archive) -> None:
    index = Index(oral_archive, MODELS)
    index.sync_lexical()
    index.close()
    # a version without the triggers changed a record: no generation was bumped
    oral_archive.db.write(lambda conn: conn.execute("DROP TRIGGER gen_records_after_update"))
    before = generation_of(oral_archive)
    oral_archive.update_record(RecordKey("oh1", 1), {"oh2": text("Renamed")})
    assert generation_of(oral_archive) == before
    index = Index(oral_archive, MODELS)
    try:
        with oral_archive.db.reading() as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert set(TRIGGERS) <= names
        assert index.sync_lexical() == 1  # the change was found by a scan
        assert index.stats() == full_stats(oral_archive)
    finally:
        index.close()


def generation_of(archive: Archive) -> int | None:
    with archive.db.reading() as conn:
        return generation(conn, "records")


@pytest.mark.sqlite_only("the change generations' marks of a read-only folder archive")
def test_a_read_only_archive_always_counts_in_full(oral_archive: Archive) -> None:
    Index(oral_archive, MODELS).close()
    folder = oral_archive.db.path.parent
    oral_archive.create_record("oh1", {"oh2": text("Unchunked")})
    reader = open_archive(folder, read_only=True)
    try:
        index = Index(reader, MODELS)
        assert index.stats() == full_stats(reader)
        assert index.stats().pending >= 1
        index.close()
    finally:
        reader.close()
    assert isinstance(sqlite3.sqlite_version, str)
