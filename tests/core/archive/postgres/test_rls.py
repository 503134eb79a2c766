"""Row-level security with real roles on the real server: who reads the restricted section,
who may write, and nobody changes the audit log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from app.core.archive import open_archive
from app.core.archive.postgres.checksum import archive_digest
from app.core.archive.postgres.connect import connect, database_name, translate
from app.core.archive.postgres.roles import grant, group_roles, revoke, rights
from app.core.archive.postgres.transfer import copy_archive
from app.core.errors import ArchiveError
from tests.postgres_server import PgServer

RESTRICTED_COUNT = "SELECT count(*) FROM records WHERE section_tipo = 'oh1'"


@pytest.fixture
def people(pg_server: PgServer, demo_on_postgres: str) -> Iterator[dict[str, str]]:
    """Login roles on the demo archive: ana reads, berta also reads restricted records, carles
    also writes; each name's URL."""
    db = database_name(demo_on_postgres)
    urls = {}
    with connect(demo_on_postgres, autocommit=True) as conn:
        for who, restricted, write in (("ana", False, False), ("berta", True, False),
                                       ("carles", False, True)):  # fmt: skip
            role = f"{db}_{who}"
            conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{who}'")
            grant(conn, db, role, restricted=restricted, write=write)
            urls[who] = pg_server.url(db, user=role, password=f"pw-{who}")
    yield urls


def count(url: str, query: str) -> int:
    with connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


def test_psql_without_the_restricted_right_counts_no_restricted_record(
    pg_server: PgServer, people: dict[str, str], demo_on_postgres: str
) -> None:
    without = pg_server.psql(people["ana"], RESTRICTED_COUNT)
    with_right = pg_server.psql(people["berta"], RESTRICTED_COUNT)
    owner = pg_server.psql(demo_on_postgres, RESTRICTED_COUNT)
    print(f"\npsql as ana (no restricted right): {without.stdout.strip()}")
    print(f"psql as berta (restricted right): {with_right.stdout.strip()}")
    assert (without.returncode, without.stdout) == (0, "0\n")
    assert (with_right.returncode, with_right.stdout) == (0, "42\n")
    assert owner.stdout == "42\n"
    assert count(people["ana"], "SELECT count(*) FROM records") == 192 - 42


def test_what_carries_restricted_text_is_hidden_too(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    queries = {
        "chunks": "SELECT count(*) FROM index_chunks WHERE section_tipo = 'oh1'",
        "links": "SELECT count(*) FROM links WHERE from_section = 'oh1' OR to_section = 'oh1'",
        "vectors": "SELECT count(*) FROM index_vectors",
    }
    seen = {name: count(people["ana"], q) for name, q in queries.items()}
    full = {name: count(people["berta"], q) for name, q in queries.items()}
    assert seen["chunks"] == 0 and full["chunks"] > 0
    assert seen["links"] == 0 and full["links"] > 0
    assert 0 < seen["vectors"] < full["vectors"] == count(demo_on_postgres, queries["vectors"])
    for table in ("media", "media_files", "media_parts", "index_records"):
        assert count(people["ana"], f"SELECT count(*) FROM {table}") == count(
            demo_on_postgres, f"SELECT count(*) FROM {table}"
        )  # the demo's media belong to open records


def test_without_the_write_right_the_server_refuses_an_insert(people: dict[str, str]) -> None:
    insert = (
        "INSERT INTO records(section_tipo, section_id, data, created_at, updated_at) "
        "VALUES ('rsc197', 9999, '{}', now(), now())"
    )
    for who in ("ana", "berta"):
        with (
            connect(people[who]) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege) as no,
        ):
            conn.execute(insert)
        assert translate(no.value, people[who]).code == "archive.pg_permission"
    with connect(people["carles"]) as conn:
        conn.execute(insert)
        conn.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # RLS: not into oh1
            conn.execute(insert.replace("rsc197", "oh1"))


def test_nobody_updates_or_deletes_an_audit_row(
    people: dict[str, str], demo_on_postgres: str
) -> None:
    with connect(people["carles"]) as conn:
        conn.execute("INSERT INTO audit(at, action, actor) VALUES (now(), 'note', 'carles')")
        conn.commit()
        for change in ("UPDATE audit SET actor = 'x'", "DELETE FROM audit"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(change)
            conn.rollback()
    with connect(demo_on_postgres) as conn:  # the owner: the trigger refuses
        for change in ("UPDATE audit SET actor = 'x'", "DELETE FROM audit", "TRUNCATE audit"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused:
                conn.execute(change)
            assert "append-only" in str(refused.value)
            conn.rollback()
        assert conn.execute("SELECT actor FROM audit").fetchall() == [("carles",)]


def test_revoke_takes_the_rights_back(
    pg_server: PgServer, people: dict[str, str], demo_on_postgres: str
) -> None:
    db = database_name(demo_on_postgres)
    with connect(demo_on_postgres, autocommit=True) as conn:
        assert revoke(conn, db, f"{db}_berta", restricted=True).restricted is False
        assert revoke(conn, db, f"{db}_ana") == rights(conn, db, f"{db}_ana")
        assert rights(conn, db, f"{db}_ana").reader is False
        with pytest.raises(ArchiveError) as unknown:
            grant(conn, db, "nobody_at_all")
    assert unknown.value.code == "archive.pg_role_unknown"
    assert pg_server.psql(people["berta"], RESTRICTED_COUNT).stdout == "0\n"
    with pytest.raises(ArchiveError) as refused:
        connect(people["ana"])  # no CONNECT on the database any more
    assert refused.value.code == "archive.pg_permission"


def test_two_archives_on_one_server_have_their_own_roles() -> None:
    assert group_roles("arxiu").restricted == "arxiu_restricted"
    assert group_roles("Tate-2024").reader == "tate_2024_reader"


def test_a_role_that_cannot_see_every_row_cannot_copy_or_checksum(
    people: dict[str, str], demo_on_postgres: str, tmp_path: Path
) -> None:
    for run in (lambda: copy_archive(people["ana"], str(tmp_path / "c")),
                lambda: archive_digest(people["ana"])):  # fmt: skip
        with pytest.raises(ArchiveError) as refused:
            run()
        assert refused.value.code == "archive.copy_partial_source"
        with pytest.raises(ArchiveError) as refused:  # berta: restricted, but no plan key
            archive_digest(people["berta"])
        assert refused.value.code == "archive.copy_partial_source"
    assert not (tmp_path / "c").exists()
    db = database_name(demo_on_postgres)
    with connect(demo_on_postgres, autocommit=True) as conn:
        grant(conn, db, f"{db}_berta", write=True)
    assert archive_digest(people["berta"]).sha256 == archive_digest(demo_on_postgres).sha256


async def test_each_archivist_keeps_their_own_conversations(
    pg_server: PgServer, people: dict[str, str], demo_on_postgres: str
) -> None:
    archives = {who: open_archive(url) for who, url in people.items()}
    archives["owner"] = open_archive(demo_on_postgres)
    try:
        for who, archive in archives.items():  # ana only reads: a conversation is hers still
            await archive.save_conversation({"id": f"c-{who}", "title": who})
        for who, archive in archives.items():
            assert [c["id"] for c in await archive.conversations()] == [f"c-{who}"]
            assert (await archive.conversation("c-berta") is None) is (who != "berta")
        await archives["ana"].delete_conversation("c-berta")  # not hers: nothing happens
        assert await archives["berta"].conversation("c-berta") is not None
        await archives["berta"].save_conversation({"id": "c-berta", "title": "renamed"})
        assert (await archives["berta"].conversation("c-berta") or {})["title"] == "renamed"
    finally:
        for archive in archives.values():
            archive.close()
    mine = "SELECT count(*) FROM conversations"
    assert pg_server.psql(people["ana"], mine).stdout == "1\n"  # a plain SQL client too
    assert pg_server.psql(people["berta"], mine).stdout == "1\n"  # the restricted right: 1
    assert pg_server.psql(demo_on_postgres, mine).stdout == "4\n"  # the owner sees them all
    db = database_name(demo_on_postgres)
    with connect(people["ana"]) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(  # nobody writes a conversation in another archivist's name
            "INSERT INTO conversations(id, created_at, updated_at, owner) "
            f"VALUES ('forged', now(), now(), '{db}_berta')"
        )
