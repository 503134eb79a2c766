"""Chunking a shared archive in the server (``arxiu index --worker`` and the shared index): two
worker *processes* chunk every changed record exactly once, into the chunks the SQLite indexer
made; a chunker killed mid-batch loses and doubles nothing; changes and deletions are followed;
a role without the restricted right leaves the restricted records (and their rows) alone.

The archive is the indexed demo copied to the server; "waiting" means its chunks and chunked
versions deleted (its vectors kept: equal texts need none again). A worker process is held
inside a batch deterministically by a gate, as in ``test_worker``: its chunk writer marks a
file when it starts writing a batch, then waits for a ``go`` file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import RecordKey, open_archive
from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.roles import grant
from app.core.archive.postgres.transfer import copy_archive
from app.core.index import HashingEmbedder, open_index
from app.core.index.postgres import chunker, service
from app.core.index.postgres.values import as_int
from app.core.index.postgres.worker import run_worker
from tests.postgres_server import PgServer

ROOT = Path(__file__).resolve().parents[4]
MODELS = (HashingEmbedder(64),)
BATCH = 16
"""Records a worker chunks per transaction here (many batches for the demo's records)."""
WAIT_S = 60.0
CHUNK_COLUMNS = (
    "section_tipo, section_id, field_tipo, lang, position, timecode, page, label, text, "
    "content_hash, restricted"
)


def child_main(argv: list[str]) -> None:
    """A worker process: ``URL [GATE_FOLDER FREE_BATCHES]``; chunks (then embeds) with batches
    of :data:`BATCH` records and prints its result as JSON."""
    url = argv[0]
    chunker.BATCH = BATCH
    if len(argv) > 1:
        folder, free = Path(argv[1]), int(argv[2])
        chunker._write = gated(chunker._write, folder, free)  # type: ignore[attr-defined]
    result = run_worker(url, MODELS)
    print(json.dumps(asdict(result)))


def gated(write: Callable[..., Any], folder: Path, free: int) -> Callable[..., Any]:
    """``write`` that, after ``free`` batches, marks ``started-<pid>-<n>`` and waits for
    ``go`` before writing (the batch's records are locked meanwhile)."""
    calls = [0]

    def held(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] > free:
            (folder / f"started-{os.getpid()}-{calls[0]}").touch()
            while not (folder / "go").exists():
                time.sleep(0.01)
        return write(*args)

    return held


def spawn(url: str, gate: Path | None = None, free: int = 0) -> subprocess.Popen[str]:
    code = "import sys; from tests.core.index.postgres.test_chunking import child_main; "
    code += "child_main(sys.argv[1:])"
    args = [url, *([str(gate), str(free)] if gate else [])]
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(worker: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = worker.communicate(timeout=WAIT_S)
    assert worker.returncode == 0, err
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def wait_for(folder: Path, count: int, workers: list[subprocess.Popen[str]]) -> list[Path]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = sorted(folder.glob("started-*"))
        if len(found) >= count:
            return found
        for worker in workers:
            assert worker.poll() is None, worker.communicate()[1]
        time.sleep(0.02)
    raise AssertionError(f"only {len(list(folder.glob('started-*')))} of {count} gates reached")


def scalar(url: str, query: str) -> int:
    with connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return as_int(row[0])


def chunk_rows(url: str) -> Counter[tuple[object, ...]]:
    """Every chunk (without its id), counted: a chunk written twice counts 2."""
    with connect(url) as conn:
        rows = conn.execute(f"SELECT {CHUNK_COLUMNS} FROM index_chunks").fetchall()
    return Counter(tuple(r) for r in rows)


def assert_current(url: str) -> None:
    """Every record chunked at its version, no orphan, no chunk position twice."""
    assert scalar(url, "SELECT count(*) FROM records") == scalar(
        url, "SELECT count(*) FROM index_records"
    )
    waiting = (
        "SELECT count(*) FROM records r LEFT JOIN index_records i ON i.section_tipo = "
        "r.section_tipo AND i.section_id = r.section_id WHERE i.version IS DISTINCT FROM r.version"
    )
    assert scalar(url, waiting) == 0
    twice = (
        "SELECT count(*) FROM (SELECT 1 FROM index_chunks GROUP BY section_tipo, section_id, "
        "position HAVING count(*) > 1) d"
    )
    assert scalar(url, twice) == 0


@pytest.fixture
def copied(indexed_demo_dir: Path, pg_database: str) -> str:
    """The indexed demo copied into a fresh database (chunked as SQLite chunked it)."""
    copy_archive(str(indexed_demo_dir), pg_database)
    return pg_database


@pytest.fixture
def waiting(copied: str) -> Iterator[tuple[str, Counter[tuple[object, ...]]]]:
    """The copy with every chunk and chunked version deleted (every record waits), and the
    chunks SQLite had made of it."""
    made = chunk_rows(copied)
    with connect(copied) as conn:
        conn.execute("DELETE FROM index_chunks")
        conn.execute("DELETE FROM index_records")
        conn.commit()
    yield copied, made


def test_two_worker_processes_chunk_every_record_exactly_once(
    waiting: tuple[str, Counter[tuple[object, ...]]], tmp_path: Path
) -> None:
    url, made = waiting
    records = scalar(url, "SELECT count(*) FROM records")
    assert records > 4 * BATCH
    gate = tmp_path / "gate"
    gate.mkdir()
    workers = [spawn(url, gate) for _ in range(2)]
    try:
        # both hold a claimed batch at once: neither waits for the other's records
        started = wait_for(gate, 2, workers)
        assert len({p.name.split("-")[1] for p in started}) == 2
        assert scalar(url, "SELECT count(*) FROM index_chunks") == 0
        (gate / "go").touch()
        results = [finished(w) for w in workers]
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    counts = [r["records"] for r in results]
    print(f"\n{records} records; chunked per worker: {counts}")
    assert sum(counts) == records and all(c > 0 for c in counts)  # each record once
    assert chunk_rows(url) == made  # the SQLite indexer's chunks, each once
    assert_current(url)
    assert all(c["vectors"] == 0 for r in results for c in r["counts"])  # texts kept theirs


def test_a_chunker_killed_mid_batch_loses_and_doubles_nothing(
    waiting: tuple[str, Counter[tuple[object, ...]]], tmp_path: Path
) -> None:
    url, made = waiting
    records = scalar(url, "SELECT count(*) FROM records")
    gate = tmp_path / "gate"
    gate.mkdir()
    worker = spawn(url, gate, free=2)  # two batches committed, the third held
    try:
        wait_for(gate, 1, [worker])
        assert scalar(url, "SELECT count(*) FROM index_records") == 2 * BATCH
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=WAIT_S)
    finally:
        worker.kill()
        worker.wait()
    assert worker.returncode == -signal.SIGKILL
    assert scalar(url, "SELECT count(*) FROM index_records") == 2 * BATCH
    again = run_worker(url, MODELS)
    assert again.records == records - 2 * BATCH  # the killed batch again, nothing twice
    assert chunk_rows(url) == made
    assert_current(url)


def test_changed_created_and_deleted_records_are_followed(copied: str) -> None:
    assert run_worker(copied, MODELS).records == 0  # the copy is current
    archive = open_archive(copied)
    try:
        first, second = (
            RecordKey(str(r[0]), int(r[1]))
            for r in connect(copied)
            .execute("SELECT section_tipo, section_id FROM records WHERE section_tipo = 'oh1' "
                     "ORDER BY section_id LIMIT 2")
            .fetchall()
        )  # fmt: skip
        label = archive.section("oh1").label_field
        assert label is not None
        archive.update_record(
            first, {label: [{"lang": "lg-eng", "value": "Orchards by the canal"}]}
        )
        archive.delete_record(second)
        created = archive.create_record("oh1", {label: [{"lang": "lg-eng", "value": "Kilns"}]})
    finally:
        archive.close()
    result = run_worker(copied, MODELS)
    assert result.records == 3 and result.vectors > 0  # new texts embedded after chunking
    with connect(copied) as conn:
        for key, word, found in ((first, "Orchards", 1), (second, "%", 0), (created, "Kilns", 1)):
            row = conn.execute(
                "SELECT count(*) FROM index_chunks WHERE section_tipo = %s AND section_id = %s "
                "AND label LIKE %s",
                (key.section_tipo, key.section_id, f"%{word}%"),
            ).fetchone()
            assert row is not None and (as_int(row[0]) > 0) == bool(found), key
    assert_current(copied)


def test_a_chunker_without_the_restricted_right_leaves_restricted_records(
    pg_server: PgServer, copied: str
) -> None:
    db = database_name(copied)
    role = f"{db}_carles"
    with connect(copied, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-carles'")
        grant(conn, db, role, write=True)
    carles = pg_server.url(db, user=role, password="pw-carles")
    hidden = (
        "SELECT count(*) FROM records r JOIN sections s ON s.tipo = r.section_tipo "
        "WHERE coalesce(r.restricted, s.restricted, false)"
    )
    restricted = scalar(copied, hidden)
    assert restricted > 0
    rows_before = scalar(copied, "SELECT count(*) FROM index_records")
    chunks_before = chunk_rows(copied)
    # the records it cannot see are not orphans to it
    assert run_worker(carles, MODELS).records == 0
    assert scalar(copied, "SELECT count(*) FROM index_records") == rows_before
    assert chunk_rows(copied) == chunks_before
    archive = open_archive(carles)
    index = open_index(archive, MODELS)
    try:  # nor work to its index (whose background run would wake for nothing)
        assert not index.indexer.has_work()  # type: ignore[attr-defined]
        assert index.sync_lexical() == 0 and index.stats().pending == 0
    finally:
        index.close()
        archive.close()
    with connect(copied) as conn:
        conn.execute("DELETE FROM index_chunks")
        conn.execute("DELETE FROM index_records")
        conn.commit()
    records = scalar(copied, "SELECT count(*) FROM records")
    assert run_worker(carles, MODELS).records == records - restricted
    assert run_worker(copied, MODELS).records == restricted  # the owner does the rest
    assert chunk_rows(copied) == chunks_before
    assert_current(copied)


def test_the_background_run_follows_changes_made_elsewhere(
    copied: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record created on another workstation (another connection: no local listener hears
    it) is chunked and embedded by the shared index's background run."""
    monkeypatch.setattr(service, "FOLLOW_S", 0.05)
    archive = open_archive(copied)
    index = open_index(archive, MODELS)
    elsewhere = open_archive(copied)
    try:
        index.start()
        assert index.wait_idle(WAIT_S)
        assert index.search("kilns", mode="lexical") == []  # its own changes chunked: none
        label = elsewhere.section("oh1").label_field
        assert label is not None
        key = elsewhere.create_record("oh1", {label: [{"lang": "lg-eng", "value": "Kilns"}]})
        deadline = time.monotonic() + WAIT_S
        while index.stats().pending or not index.search("kilns", mode="lexical"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert [h.key for h in index.search("kilns", mode="lexical")] == [key]  # and embedded
    finally:
        index.close()
        elsewhere.close()
        archive.close()
    assert_current(copied)


def test_a_record_deleted_during_a_walk_is_forgotten_before_it_ends(
    waiting: tuple[str, Counter[tuple[object, ...]]],
) -> None:
    """Orphans are looked for at the start of each round, not before every batch: one made
    mid-round is taken in the round from the start that ends the walk."""
    url, _ = waiting
    archive = open_archive(url)
    try:
        walk = chunker.ChunkWalk(chunker.archive_shapes(archive), size=BATCH)
        with connect(url) as conn:
            first = walk.step(conn)
            assert first.records == BATCH and first.orphans == 0
            gone = conn.execute(
                "SELECT section_tipo, section_id FROM index_records ORDER BY section_tipo, "
                "section_id LIMIT 1"
            ).fetchone()
            assert gone is not None
            archive.delete_record(RecordKey(str(gone[0]), as_int(gone[1])))
            rest = walk.run(conn)
        assert rest.orphans == 1
        assert rest.records == scalar(url, "SELECT count(*) FROM records") - BATCH + 1
    finally:
        archive.close()
    assert_current(url)
