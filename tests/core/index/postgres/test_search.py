"""Search in the PostgreSQL server against the SQLite search of the same archive: the dense
lists are the same (exact search, the same scores), the fusion and ranking are the same code,
the lexical column folds accents and stems by language, filters hold inside the server."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.archive.model import RecordKey
from app.core.archive.postgres import schema
from app.core.archive.postgres.connect import connect, database_name, ensure_vector
from app.core.archive.postgres.roles import grant
from app.core.archive.postgres.schema import create_tables
from app.core.archive.postgres.transfer import copy_archive
from app.core.archive.store import Archive
from app.core.errors import ArchiveError
from app.core.index import Index, SearchFilter, feedback
from app.core.index.hits import SearchHit, SearchMode
from app.core.index.postgres import PgSearchEngine, dense, open_search
from app.core.index.postgres.lexical import search as lexical_search
from tests.core.index.postgres.conftest import EMBEDDER
from tests.postgres_server import PgServer

QUERIES = (
    "famílies que van marxar quan van construir el pantà",
    "familias que se fueron cuando construyeron el pantano",
    "families who left when the reservoir was built",
    "Roman coins",
)


@pytest.fixture(scope="module")
def engine(demo_url: str) -> Iterator[PgSearchEngine]:
    found = open_search(demo_url, [EMBEDDER])
    yield found
    found.close()


def _keys_scores(hits: list[SearchHit]) -> list[tuple[RecordKey, float]]:
    return [(h.key, round(h.score, 5)) for h in hits]


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("query", QUERIES)
def test_dense_search_ranks_as_on_sqlite(
    engine: PgSearchEngine, sqlite_demo: tuple[Archive, Index], query: str, grouped: bool
) -> None:
    _, index = sqlite_demo
    on_sqlite = index.search(query, k=20, mode="dense", group_by_record=grouped)
    on_postgres = engine.search(query, k=20, mode="dense", group_by_record=grouped)
    assert len(on_sqlite) == 20
    assert [s for _, s in _keys_scores(on_postgres)] == [s for _, s in _keys_scores(on_sqlite)]
    last = round(on_sqlite[-1].score, 5)  # ties at the cut-off may be either chunk
    assert _above(on_postgres, last) == _above(on_sqlite, last)


def _above(hits: list[SearchHit], cut: float) -> set[tuple[int | None, float]]:
    return {(h.chunk_id, round(h.score, 5)) for h in hits if round(h.score, 5) > cut}


@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_search_mostly_agrees_with_sqlite(
    engine: PgSearchEngine, sqlite_demo: tuple[Archive, Index], query: str
) -> None:
    """The lexical scores differ (``ts_rank`` against BM25), the rest is one code: the same
    records lead."""
    _, index = sqlite_demo
    on_sqlite = {h.key for h in index.search(query, k=10, group_by_record=True)}
    on_postgres = {h.key for h in engine.search(query, k=10, group_by_record=True)}
    assert len(on_sqlite & on_postgres) >= 7


def test_lexical_search_folds_accents(engine: PgSearchEngine) -> None:
    with engine.pool.connection() as conn:
        accented = lexical_search(conn, "famílies pantà", 50)
        plain = lexical_search(conn, "FAMILIES PANTA", 50)
    assert accented and accented == plain


def test_lexical_search_stems_each_language(pg_database: str, demo_index_dir: Path) -> None:
    """A Catalan, Spanish or English chunk is found by another form of its words; a chunk of
    another language (``simple``) only by the word itself."""
    copy_archive(str(demo_index_dir), pg_database)
    texts = {
        "lg-cat": "Les famílies marxaren del poble",
        "lg-spa": "Las familias se marcharon del pueblo",
        "lg-eng": "The families were leaving the village",
        "lg-fra": "Les familles quittaient le village",
    }
    with connect(pg_database) as conn:
        ids = {}
        for lang, text in texts.items():
            row = conn.execute(
                "INSERT INTO index_chunks (section_tipo, section_id, field_tipo, lang, position, "
                "text, content_hash) VALUES ('tp1', 9999, 'f', %s, 0, %s, %s) RETURNING id",
                (lang, text, f"probe-{lang}"),
            ).fetchone()
            assert row is not None
            ids[lang] = row[0]
        conn.commit()
        found = {
            word: {cid for cid, _ in lexical_search(conn, word, 500)}
            for word in ("marxar", "marchar", "leave", "quitter", "quittaient")
        }
    assert ids["lg-cat"] in found["marxar"]
    assert ids["lg-spa"] in found["marchar"]
    assert ids["lg-eng"] in found["leave"]
    assert ids["lg-fra"] not in found["quitter"] and ids["lg-fra"] in found["quittaient"]


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_section_and_egress_filters_hold_in_the_server(
    engine: PgSearchEngine, mode: SearchMode
) -> None:
    query = QUERIES[0]
    only = engine.search(query, k=30, mode=mode, filter=SearchFilter(sections=("oh1",)))
    assert only and {h.key.section_tipo for h in only} == {"oh1"}
    egress = engine.search(query, k=30, mode=mode, filter=SearchFilter(exclude_restricted=True))
    assert egress and "oh1" not in {h.key.section_tipo for h in egress}
    record = RecordKey("oh1", 2)
    one = engine.search(query, k=30, mode=mode, filter=SearchFilter(records=(record,)))
    assert one and {h.key for h in one} == {record}


def test_a_reader_without_the_restricted_right_finds_no_restricted_chunk(
    pg_server: PgServer, demo_url: str
) -> None:
    db = database_name(demo_url)
    role = f"{db}_reader_ana"
    with connect(demo_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-ana'")
        grant(conn, db, role)
    reader = open_search(pg_server.url(db, user=role, password="pw-ana"), [EMBEDDER])
    owner = open_search(demo_url, [EMBEDDER])
    try:
        for mode in ("dense", "lexical", "hybrid"):
            theirs = reader.search(QUERIES[0], k=30, mode=mode)
            assert theirs and "oh1" not in {h.key.section_tipo for h in theirs}
            assert "oh1" in {h.key.section_tipo for h in owner.search(QUERIES[0], k=30, mode=mode)}
    finally:
        reader.close()
        owner.close()


def test_the_feedback_centroid_is_the_sqlite_one(
    engine: PgSearchEngine, sqlite_demo: tuple[Archive, Index]
) -> None:
    archive, _ = sqlite_demo
    keys = [RecordKey("oh1", 1), RecordKey("oh1", 4), RecordKey("tp1", 6)]
    with archive.db.reading() as conn:
        on_sqlite = feedback.centroid(conn, EMBEDDER.model_id, keys)
    with engine.pool.connection() as conn:
        on_postgres = dense.centroid(conn, EMBEDDER.model_id, keys)
        assert dense.centroid(conn, EMBEDDER.model_id, [RecordKey("oh1", 999_999)]) is None
    assert on_sqlite is not None and on_postgres is not None
    assert np.allclose(on_postgres, on_sqlite, atol=1e-6)


def test_an_archive_copied_before_the_lexical_column_gets_it_from_its_owner(
    pg_server: PgServer, pg_database: str, demo_index_dir: Path
) -> None:
    copy_archive(str(demo_index_dir), pg_database)
    db = database_name(pg_database)
    role = f"{db}_reader_bo"
    with connect(pg_database, autocommit=True) as conn:
        conn.execute("ALTER TABLE index_chunks DROP COLUMN lexical")
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-bo'")
        grant(conn, db, role)
    reader = open_search(pg_server.url(db, user=role, password="pw-bo"), [EMBEDDER])
    try:
        with pytest.raises(ArchiveError) as refused:
            reader.search("pantà", mode="lexical")
        assert refused.value.code == "archive.pg_no_lexical"
        owner = open_search(pg_database, [EMBEDDER])
        try:
            assert owner.search("pantà", mode="lexical")
        finally:
            owner.close()
        assert reader.search("pantà", mode="lexical")
    finally:
        reader.close()


def test_lexical_scores_are_fts5s_bm25_over_the_lexemes(pg_database: str) -> None:
    """FTS5's formula on hand-counted lexemes: a label hit counts twice, a chunk's length is its
    number of words (as FTS5 counts them, a repeated word twice), the idf is FTS5's."""
    with connect(pg_database, vector=False) as conn:
        ensure_vector(conn)
        create_tables(conn)
        texts = [
            ("", "reservoir reservoir dam"), ("reservoir", "town"), ("", "town village"),
            ("", "village"), ("", "mill"), ("", "bridge road"),
        ]  # fmt: skip
        for n, (label, text) in enumerate(texts, start=1):
            conn.execute(
                "INSERT INTO index_chunks (id, section_tipo, section_id, field_tipo, lang, "
                "position, label, text, content_hash) "
                "VALUES (%s, 's', %s, 'f', 'lg-nolan', 0, %s, %s, %s)",
                (n, n, label, text, f"h{n}"),
            )
        conn.commit()
        found = dict(lexical_search(conn, "reservoir", 10, lang="lg-eng"))
    lengths = [3, 2, 2, 1, 1, 2]  # words of each chunk, label and text
    mean = sum(lengths) / len(lengths)
    idf = math.log((6 - 2 + 0.5) / (2 + 0.5))

    def bm25(f: float, dl: int) -> float:
        return idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * dl / mean))

    assert set(found) == {1, 2}
    assert found[1] == pytest.approx(bm25(2, 3)) and found[2] == pytest.approx(bm25(2, 2))


def test_an_archive_with_the_slower_lexical_column_is_searched_and_its_owner_remakes_it(
    pg_server: PgServer,
    pg_database: str,
    demo_index_dir: Path,
) -> None:
    """The column of the version before (``pg_0004_lexical_spaces``: the same lexemes, the
    fold's table not led by the ASCII characters) is searched as it is by every role; its
    owner's first search makes the faster one, with the same results."""
    copy_archive(str(demo_index_dir), pg_database)
    db = database_name(pg_database)
    role = f"{db}_reader_cel"
    with connect(pg_database, autocommit=True) as conn:
        with conn.transaction():
            for statement in schema.lexical_sql(first=""):
                conn.execute(statement.encode())
            conn.execute("DELETE FROM _migrations WHERE name = %s", (schema.LEXICAL_NAME,))
            conn.execute("INSERT INTO _migrations(name) VALUES (%s)", (schema.SLOWER_LEXICAL_NAME,))
        assert schema.has_lexical(conn) and not schema.lexical_is_latest(conn)
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-cel'")
        grant(conn, db, role)
    reader = open_search(pg_server.url(db, user=role, password="pw-cel"), [EMBEDDER])
    try:
        before = _keys_scores(reader.search("pantà", mode="lexical"))
        assert before
        with connect(pg_database) as conn:
            assert not schema.lexical_is_latest(conn)  # a reader does not remake it
        owner = open_search(pg_database, [EMBEDDER])
        try:
            assert owner.search("pantà", mode="lexical")
        finally:
            owner.close()
        with connect(pg_database) as conn:
            assert schema.lexical_is_latest(conn)
    finally:
        reader.close()
    again = open_search(pg_server.url(db, user=role, password="pw-cel"), [EMBEDDER])
    try:
        assert _keys_scores(again.search("pantà", mode="lexical")) == before  # the same lexemes
    finally:
        again.close()
