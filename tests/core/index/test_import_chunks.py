"""Chunks written by the import's own batches: the same index as chunking afterwards, nothing
left to chunk, a failed batch leaves nothing, and what a batch did not chunk is chunked after."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive import Archive, RecordKey, Section, open_archive
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import base, run_import
from app.core.importing import import_dataset
from app.core.index import HashingEmbedder, indexer, open_index, storage
from app.core.index.import_chunks import chunking_imports
from app.core.index.indexer import sync_chunks
from tests.conftest import shared_data

from .conftest import text

CHUNKS = (
    "SELECT section_tipo, section_id, field_tipo, lang, position, timecode, page, label, text, "
    "content_hash, restricted FROM index_chunks ORDER BY section_tipo, section_id, position"
)


def pending(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return storage.count_pending_records(conn)


def chunk_rows(archive: Archive) -> list[tuple[object, ...]]:
    with archive.db.reading() as conn:
        return [tuple(row) for row in conn.execute(CHUNKS).fetchall()]


def matches(archive: Archive, query: str) -> list[tuple[str, int]]:
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT c.section_tipo, c.section_id FROM index_fts f JOIN index_chunks c "
            "ON c.id = f.rowid WHERE index_fts MATCH ? ORDER BY 1, 2",
            (query,),
        ).fetchall()
    return [(str(r[0]), int(r[1])) for r in rows]


def test_an_import_chunks_its_batches_as_chunking_afterwards_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finding_aid = shared_data("ead", "anf", "FRAN_IR_009555.xml")
    defaults = base.ImportRun.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "batch_size", 20)
    chunked_after: list[int] = []
    original = indexer.chunk_work

    def counted(archive: Archive, keys: list[RecordKey]) -> list[storage.RecordWork]:
        work = original(archive, keys)
        chunked_after.append(len(work))
        return work

    monkeypatch.setattr(indexer, "chunk_work", counted)
    with open_archive(tmp_path / "batches", create=True) as archive:
        summary = import_dataset(archive, "ead", finding_aid)
        assert summary.sections["ead1"] > 40 and pending(archive) == 0
        assert sum(chunked_after) == 0  # the batches chunked every record they wrote
        in_batches = chunk_rows(archive), matches(archive, "correspondances OR courrier")
        again = import_dataset(archive, "ead", finding_aid)
        assert (again.created, again.updated) == (0, 0)
        assert (chunk_rows(archive), matches(archive, "correspondances OR courrier")) == in_batches
    with open_archive(tmp_path / "after", create=True) as archive:
        run_import(archive, "ead", finding_aid)
        sync_chunks(archive)
        assert sum(chunked_after) == archive.count_records() == summary.created  # + authorities
        afterwards = chunk_rows(archive), matches(archive, "correspondances OR courrier")
    assert in_batches == afterwards and afterwards[1]


def test_a_batch_whose_chunks_fail_stores_no_record(archive: Archive) -> None:
    archive.put_section(Section("n1", {"lg-eng": "Notes"}))
    records = [NewRecord("n1", {}, external_id=str(i)) for i in range(3)]

    def broken(conn: sqlite3.Connection, written: object) -> None:
        raise RuntimeError("the index could not be written")

    with archive.batch_hook(broken), pytest.raises(RuntimeError):
        archive.upsert_records(records, source="t")
    assert archive.count_records() == 0
    assert archive.upsert_records(records, source="t").created == 3  # the hook is gone


def lexical_keys(archive: Archive, word: str) -> set[RecordKey]:
    """The records a lexical search for ``word`` finds (FTS5 or the server's ``tsvector``)."""
    index = open_index(archive, HashingEmbedder(16))
    try:
        return {hit.key for hit in index.search(word, k=50, mode="lexical")}
    finally:
        index.close()


def test_records_a_batch_wrote_one_by_one_are_chunked_after(oral_archive: Archive) -> None:
    sync_chunks(oral_archive)
    good = NewRecord("oh1", {"oh2": text("A kiln by the river")}, external_id="a")
    bad = NewRecord("oh1", {"oh2": text("half \ud800 a character")}, external_id="b")
    later = NewRecord("oh1", {"oh2": text("The river mill")}, external_id="c")
    with chunking_imports(oral_archive):
        result = oral_archive.submit_upsert([good, bad, later], source="t", per_row=True).result()
    assert result.created == 2 and [position for position, _ in result.failed] == [1]
    assert pending(oral_archive) == 2  # written record by record: no batch hook ran
    assert sync_chunks(oral_archive) == 2
    assert len(lexical_keys(oral_archive, "river")) == 2 and pending(oral_archive) == 0


@pytest.mark.sqlite_only("SQLite's parameter limit and FTS5 integrity")
def test_chunks_go_in_many_to_a_statement_within_any_parameter_limit(
    oral_archive: Archive,
) -> None:
    oral_archive.upsert_records(
        [NewRecord("oh1", {"oh2": text(f"Orchard {n} by the canal")}) for n in range(200)]
    )
    with oral_archive.db.reading() as conn:
        keys = [key for key, _ in storage.pending_records(conn)]
    work = indexer.chunk_work(oral_archive, keys)

    def write(conn: sqlite3.Connection) -> storage.WriteResult:
        before = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # older SQLite: 83 rows
        try:
            return storage.write_records(conn, work, [])
        finally:
            conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)

    result = oral_archive.db.write(write)
    assert len(result.added) == sum(len(w.chunks) for w in work) > 2 * 83
    assert len(matches(oral_archive, "orchard")) == 200 and pending(oral_archive) == 0
    oral_archive.db.write(
        lambda conn: conn.execute("INSERT INTO index_fts(index_fts) VALUES ('integrity-check')")
    )


@pytest.mark.sqlite_only("the import's batch hook is the folder archive's")
def test_two_imports_at_once_chunk_each_batch_once(
    oral_archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    original = storage.write_records

    def counted(
        conn: sqlite3.Connection,
        work: list[storage.RecordWork],
        deleted: list[RecordKey],
        **options: bool,
    ) -> storage.WriteResult:
        writes.append(len(work))
        return original(conn, work, deleted, **options)

    monkeypatch.setattr(storage, "write_records", counted)
    with chunking_imports(oral_archive), chunking_imports(oral_archive):
        oral_archive.upsert_records([NewRecord("oh1", {"oh2": text("The ferry")})])
    with chunking_imports(oral_archive):  # the outer import ended: this one still chunks
        oral_archive.upsert_records([NewRecord("oh1", {"oh2": text("The ferry back")})])
    assert writes == [1, 1]
