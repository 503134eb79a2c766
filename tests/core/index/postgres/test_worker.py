"""``arxiu index --worker`` on the real server: worker *processes* on one archive embed every
text once, a worker killed with SIGKILL mid-batch loses nothing and doubles nothing, row-level
security and the write right hold, and bad URLs get their codes.

The archive is the indexed demo copied to the server with its vectors deleted, so every chunk
waits; the models are two hashing embedders (fast, deterministic). A worker process is made
slow deterministically by a gate: its embedder writes a marker file when it starts an embed
call, then waits for a ``go`` file (the test creates it, or never does).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.roles import grant
from app.core.archive.postgres.transfer import copy_archive
from app.core.errors import ArchiveError, IndexError_
from app.core.index import HashingEmbedder
from app.core.index.embedders import Vectors
from app.core.index.postgres.values import as_int, as_str, as_vector
from app.core.index.postgres.worker import WorkerResult, run_worker
from tests.postgres_server import PgServer

ROOT = Path(__file__).resolve().parents[4]
MODELS = (HashingEmbedder(64), HashingEmbedder(32, salt="worker"))
MODEL_IDS = [m.model_id for m in MODELS]
WAIT_S = 60.0
"""How long the test waits for a worker process to reach a gate or to finish (a failure)."""


class Gate:
    """Embed calls numbered across the child's models: after ``free`` calls, each call writes
    ``started-<pid>-<n>`` into ``folder`` and waits until ``folder/go`` exists."""

    def __init__(self, folder: Path, free: int) -> None:
        self.folder, self.free, self.calls = folder, free, 0

    def enter(self) -> None:
        self.calls += 1
        if self.calls <= self.free:
            return
        (self.folder / f"started-{os.getpid()}-{self.calls}").touch()
        while not (self.folder / "go").exists():
            time.sleep(0.01)


class GatedEmbedder:
    """A model whose every embed call passes the child's :class:`Gate` first (if any), and
    that counts the texts it embeds (the work done, whatever reached the table)."""

    def __init__(self, inner: HashingEmbedder, gate: Gate | None) -> None:
        self.inner, self.gate, self.texts = inner, gate, 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> Vectors:
        if self.gate is not None:
            self.gate.enter()
        self.texts += len(texts)
        return self.inner.embed(texts)


def child_main(argv: list[str]) -> None:
    """A worker process: ``URL BATCH [GATE_FOLDER FREE_CALLS]``; prints its result and the
    texts each model embedded as JSON."""
    url, batch = argv[0], int(argv[1])
    gate = Gate(Path(argv[2]), int(argv[3])) if len(argv) > 2 else None
    embedders = [GatedEmbedder(m, gate) for m in MODELS]
    result = run_worker(url, embedders, batch=batch)
    embedded = {e.model_id: e.texts for e in embedders}
    print(json.dumps({"result": asdict(result), "embedded": embedded}))


def spawn(url: str, batch: int, gate: Path | None = None, free: int = 0) -> subprocess.Popen[str]:
    """Start a worker process (this module's :func:`child_main`)."""
    code = "import sys; from tests.core.index.postgres.test_worker import child_main; "
    code += "child_main(sys.argv[1:])"
    args = [url, str(batch), *([str(gate), str(free)] if gate else [])]
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(worker: subprocess.Popen[str]) -> dict[str, int]:
    """The texts a worker process embedded per model, once it has ended well (checked against
    the vectors it says it wrote: with every text claimed once, they are the same)."""
    out, err = worker.communicate(timeout=WAIT_S)
    assert worker.returncode == 0, err
    said = json.loads(out.strip().splitlines()[-1])
    embedded = {str(m): int(n) for m, n in said["embedded"].items()}
    assert {c["model"]: c["vectors"] for c in said["result"]["counts"]} == embedded
    return embedded


def wait_for(folder: Path, count: int, workers: list[subprocess.Popen[str]]) -> list[Path]:
    """The gate markers once ``count`` are there (fails when a worker ends or time runs out)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = sorted(folder.glob("started-*"))
        if len(found) >= count:
            return found
        for worker in workers:
            assert worker.poll() is None, worker.communicate()[1]
        time.sleep(0.02)
    raise AssertionError(f"only {len(list(folder.glob('started-*')))} of {count} gates reached")


def scalar(url: str, query: str, args: tuple[object, ...] = ()) -> int:
    with connect(url) as conn:
        row = conn.execute(query, args).fetchone()
    assert row is not None
    return as_int(row[0])


def texts(url: str) -> int:
    """Distinct chunk texts of the archive (what each model needs one vector for)."""
    return scalar(url, "SELECT count(DISTINCT content_hash) FROM index_chunks")


def assert_exactly_once(url: str) -> None:
    """Every chunk has one vector per model, and no (text, model) has two rows."""
    hashes = texts(url)
    assert scalar(url, "SELECT count(*) FROM index_vectors") == hashes * len(MODELS)
    most = scalar(
        url,
        "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM index_vectors "
        "GROUP BY content_hash, model) per_text",
    )
    assert most == 1
    for model in MODEL_IDS:
        lacking = scalar(
            url,
            "SELECT count(*) FROM index_chunks c WHERE NOT EXISTS (SELECT 1 FROM index_vectors "
            "v WHERE v.content_hash = c.content_hash AND v.model = %s)",
            (model,),
        )
        assert lacking == 0, model


@pytest.fixture
def queued(indexed_demo_dir: Path, pg_database: str) -> Iterator[tuple[str, dict[str, Vectors]]]:
    """The indexed demo copied to a fresh database, with no vector at all (every chunk
    waits), and the hashing-64 vectors the SQLite indexer had made, by text."""
    copy_archive(str(indexed_demo_dir), pg_database)
    with connect(pg_database) as conn:
        rows = conn.execute(
            "SELECT content_hash, vector FROM index_vectors WHERE model = %s", (MODEL_IDS[0],)
        ).fetchall()
        conn.execute("DELETE FROM index_vectors")
        conn.commit()
    yield pg_database, {as_str(r[0]): as_vector(r[1]) for r in rows}


def test_two_worker_processes_embed_every_text_exactly_once(
    queued: tuple[str, dict[str, Vectors]], tmp_path: Path
) -> None:
    url, from_sqlite = queued
    hashes = texts(url)
    assert hashes > 200 and len(from_sqlite) == hashes
    gate = tmp_path / "gate"
    gate.mkdir()
    workers = [spawn(url, 16, gate, free=0) for _ in range(2)]
    try:
        # both hold a claimed batch at once (SKIP LOCKED: neither waits for the other's rows)
        started = wait_for(gate, 2, workers)
        assert len({p.name.split("-")[1] for p in started}) == 2
        assert scalar(url, "SELECT count(*) FROM index_vectors") == 0
        (gate / "go").touch()
        counts = [finished(w) for w in workers]
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    print(f"\n{hashes} texts, {len(MODELS)} models; texts embedded per worker: {counts}")
    for model in MODEL_IDS:
        assert sum(c[model] for c in counts) == hashes, model  # each text embedded once
    assert all(sum(c.values()) > 0 for c in counts)
    assert_exactly_once(url)
    with connect(url) as conn:  # the vectors are those the SQLite indexer made
        rows = conn.execute(
            "SELECT content_hash, vector FROM index_vectors WHERE model = %s", (MODEL_IDS[0],)
        ).fetchall()
    assert len(rows) == hashes
    for content_hash, vector in rows:
        assert np.array_equal(as_vector(vector), from_sqlite[as_str(content_hash)])


def test_a_worker_killed_mid_batch_loses_and_doubles_nothing(
    queued: tuple[str, dict[str, Vectors]], tmp_path: Path
) -> None:
    url, _ = queued
    hashes, batch = texts(url), 25
    gate = tmp_path / "gate"
    gate.mkdir()
    # calls 1-2: batch 1 (both models), committed; call 4 blocks in batch 2, after call 3 has
    # written batch 2's vectors of the first model (not committed)
    worker = spawn(url, batch, gate, free=3)
    try:
        wait_for(gate, 1, [worker])
        holding = scalar(
            url,
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE a.datname = current_database() AND l.locktype = 'transactionid' "
            "AND a.state = 'idle in transaction'",
        )
        assert holding >= 1  # the worker sits in its open transaction
        assert scalar(url, "SELECT count(*) FROM index_vectors") == batch * len(MODELS)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=WAIT_S)
    finally:
        worker.kill()
        worker.wait()
    assert worker.returncode == -signal.SIGKILL
    committed = scalar(url, "SELECT count(*) FROM index_vectors")
    assert committed == batch * len(MODELS)  # batch 2's written rows rolled back
    restarted = spawn(url, batch)
    counts = finished(restarted)
    print(f"\n{hashes} texts; committed before the kill: {committed}; restart: {counts}")
    for model in MODEL_IDS:
        assert counts[model] == hashes - batch, model  # the killed batch again, nothing twice
    assert_exactly_once(url)


def test_a_worker_without_the_restricted_right_leaves_the_restricted_chunks(
    pg_server: PgServer, queued: tuple[str, dict[str, Vectors]]
) -> None:
    url, _ = queued
    db = database_name(url)
    role = f"{db}_carles"
    with connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-carles'")
        grant(conn, db, role, write=True)
    restricted = scalar(
        url,
        "SELECT count(DISTINCT content_hash) FROM index_chunks WHERE section_tipo = 'oh1' "
        "AND content_hash NOT IN (SELECT content_hash FROM index_chunks "
        "WHERE section_tipo != 'oh1')",
    )
    assert restricted > 0
    result = run_worker(pg_server.url(db, user=role, password="pw-carles"), MODELS, batch=40)
    assert [c.vectors for c in result.counts] == [texts(url) - restricted] * len(MODELS)
    lacking = scalar(
        url,
        "SELECT count(DISTINCT c.content_hash) FROM index_chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM index_vectors v WHERE v.content_hash = c.content_hash AND v.model = %s)",
        (MODEL_IDS[0],),
    )
    assert lacking == restricted
    owner = run_worker(url, MODELS, batch=40)
    assert owner.vectors == restricted * len(MODELS) and owner.batches >= 1
    assert_exactly_once(url)
    again = run_worker(url, MODELS)
    assert (again.vectors, again.batches, again.chunks) == (0, 0, 0)


def test_follow_embeds_chunks_that_arrive_later(queued: tuple[str, dict[str, Vectors]]) -> None:
    url, _ = queued
    stop = threading.Event()
    seen: list[WorkerResult] = []
    runner = threading.Thread(
        target=lambda: seen.append(
            run_worker(url, MODELS[:1], batch=500, follow=True, poll_s=0.05, stop=stop)
        )
    )
    runner.start()
    try:
        deadline = time.monotonic() + WAIT_S
        while scalar(url, "SELECT count(*) FROM index_vectors") < texts(url):
            assert time.monotonic() < deadline and runner.is_alive()
            time.sleep(0.05)
        with connect(url) as conn:
            conn.execute(
                "INSERT INTO index_chunks(section_tipo, section_id, field_tipo, lang, position, "
                "text, content_hash) VALUES ('rsc197', 1, 'x', 'lg-eng', 99, 'a new passage', "
                "'new-hash')"
            )
            conn.commit()
        while scalar(url, "SELECT count(*) FROM index_vectors WHERE content_hash = 'new-hash'") < 1:
            assert time.monotonic() < deadline and runner.is_alive()
            time.sleep(0.05)
    finally:
        stop.set()
        runner.join(WAIT_S)
    assert not runner.is_alive()
    assert seen[0].counts[0].vectors == texts(url)


def test_a_reader_may_not_work(pg_server: PgServer, queued: tuple[str, dict[str, Vectors]]) -> None:
    url, _ = queued
    db = database_name(url)
    role = f"{db}_ana"
    with connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-ana'")
        grant(conn, db, role, restricted=True)
    with pytest.raises(ArchiveError) as refused:
        run_worker(pg_server.url(db, user=role, password="pw-ana"), MODELS)
    assert refused.value.code == "archive.pg_permission"
    assert scalar(url, "SELECT count(*) FROM index_vectors") == 0


def test_bad_urls_and_arguments_have_codes(pg_server: PgServer) -> None:
    wrong = f"postgresql://postgres:wrong@127.0.0.1:{pg_server.port}/postgres"
    cases = {
        "mysql://x@127.0.0.1/db": "archive.pg_url_invalid",
        wrong: "archive.pg_auth_failed",
        "postgresql://x@127.0.0.1:1/db": "archive.pg_unreachable",
    }
    for url, code in cases.items():
        with pytest.raises(ArchiveError) as refused:
            run_worker(url, MODELS)
        assert refused.value.code == code, url
    with pytest.raises(IndexError_) as bad:
        run_worker(pg_server.url(), [MODELS[0], MODELS[0]])
    assert bad.value.code == "index.worker_no_models"
    with pytest.raises(IndexError_) as bad:
        run_worker(pg_server.url(), MODELS, batch=0)
    assert bad.value.code == "index.worker_bad_batch"
