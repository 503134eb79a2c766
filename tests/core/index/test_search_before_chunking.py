"""A search on a fresh demo archive finds records before the background indexer chunked them
(the window's first search after the first start used to list none)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.archive import Archive
from app.core.archive.demo import create_demo_archive
from app.core.index import HashingEmbedder, Index
from app.core.index.indexer import sync_chunks
from app.core.index.record_hits import search_records
from app.core.index.storage import count_indexed_records


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Archive]:
    archive = create_demo_archive(tmp_path / "demo")
    yield archive
    archive.close()


def chunked(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return count_indexed_records(conn)


def test_the_first_search_chunks_the_new_demo_first(demo: Archive) -> None:
    index = Index(demo, HashingEmbedder())  # not started: nothing chunked, no vector
    try:
        assert chunked(demo) == 0
        hits = search_records(index, demo, "pantà", k=10, lang="lg-eng")
        assert hits, "the first search found nothing before the indexer ran"
        assert any(hit.key.section_tipo == "oh1" for hit in hits)
        assert chunked(demo) == demo.count_records() == 192
    finally:
        index.close()


def test_a_change_is_found_by_the_next_search_without_the_indexer(demo: Archive) -> None:
    index = Index(demo, HashingEmbedder())
    try:
        index.sync_lexical()
        key = demo.create_record("oh1", {"oh16": [{"lang": "lg-eng", "value": "Zeppelinwharf"}]})
        hits = index.search("Zeppelinwharf", k=3, mode="lexical")
        assert [hit.key for hit in hits] == [key]
    finally:
        index.close()


def test_more_records_than_the_bound_are_left_to_the_indexer(demo: Archive) -> None:
    assert sync_chunks(demo, at_most=10) == 0
    assert chunked(demo) == 0
    handled = sync_chunks(demo, at_most=10_000)
    assert handled == chunked(demo) > 10
