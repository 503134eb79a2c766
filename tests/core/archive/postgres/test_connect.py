"""Opening a PostgreSQL archive: coded errors for what a person can fix, ``sslmode`` honoured,
the pool, the schema's names as on SQLite, and vectors searched exactly and with IVFFlat (never
HNSW here: its build dies with SIGILL on this CPU)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.archive.postgres.connect import connect, open_pool, redact
from app.core.archive.postgres.tables import MEDIA_FILES, TABLES
from app.core.archive.postgres.transfer import copy_archive
from app.core.errors import ArchiveError
from tests.postgres_server import PgServer


def refused(url: str) -> ArchiveError:
    with pytest.raises(ArchiveError) as error:
        connect(url)
    assert "pw-secret" not in str(error.value)
    return error.value


def test_coded_errors_for_a_bad_server_login_or_database(pg_server: PgServer) -> None:
    closed = pg_server.url().replace(f":{pg_server.port}/", ":1/")
    assert refused(closed).code == "archive.pg_unreachable"
    wrong = pg_server.url(password="pw-secret")
    assert refused(wrong).code == "archive.pg_auth_failed"
    assert refused(pg_server.url("no_such_db")).code == "archive.pg_no_database"
    assert refused("mysql://x@127.0.0.1/db").code == "archive.pg_url_invalid"
    assert redact(wrong) == wrong.replace("pw-secret", "***")


def test_sslmode_is_passed_to_the_server(pg_server: PgServer, pg_database: str) -> None:
    error = refused(pg_database + "?sslmode=require")  # the test server has no TLS
    assert error.code == "archive.pg_ssl"
    connect(pg_database + "?sslmode=disable", vector=False).close()


def test_a_database_without_pgvector(
    pg_server: PgServer, pg_database: str, indexed_demo_dir: Path
) -> None:
    assert refused(pg_database).code == "archive.pg_no_vector"
    name = pg_database.rsplit("/", 1)[1]
    with pg_server.admin(name) as conn:
        conn.execute(f"CREATE ROLE {name}_owner LOGIN CREATEROLE PASSWORD 'pw'")
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {name}_owner")
    owner = pg_server.url(name, user=f"{name}_owner", password="pw")
    with pytest.raises(ArchiveError) as error:  # pgvector is untrusted: a superuser's step
        copy_archive(str(indexed_demo_dir), owner)
    assert error.value.code == "archive.pg_no_vector"
    assert "may not create it" in error.value.message
    with pg_server.admin(name) as conn:
        conn.execute("CREATE EXTENSION vector")
    assert copy_archive(str(indexed_demo_dir), owner).totals["records"] == 192


def test_the_pool_checks_its_first_connection(pg_server: PgServer, demo_on_postgres: str) -> None:
    with pytest.raises(ArchiveError) as error:
        open_pool(pg_server.url(demo_on_postgres.rsplit("/", 1)[1], password="pw-secret"))
    assert error.value.code == "archive.pg_auth_failed"
    with open_pool(demo_on_postgres) as pool, pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM records").fetchone() == (192,)
        assert conn.execute("SHOW TimeZone").fetchone() == ("UTC",)


def test_the_tables_and_columns_are_those_of_sqlite(
    indexed_demo_dir: Path, demo_on_postgres: str
) -> None:
    with connect(demo_on_postgres) as conn:
        pg = {
            t.name: tuple(
                str(r[0])
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND is_generated = 'NEVER' ORDER BY ordinal_position",
                    (t.name,),
                )
            )
            for t in TABLES
        }
        generated = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND is_generated = 'ALWAYS'"
        ).fetchall()
    assert generated == [("index_chunks", "lexical")]  # the server's full-text column only
    with sqlite3.connect(indexed_demo_dir / "archive.db") as conn:
        for table in TABLES:
            assert pg[table.name] == table.names
            if table.name != MEDIA_FILES:
                sqlite = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table.name})"))
                assert sqlite == table.names


def test_vectors_exact_and_ivfflat(demo_on_postgres: str) -> None:
    query = (
        "SELECT content_hash FROM index_vectors WHERE model = 'hashing-64' "
        "ORDER BY vector::vector(64) <=> (SELECT vector FROM index_vectors "
        "WHERE model = 'hashing-64' ORDER BY content_hash LIMIT 1)::vector(64) LIMIT 5"
    )
    with connect(demo_on_postgres, autocommit=True) as conn:
        exact = [r[0] for r in conn.execute(query)]
        conn.execute(
            "CREATE INDEX vectors_hashing_64 ON index_vectors USING ivfflat "
            "((vector::vector(64)) vector_cosine_ops) WITH (lists = 4) WHERE model = 'hashing-64'"
        )
        conn.execute("SET ivfflat.probes = 4")
        plan = "\n".join(str(r[0]) for r in conn.execute("EXPLAIN " + query))
        approximate = [r[0] for r in conn.execute(query)]
    assert len(exact) == 5 and approximate[0] == exact[0]
    assert "vectors_hashing_64" in plan
