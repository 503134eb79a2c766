"""Importing as the front ends do: the archive writes records, the import service chunks them."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.archive import Archive
from app.core.archive.importers import beir_key, run_import
from app.core.importing import import_dataset
from app.core.index import HashingEmbedder, open_index, storage
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import first_lines, write_gz

CORPUS = "beir-dbpedia-5k"


def waiting(archive: Archive) -> int:
    """Records not chunked at their current version (on either engine)."""
    with archive.db.reading() as conn:
        return storage.count_pending_records(conn)


def corpus_slice(tmp_path: Path, count: int) -> tuple[Path, list[dict[str, str]]]:
    """The first ``count`` documents of the real corpus, as a corpus file of their own."""
    lines = first_lines(shared_data(CORPUS, "corpus.jsonl.gz"), count)
    path = write_gz(tmp_path / CORPUS / "corpus.jsonl.gz", lines)
    return path, [json.loads(line) for line in lines]


def test_import_dataset_leaves_the_lexical_index_current(archive: Archive, tmp_path: Path) -> None:
    path, docs = corpus_slice(tmp_path, 30)

    summary = import_dataset(archive, "beir", path)

    assert summary.created == 30 and summary.seconds > 0
    doc = docs[7]
    key = beir_key(archive, CORPUS, doc["_id"])
    assert key is not None
    assert waiting(archive) == 0
    index = open_index(archive, HashingEmbedder(16))  # FTS5, or the server's tsvector
    try:
        assert index.sync_lexical() == 0  # nothing left for the index to chunk
        found = {hit.key for hit in index.search(doc["title"], k=50, mode="lexical")}
    finally:
        index.close()
    assert key in found


def test_run_import_alone_writes_records_and_leaves_chunking_to_the_caller(
    archive: Archive, tmp_path: Path
) -> None:
    path, _ = corpus_slice(tmp_path, 12)

    run_import(archive, "beir", path)

    assert waiting(archive) == 12
