"""The file a large archive keeps its vectors in for a cold start: used only for the exact state
it was saved from (the demo stands in for a large archive: ``CACHE_ABOVE`` lowered)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.archive import RecordKey, open_archive
from app.core.archive.demo import create_demo_archive
from app.core.index import HashingEmbedder, Index, service, vector_cache

EMBEDDER = HashingEmbedder(48)
QUERY = "families who left when the reservoir was built"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The demo archive indexed with the hashing embedder, counted as a large archive."""
    monkeypatch.setattr(vector_cache, "CACHE_ABOVE", 1)
    archive = create_demo_archive(tmp_path / "demo")
    index = Index(archive, EMBEDDER)
    index.index_now()
    index.close()
    archive.close()
    yield tmp_path / "demo"


def _search(folder: Path, *, read_only: bool = False) -> list[tuple[int | None, float]]:
    """A fresh process's dense search: the archive opened, the vectors loaded, the hits."""
    archive = open_archive(folder, read_only=read_only)
    index = Index(archive, EMBEDDER)
    try:
        hits = index.search(QUERY, k=10, mode="dense")
        return [(hit.chunk_id, round(hit.score, 6)) for hit in hits]
    finally:
        index.close()
        archive.close()


class Reads:
    """Counts the loads that read the vectors from SQLite (rather than from the file)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = service._add_rows

        def counted(*args: object, **kwargs: object) -> object:
            self.count += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(service, "_add_rows", counted)


def _file(folder: Path) -> Path:
    return vector_cache.file_of(folder, EMBEDDER.model_id)


def test_the_second_cold_search_reads_the_file_and_finds_the_same(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    first = _search(folder)
    assert reads.count == 1 and _file(folder).exists()
    again = _search(folder)
    assert reads.count == 1, "the second search read SQLite although the file matched"
    assert again == first and len(first) == 10


def test_a_change_to_the_index_makes_the_file_stale(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _search(folder)
    archive = open_archive(folder)
    index = Index(archive, EMBEDDER)
    gone = before[0][0]
    with archive.sqlite.reading() as conn:
        tipo, section_id = conn.execute(
            "SELECT section_tipo, section_id FROM index_chunks WHERE id = ?", (gone,)
        ).fetchone()
    archive.delete_record(RecordKey(tipo, section_id), unlink=True)
    index.index_now()
    index.close()
    archive.close()
    reads = Reads(monkeypatch)
    after = _search(folder)
    assert reads.count == 1, "the stale file was used"
    assert gone not in [cid for cid, _ in after]
    assert _search(folder) == after and reads.count == 1  # saved again for the new state


def test_a_file_from_a_restored_backup_or_another_archive_is_not_used(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _search(folder)
    backup = tmp_path / "backup.db"
    shutil.copy(folder / "archive.db", backup)
    saved_then = _file(folder).read_bytes()
    archive = open_archive(folder)  # a change and a new file
    index = Index(archive, EMBEDDER)
    archive.create_record("oh1", {"oh16": [{"lang": "lg-eng", "value": "A new interview"}]})
    index.index_now()
    index.close()
    archive.close()
    _search(folder)
    assert _file(folder).read_bytes() != saved_then
    shutil.copy(backup, folder / "archive.db")  # the backup is back; the newer file stays
    reads = Reads(monkeypatch)
    _search(folder)
    assert reads.count == 1, "a file of a later state was used for the restored archive"
    other = tmp_path / "other"  # another archive (the demo again, indexed) with this one's file
    archive = create_demo_archive(other)
    index = Index(archive, EMBEDDER)
    index.index_now()
    index.close()
    archive.close()
    shutil.copytree(folder / vector_cache.CACHE_DIR, other / vector_cache.CACHE_DIR)
    reads.count = 0
    _search(other)
    assert reads.count == 1


def test_a_damaged_file_is_read_past(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _search(folder)
    data = _file(folder).read_bytes()
    _file(folder).write_bytes(data[: len(data) // 2])
    reads = Reads(monkeypatch)
    assert _search(folder) == first
    assert reads.count == 1


def test_a_read_only_archive_keeps_no_file(folder: Path) -> None:
    assert _search(folder, read_only=True)
    assert not _file(folder).exists()


def test_the_file_holds_every_chunk_with_its_flags(folder: Path) -> None:
    _search(folder)
    archive = open_archive(folder)
    try:
        with archive.sqlite.reading() as conn:
            stamp = vector_cache.current(conn, EMBEDDER.model_id)
            rows = conn.execute(
                "SELECT c.id, c.section_tipo, c.restricted FROM index_chunks c JOIN index_vectors "
                "v ON v.content_hash = c.content_hash AND v.model = ? ORDER BY c.id",
                (EMBEDDER.model_id,),
            ).fetchall()
    finally:
        archive.close()
    assert stamp is not None
    cached = vector_cache.load(folder, EMBEDDER.model_id, EMBEDDER.dim, stamp)
    assert cached is not None
    order = np.argsort(cached.ids)
    saved = [(cached.ids[i], cached.sections[i], cached.flags[i]) for i in order.tolist()]
    assert saved == [(r[0], r[1], None if r[2] is None else bool(r[2])) for r in rows]
    assert vector_cache.load(folder, EMBEDDER.model_id, EMBEDDER.dim + 1, stamp) is None


def test_flags_and_sections_round_trip(tmp_path: Path) -> None:
    rows = vector_cache.CachedRows(
        [3, 1, 2], ["oh1", "rs1", "oh1"], [None, True, False], np.eye(3, 4, dtype=np.float32)
    )
    stamp = vector_cache.Stamp("t0k3n", 7)
    assert vector_cache.save(tmp_path, "some/model", stamp, rows)
    back = vector_cache.load(tmp_path, "some/model", 4, stamp)
    assert back is not None
    assert (back.ids, back.sections, back.flags) == (rows.ids, rows.sections, rows.flags)
    assert np.array_equal(back.vectors, rows.vectors)
    assert vector_cache.load(tmp_path, "some/model", 4, vector_cache.Stamp("t0k3n", 8)) is None
    assert vector_cache.load(tmp_path, "other", 4, stamp) is None
