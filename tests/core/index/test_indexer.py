"""The background indexer: incremental, content-hash reuse, model change, resume, pause, cancel."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from app.core.archive import Archive, RecordKey, open_archive
from app.core.index import ArchiveIndex, Index, Progress, open_index
from app.core.index.embedders import Vectors

from .conftest import CountingEmbedder, text

REPO = Path(__file__).resolve().parents[3]


def chunk_count(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])


def vector_count(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0])


def test_indexing_everything_then_nothing_left(
    index: ArchiveIndex, embedder: CountingEmbedder
) -> None:
    stats = index.stats()
    assert stats.pending == 0
    assert stats.chunks == stats.vectors == len(embedder.texts) > 0
    assert index.progress().state == "idle"


def test_unchanged_text_is_never_embedded_again(
    index: ArchiveIndex, oral_archive: Archive, embedder: CountingEmbedder
) -> None:
    before = len(embedder.texts)
    key = RecordKey("oh1", 1)
    record = oral_archive.get_record(key)
    oral_archive.update_record(key, {"oh4": text("A new summary about the valley")})
    index.index_now()
    new_texts = embedder.texts[before:]
    assert len(new_texts) == 1 and "A new summary about the valley" in new_texts[0]
    assert oral_archive.get_record(key).version == record.version + 1
    index.rebuild()
    index.index_now()
    assert len(embedder.texts) == before + 1  # a rebuild re-chunks but reuses every vector


def test_a_model_change_re_embeds(oral_archive: Archive, index: ArchiveIndex) -> None:
    other = CountingEmbedder(salt="v2")
    second = open_index(oral_archive, other)
    assert second.stats().pending == index.stats().chunks
    second.index_now()
    assert len(other.texts) == index.stats().chunks
    assert second.search("reservoir", mode="dense")
    second.close()


def test_record_changes_are_indexed_in_the_background(oral_archive: Archive) -> None:
    idx = open_index(oral_archive, CountingEmbedder())
    events: list[Progress] = []
    idx.add_progress_listener(events.append)
    idx.start()
    assert idx.indexer.wait_idle(30)
    key = oral_archive.create_record("oh1", {"oh2": text("Orchards and irrigation canals")})
    assert idx.indexer.wait_idle(30)
    assert [h.key for h in idx.search("irrigation", mode="lexical")] == [key]
    oral_archive.delete_record(key)
    assert idx.indexer.wait_idle(30)
    assert idx.search("irrigation", mode="lexical") == []
    assert idx.search("irrigation canals orchards", mode="dense", k=10)
    assert all(h.key != key for h in idx.search("irrigation canals", mode="dense", k=10))
    assert events[0].state == "running" and events[-1].state == "idle"
    idx.close()


async def test_wait_idle_async_does_not_block_the_loop(oral_archive: Archive) -> None:
    idx = open_index(oral_archive, CountingEmbedder())
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    idx.start()
    assert await idx.indexer.wait_idle_async(30)
    task.cancel()
    assert ticks > 0 and idx.stats().pending == 0
    idx.close()


def many_records(archive: Archive, n: int) -> None:
    for i in range(n):
        archive.create_record("oh1", {"oh2": text(f"Record number {i} about topic{i}")})


def test_a_crash_mid_run_resumes_without_redoing_finished_work(oral_archive: Archive) -> None:
    many_records(oral_archive, 700)
    crashing = CountingEmbedder(fail_after=200)
    first = open_index(oral_archive, crashing)
    with contextlib.suppress(RuntimeError):
        first.index_now()
    first.close()
    assert chunk_count(oral_archive) == 705  # every record chunked before any embedding
    done_before = vector_count(oral_archive)
    assert 0 < done_before < 705
    location = oral_archive.location
    oral_archive.close()
    reopened = open_archive(location)
    resumed = CountingEmbedder()
    second = open_index(reopened, resumed)
    interrupted = second.indexer.last_run()
    assert interrupted is not None and interrupted.state == "running"
    assert 0 < interrupted.done < interrupted.total
    second.index_now()
    finished = second.indexer.last_run()
    assert finished is not None and finished.state == "idle"
    assert set(crashing.texts).isdisjoint(resumed.texts)
    assert len(crashing.texts) + len(resumed.texts) == vector_count(reopened)
    second.close()
    reopened.close()


class GatedEmbedder(CountingEmbedder):
    """Blocks each embed call until the test lets it through."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Semaphore(0)
        self.gate = threading.Semaphore(0)

    def embed(self, texts: list[str]) -> Vectors:
        self.entered.release()
        assert self.gate.acquire(timeout=30)
        return super().embed(texts)


def test_pause_resume_and_cancel(oral_archive: Archive) -> None:
    many_records(oral_archive, 1100)  # three batches of VECTOR_BATCH
    gated = GatedEmbedder()
    idx = open_index(oral_archive, gated)
    states: list[str] = []
    idx.add_progress_listener(lambda p: states.append(p.state))
    idx.start()
    assert gated.entered.acquire(timeout=30)
    idx.pause()
    gated.gate.release()  # the batch in flight finishes, then the run waits
    assert not idx.indexer.wait_idle(0.3)
    assert idx.progress().state == "paused"
    done = vector_count(oral_archive)
    assert not gated.entered.acquire(timeout=0.3)  # nothing embedded while paused
    assert vector_count(oral_archive) == done
    idx.resume()
    assert gated.entered.acquire(timeout=30)
    idx.cancel()
    gated.gate.release()
    assert idx.indexer.wait_idle(30)
    assert idx.progress().state == "cancelled"
    assert "paused" in states and idx.stats().pending > 0
    idx.close()


KILLED_CHILD = """
import sys, time
from app.core.archive import open_archive
from app.core.index import HashingEmbedder, open_index

class Slow(HashingEmbedder):
    def embed(self, texts):
        time.sleep(0.5)
        return super().embed(texts)

archive = open_archive(sys.argv[1])
open_index(archive, Slow(64)).index_now()
"""


def test_a_killed_process_resumes_without_redoing_finished_work(oral_archive: Archive) -> None:
    many_records(oral_archive, 1100)
    location = oral_archive.location
    oral_archive.close()
    child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, location], cwd=REPO)
    try:
        with open_archive(location) as watcher:
            deadline = time.monotonic() + 60
            while vector_count(watcher) == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            child.send_signal(signal.SIGKILL)
            child.wait(30)
            done_before = vector_count(watcher)
            with watcher.db.reading() as conn:
                hashes = {r[0] for r in conn.execute("SELECT content_hash FROM index_vectors")}
    finally:
        if child.poll() is None:
            child.kill()
    assert 0 < done_before < 1105
    with open_archive(location) as reopened:
        resumed = CountingEmbedder()
        index = open_index(reopened, resumed)
        index.index_now()
        index.close()
        assert vector_count(reopened) == done_before + len(resumed.texts) == 1105
        assert hashes.isdisjoint(content_hashes(resumed.texts))


def content_hashes(texts: list[str]) -> set[str]:
    """The content hashes of embedded texts (as Chunk.content_hash computes them)."""
    return {hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts}


def test_pausing_a_run_on_the_callers_thread_returns_instead_of_blocking(
    oral_archive: Archive,
) -> None:
    many_records(oral_archive, 700)
    gated = GatedEmbedder()
    idx = open_index(oral_archive, gated)
    result: list[str] = []
    caller = threading.Thread(target=lambda: result.append(idx.index_now().state))
    caller.start()
    assert gated.entered.acquire(timeout=30)
    idx.pause()
    gated.gate.release()  # the batch in flight finishes, then the caller's run returns
    caller.join(timeout=30)
    assert not caller.is_alive()
    assert result == ["paused"] and idx.stats().pending > 0
    idx.resume()
    for _ in range(10):
        gated.gate.release()
    assert idx.index_now().state == "idle"
    assert idx.stats().pending == 0
    idx.close()


def test_an_archive_indexed_with_one_model_gets_the_second_in_the_background(
    oral_archive: Archive,
) -> None:
    """The previous version indexed with MiniLM alone; opened with two models, search works at
    once from the first model's vectors, the second model's vectors arrive in the background,
    and no vector of the first model is embedded again."""
    first = CountingEmbedder(salt="minilm")
    old = open_index(oral_archive, first)
    old.index_now()
    old.close()
    embedded_before = len(first.texts)
    again, second = CountingEmbedder(salt="minilm"), GatedEmbedder()
    upgraded = open_index(oral_archive, [again, second])
    stats = upgraded.stats()
    assert dict(stats.coverage) == {again.model_id: 1.0, second.model_id: 0.0}
    assert stats.pending == embedded_before
    upgraded.start()
    assert second.entered.acquire(timeout=30)  # the background run is embedding
    hits = upgraded.search("reservoir flooded the village", mode="dense")
    assert hits and hits[0].key == RecordKey("oh1", 1)
    second.gate.release()
    assert upgraded.indexer.wait_idle(30)
    assert upgraded.stats().dense_complete == 1.0 and upgraded.stats().pending == 0
    assert again.texts == ["reservoir flooded the village"]  # the query, no archive text
    assert len(second.texts) == embedded_before
    assert upgraded.stats().coverage == ((again.model_id, 1.0), (second.model_id, 1.0))
    if isinstance(upgraded, Index):  # the folder index keeps each model's vectors in memory
        assert upgraded.matrix_of(second).dim == second.dim and len(upgraded.matrix_of(second))
    upgraded.close()
