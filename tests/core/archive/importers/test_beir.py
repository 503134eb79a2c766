"""BEIR corpora: generic records whose BEIR ids map back both ways."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.archive import Archive
from app.core.archive.importers import beir_ids, beir_key, run_import
from app.core.archive.importers.beir import corpus_name
from tests.core.archive.importers.conftest import SliceFn, first_lines, write_gz


def test_documents_keep_their_beir_ids(archive: Archive, data_slice: SliceFn) -> None:
    path = data_slice("beir-dbpedia-5k/corpus.jsonl.gz", 200)
    docs = [json.loads(line) for line in first_lines(path, 200)]

    summary = run_import(archive, "beir", path)

    assert summary.created == 200
    assert corpus_name(path) == "beir-dbpedia-5k"
    mapping = beir_ids(archive, "beir-dbpedia-5k")
    assert sorted(mapping.values()) == sorted(d["_id"] for d in docs)
    doc = docs[17]
    key = beir_key(archive, "beir-dbpedia-5k", doc["_id"])
    assert key is not None and mapping[key] == doc["_id"]
    record = archive.get_record(key)
    assert record.text("beir2") == doc["title"]
    assert record.text("beir3") == doc["text"]
    assert record.text("beir4") == doc["_id"]


def test_two_corpora_do_not_collide(archive: Archive, data_slice: SliceFn, tmp_path: Path) -> None:
    path = data_slice("beir-dbpedia-5k/corpus.jsonl.gz", 20)
    other = write_gz(tmp_path / "other-corpus" / "corpus.jsonl.gz", first_lines(path, 20))

    run_import(archive, "beir", path)
    second = run_import(archive, "beir", other)

    assert second.created == 20
    assert len(beir_ids(archive, "beir-dbpedia-5k")) == len(beir_ids(archive, "other-corpus")) == 20
    assert set(beir_ids(archive, "other-corpus")).isdisjoint(beir_ids(archive, "beir-dbpedia-5k"))


def test_importing_a_corpus_again_creates_nothing(archive: Archive, data_slice: SliceFn) -> None:
    path = data_slice("beir-dbpedia-5k/corpus.jsonl.gz", 100)
    run_import(archive, "beir", path)

    again = run_import(archive, "beir", path.parent)

    assert (again.created, again.unchanged) == (0, 100)
    assert archive.count_records("beir1") == 100
